#include "app/views/heatmap_view.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <functional>

#include <imgui_internal.h>  // SetItemUsingMouseWheel: the wheel zooms instead of scrolling

#include "app/render/text_layer.h"
#include "app/ui/colormap.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
constexpr int kMaxLabelChars = 12;
constexpr float kSmallestLabel = 0.66f;  // label type shrinks to this fraction of the UI font
// Zoomed out, a pooled texel covers at least this many pixels: a single hot cell shows as a dot
// a projector still resolves, not a lone pixel.
constexpr double kMinTexelPixels = 2.0;
constexpr int kLayoutWeightsMax = 64 * 64;  // --layout lists the weights of matrices this small

std::uint64_t cache_key(const ColorScale& c) {
  std::uint64_t k = std::hash<float>{}(c.vmin) * 31 + std::hash<float>{}(c.vmax);
  return k * 131 + static_cast<std::uint64_t>(c.colormap) * 7 + (c.log ? 1 : 0);
}

ImTextureID texture_id(const GlFramebuffer& fb) {
  return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(fb.color().id()));
}

// Where everything goes this frame, in ImGui units.
struct Geometry {
  int rows = 0, cols = 0;
  float x0 = 0, y0 = 0;          // top-left of the grid's screen rectangle
  float grid_w = 0, grid_h = 0;  // the rectangle the visible cells fill
  float fit_cell = 0;            // cell size at zoom 1
  float cell = 0;                // cell size now
  float label_size = 0;          // font size of the axis labels
  int every = 1;                 // label every `every`-th token (1: all)
  float margin_left = 0, margin_top = 0;
  double max_zoom = 1;
  // Screen position of cell (i, j)'s top-left corner.
  float cell_x(double j, const HeatmapViewport& v) const {
    return x0 + static_cast<float>((j - v.col0) * cell);
  }
  float cell_y(double i, const HeatmapViewport& v) const {
    return y0 + static_cast<float>((i - v.row0) * cell);
  }
  double visible_rows(const HeatmapViewport& v) const { return rows / v.zoom; }
  double visible_cols(const HeatmapViewport& v) const { return cols / v.zoom; }
};
}  // namespace

void HeatmapViewport::clamp(int rows, int cols, double max_zoom) {
  zoom = std::clamp(zoom, 1.0, std::max(1.0, max_zoom));
  row0 = std::clamp(row0, 0.0, rows - rows / zoom);
  col0 = std::clamp(col0, 0.0, cols - cols / zoom);
}

void HeatmapViewport::zoom_about(double factor, double anchor_row, double anchor_col, int rows,
                                 int cols, double max_zoom) {
  const double old_zoom = zoom;
  zoom = std::clamp(zoom * factor, 1.0, std::max(1.0, max_zoom));
  // The anchor sits (anchor - row0) · cell from the edge; keep that distance on screen.
  const double k = old_zoom / zoom;
  row0 = anchor_row - (anchor_row - row0) * k;
  col0 = anchor_col - (anchor_col - col0) * k;
  clamp(rows, cols, max_zoom);
}

bool parse_heatmap_script(const std::string& text, HeatmapScript& out) {
  HeatmapScript s;
  char extra = 0;
  const int n = std::sscanf(text.c_str(), "%lf,%lf,%lf,%lf,%lf%c", &s.zoom, &s.row, &s.col,
                            &s.pan_rows, &s.pan_cols, &extra);
  if ((n != 3 && n != 5) || !(s.zoom >= 1.0) || !std::isfinite(s.row) || !std::isfinite(s.col))
    return false;
  out = s;
  return true;
}

void HeatmapView::UpdateLabels(const AttentionTrace& trace, int count) {
  const float font = ImGui::GetFontSize(), density = ImGui::GetIO().DisplayFramebufferScale.x;
  if (labels_for == &trace && labels_font == font && labels_density == density &&
      static_cast<int>(labels.size()) == count)
    return;
  labels.resize(static_cast<size_t>(count));
  label_widths.resize(static_cast<size_t>(count));
  max_label_w = 0;
  for (int i = 0; i < count; ++i) {
    labels[i] = i < static_cast<int>(trace.tokens.size())
                    ? token_label(trace, i, kMaxLabelChars)
                    : "?";
    label_widths[i] = text_layer().measure(labels[i], font).x;
    max_label_w = std::max(max_label_w, label_widths[i]);
  }
  labels_for = &trace;
  labels_font = font, labels_density = density;
}

void HeatmapView::Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  if (!ctx.weights || ctx.weights->size() == 0 || !ctx.trace || !ctx.shown) {
    ImGui::Dummy(size);
    dl->AddText(ImVec2(origin.x + 8, origin.y + 8), colors.text_dim,
                ctx.trace       ? "no tokens: type a sentence above"
                : ctx.app.model ? "computing\xE2\x80\xA6"
                                : "no model: choose one on the left");
    return;
  }
  const Matrix& w = *ctx.weights;
  const Tokens& tokens = ctx.trace->tokens;
  const float s = ctx.pixel_scale;
  const ColorScale& range = ctx.shown->scale;  // one colour scale per shown matrix
  Geometry g;
  g.rows = static_cast<int>(w.rows()), g.cols = static_cast<int>(w.cols());
  UpdateLabels(*ctx.trace, std::max(g.rows, g.cols));

  // --- Geometry: the grid fills what the labels and the colorbar leave, with square cells. ---
  const float font = ImGui::GetFontSize();
  const float pad = 6.0f;
  ImGui::PushFont(ctx.fonts.mono);
  const float mono = ImGui::GetFontSize();
  const float tick_w = ImGui::CalcTextSize("0.000").x;
  const float number_w = ImGui::CalcTextSize("0.00").x;
  ImGui::PopFont();
  const float bar_w = font * 0.9f, margin_right = bar_w + tick_w + 3 * pad + font * 0.4f;
  // Big matrices keep a corner large enough for the minimap.
  const float corner = std::max(g.rows, g.cols) > 48 ? font * 5.0f : 0.0f;
  float label_size = font;
  for (int pass = 0; pass < 2; ++pass) {  // shrunk labels need smaller margins: fit again
    const float label_w = std::min(max_label_w, font * 8) * label_size / font;
    g.margin_left = std::max(label_w + 2 * pad + font * 0.6f, corner);  // + focus marker
    g.margin_top = std::max(label_w + 2 * pad, corner);
    g.fit_cell = std::min((size.x - g.margin_left - margin_right) / g.cols,
                          (size.y - g.margin_top - pad) / g.rows);
    g.fit_cell = std::max(g.fit_cell, 1e-3f);
    if (g.fit_cell * s >= 4) g.fit_cell = snap(g.fit_cell, s);
    label_size = std::clamp(g.fit_cell, font * kSmallestLabel, font);
  }
  g.max_zoom = std::max(1.0, font * 4.0 / g.fit_cell);
  if (script && !script_applied) {
    viewport.zoom = script->zoom, viewport.row0 = script->row, viewport.col0 = script->col;
    script_applied = true;
  } else if (script && (script->pan_rows != 0 || script->pan_cols != 0)) {
    // Bounce between the edges, like a user sweeping across the matrix.
    const double before_r = viewport.row0, before_c = viewport.col0;
    viewport.row0 += script->pan_rows, viewport.col0 += script->pan_cols;
    viewport.clamp(g.rows, g.cols, g.max_zoom);
    if (viewport.row0 == before_r) script->pan_rows = -script->pan_rows;
    if (viewport.col0 == before_c) script->pan_cols = -script->pan_cols;
  }
  viewport.clamp(g.rows, g.cols, g.max_zoom);
  g.x0 = snap(origin.x + g.margin_left, s), g.y0 = snap(origin.y + g.margin_top, s);
  g.grid_w = g.fit_cell * g.cols, g.grid_h = g.fit_cell * g.rows;
  g.cell = static_cast<float>(g.fit_cell * viewport.zoom);
  g.label_size = std::clamp(g.cell, font * kSmallestLabel, font);
  g.every = std::max(1, static_cast<int>(std::ceil(g.label_size / g.cell - 1e-4f)));

  // --- Cells: the pyramid level whose texels are at least a pixel, its visible part. ---
  const std::uint64_t key = cache_key(range);
  if (drawn_shown != ctx.shown || drawn_key != key || cells.empty()) {
    cells.reset(&ctx.shown->weights, range);
    Matrix ramp(256, 1);  // top = vmax, bottom = vmin (positions on the colormap)
    for (int i = 0; i < 256; ++i) ramp(i, 0) = 1.0f - i / 255.0f;
    renderer.render(ramp, range.colormap, 0.0f, 1.0f, bar_values, bar);
    drawn_shown = ctx.shown;
    drawn_key = key;
  }
  const int level = cells.level_for(g.cell * s / kMinTexelPixels);
  const GlFramebuffer& level_cells = cells.texture(level, renderer);
  const ImVec2 grid_a(g.x0, g.y0), grid_b(g.x0 + g.grid_w, g.y0 + g.grid_h);
  const ImVec2 uv_a(static_cast<float>(viewport.col0 / g.cols),
                    static_cast<float>(viewport.row0 / g.rows));
  const ImVec2 uv_b(static_cast<float>((viewport.col0 + g.visible_cols(viewport)) / g.cols),
                    static_cast<float>((viewport.row0 + g.visible_rows(viewport)) / g.rows));
  dl->AddImage(texture_id(level_cells), grid_a, grid_b, uv_a, uv_b);

  // Only the visible cells and labels are visited (thousands of tokens).
  const int first_row = std::clamp(static_cast<int>(std::floor(viewport.row0)), 0, g.rows - 1);
  const int last_row = std::clamp(
      static_cast<int>(std::ceil(viewport.row0 + g.visible_rows(viewport))) - 1, 0, g.rows - 1);
  const int first_col = std::clamp(static_cast<int>(std::floor(viewport.col0)), 0, g.cols - 1);
  const int last_col = std::clamp(
      static_cast<int>(std::ceil(viewport.col0 + g.visible_cols(viewport))) - 1, 0, g.cols - 1);

  // Numbers in the cells when they fit.
  const bool numbers = g.cell >= mono * 2.1f && g.cell >= number_w + 4;
  if (numbers) {
    dl->PushClipRect(grid_a, grid_b, true);
    ImGui::PushFont(ctx.fonts.mono);
    char buf[16];
    for (int i = first_row; i <= last_row; ++i)
      for (int j = first_col; j <= last_col; ++j) {
        std::snprintf(buf, sizeof buf, "%.2f", w(i, j));
        ImVec2 ts = ImGui::CalcTextSize(buf);
        dl->AddText(ImVec2(g.cell_x(j, viewport) + (g.cell - ts.x) / 2,
                           g.cell_y(i, viewport) + (g.cell - ts.y) / 2),
                    text_color_on(range.colormap, range.position(w(i, j)), 0.0f, 1.0f), buf);
      }
    ImGui::PopFont();
    dl->PopClipRect();
  }

  // --- Axis labels: every visible one when it fits, else every k-th (k fixed by the zoom). ---
  TextLayer& text = text_layer();
  const auto label_color = [&](int i, bool focused) {
    const Token* t = i < static_cast<int>(tokens.size()) ? &tokens[i] : nullptr;
    return focused                             ? colors.focus
           : (t && (t->special || t->unknown)) ? colors.text_dim
                                               : colors.text;
  };
  nlohmann::json row_json = nlohmann::json::array(), col_json = nlohmann::json::array();
  nlohmann::json shaped_json = nlohmann::json::array();  // both axes: box, unknown glyphs, ink
  dl->PushClipRect(ImVec2(origin.x, g.y0 - g.label_size / 2),
                   ImVec2(g.x0, grid_b.y + g.label_size / 2), true);
  for (int i = (first_row + g.every - 1) / g.every * g.every; i <= last_row; i += g.every) {
    const float cy = g.cell_y(i + 0.5, viewport);
    if (cy < grid_a.y || cy > grid_b.y) continue;
    TextOptions right;
    right.anchor = ImVec2(1, 0);                // right-aligned against the grid
    right.max_width = g.margin_left - 2 * pad;  // a longer one ends in "…"
    const float tw = text.measure(labels[i], g.label_size, right).x;
    ImVec2 p(g.x0 - pad - tw, cy - g.label_size / 2);
    const DrawnText drawn = text.draw(dl, ImVec2(g.x0 - pad, p.y), labels[i], g.label_size,
                                      label_color(i, i == ctx.focus), right);
    if (ctx.layout) {
      shaped_json.push_back(label_json(i, labels[i], drawn, s));
      shaped_json.back()["axis"] = "row";
    }
    if (ctx.layout)
      row_json.push_back({{"index", i},
                          {"text", labels[i]},
                          {"x", p.x * s},
                          {"y", p.y * s},
                          {"w", tw * s},
                          {"h", g.label_size * s}});
  }
  dl->PopClipRect();
  dl->PushClipRect(ImVec2(g.x0 - g.label_size / 2, origin.y),
                   ImVec2(grid_b.x + g.label_size / 2, g.y0), true);
  for (int j = (first_col + g.every - 1) / g.every * g.every; j <= last_col; j += g.every) {
    const float cx = g.cell_x(j + 0.5, viewport);
    if (cx < grid_a.x || cx > grid_b.x) continue;
    const float th = text.measure(labels[j], g.label_size).x;
    ImVec2 p(cx - g.label_size / 2, g.y0 - pad);
    TextOptions vertical;
    vertical.vertical = true;  // reads bottom to top, its start at the grid
    const DrawnText drawn =
        text.draw(dl, p, labels[j], g.label_size, label_color(j, false), vertical);
    if (ctx.layout) {
      shaped_json.push_back(label_json(j, labels[j], drawn, s));
      shaped_json.back()["axis"] = "col";
    }
    if (ctx.layout)
      col_json.push_back({{"index", j},
                          {"text", labels[j]},
                          {"x", p.x * s},
                          {"y", (p.y - th) * s},
                          {"w", g.label_size * s},
                          {"h", th * s}});
  }
  dl->PopClipRect();
  // Several selected queries: a bar left of each selected row (in view) and a frame around it.
  for (int q : ctx.shown->queries) {
    if (q < first_row || q > last_row) continue;
    const float ya = std::max(grid_a.y, g.cell_y(q, viewport)),
                yb = std::min(grid_b.y, g.cell_y(q + 1, viewport));
    dl->AddRectFilled(ImVec2(g.x0 - std::max(3.0f, font * 0.25f), ya), ImVec2(g.x0 - 1, yb),
                      colors.focus);
    dl->AddRect(ImVec2(g.x0, ya), ImVec2(grid_b.x, yb), with_alpha(colors.focus, 0.9f), 0, 0,
                std::max(1.0f, std::min(2.0f, g.cell * 0.2f)));
  }
  // Focus marker: a triangle left of the focused row (never drawn over the cells).
  if (ctx.focus >= first_row && ctx.focus <= last_row) {
    float cy = g.cell_y(ctx.focus + 0.5, viewport),
          r = std::min(font * 0.35f, std::max(g.cell * 0.5f, 3.0f));
    dl->AddTriangleFilled(ImVec2(origin.x + 1, cy - r), ImVec2(origin.x + 1, cy + r),
                          ImVec2(origin.x + 1 + r * 1.4f, cy), colors.focus);
  }

  // --- Colorbar with ticks. ---
  const float bx = grid_b.x + 2 * pad;
  dl->AddImage(texture_id(bar), ImVec2(bx, g.y0), ImVec2(bx + bar_w, grid_b.y));
  dl->AddRect(ImVec2(bx, g.y0), ImVec2(bx + bar_w, grid_b.y), colors.panel_line);
  ImGui::PushFont(ctx.fonts.mono);
  // Ticks at round weights, where they fall on the bar, about two lines apart: colorbar_ticks,
  // the one tick function of the window and the figures.
  const int max_ticks = std::clamp(static_cast<int>(g.grid_h / (mono * 2.2f)), 2, 6);
  nlohmann::json ticks_json = nlohmann::json::array();
  for (const ColorTick& tick : colorbar_ticks(range, max_ticks)) {
    const float y = g.y0 + g.grid_h * (1.0f - tick.position);
    dl->AddLine(ImVec2(bx + bar_w, y), ImVec2(bx + bar_w + 3, y), colors.text);
    const float ty = std::clamp(y - mono / 2, g.y0 - mono / 2, grid_b.y - mono / 2);
    const ImVec2 p(bx + bar_w + 3 + font * 0.4f, ty);
    dl->AddText(p, colors.text, tick.label.c_str());
    if (ctx.layout) {
      const ImVec2 ts = ImGui::CalcTextSize(tick.label.c_str());
      ticks_json.push_back({{"text", tick.label}, {"value", tick.value}, {"x", p.x * s},
                            {"y", p.y * s}, {"w", ts.x * s}, {"h", ts.y * s},
                            {"tick_y", y * s}});  // tick_y: the tick mark on the bar
    }
  }
  ImGui::PopFont();

  // --- Minimap (zoomed in): the whole matrix, the visible part outlined; click or drag moves it.
  nlohmann::json minimap_json;
  if (viewport.zoom > 1.0001) {
    const float side = std::min(g.margin_left, g.margin_top) - 2 * pad;
    const bool in_corner = side >= font * 3;
    const float box = in_corner ? side : std::min(g.grid_w, g.grid_h) * 0.3f;
    const float mw = box * g.cols / std::max(g.rows, g.cols),
                mh = box * g.rows / std::max(g.rows, g.cols);
    const ImVec2 ma = in_corner ? ImVec2(origin.x + pad, origin.y + pad)
                                : ImVec2(grid_b.x - mw - pad, grid_b.y - mh - pad);
    const ImVec2 mb(ma.x + mw, ma.y + mh);
    const int mini_level = cells.level_for(box / std::max(g.rows, g.cols) * s / kMinTexelPixels);
    dl->AddRectFilled(ImVec2(ma.x - 2, ma.y - 2), ImVec2(mb.x + 2, mb.y + 2), colors.panel_line);
    dl->AddImage(texture_id(cells.texture(mini_level, renderer)), ma, mb);
    const ImVec2 va(ma.x + static_cast<float>(viewport.col0 / g.cols) * mw,
                    ma.y + static_cast<float>(viewport.row0 / g.rows) * mh);
    const ImVec2 vb(va.x + static_cast<float>(mw / viewport.zoom),
                    va.y + static_cast<float>(mh / viewport.zoom));
    dl->AddRect(va, vb, colors.focus, 0.0f, 0, 2.0f);
    ImGui::SetCursorScreenPos(ma);
    ImGui::InvisibleButton("##minimap", ImVec2(std::max(1.0f, mw), std::max(1.0f, mh)));
    if (ImGui::IsItemActive()) {  // centre the view on the pointer
      const ImVec2 m = ImGui::GetIO().MousePos;
      viewport.row0 = (m.y - ma.y) / mh * g.rows - g.visible_rows(viewport) / 2;
      viewport.col0 = (m.x - ma.x) / mw * g.cols - g.visible_cols(viewport) / 2;
      viewport.clamp(g.rows, g.cols, g.max_zoom);
    }
    minimap_json = {
        {"x", ma.x * s},
        {"y", ma.y * s},
        {"w", mw * s},
        {"h", mh * s},
        {"view",
         {{"x", va.x * s}, {"y", va.y * s}, {"w", (vb.x - va.x) * s}, {"h", (vb.y - va.y) * s}}}};
  }

  // --- Interaction: wheel zooms about the pointer, drag pans, hover focuses, click locks. ---
  ImGui::SetCursorScreenPos(ImVec2(origin.x, g.y0));
  ImGui::InvisibleButton(
      "##heatmap", ImVec2(std::max(1.0f, g.x0 - origin.x + g.grid_w), std::max(1.0f, g.grid_h)));
  const ImGuiIO& io = ImGui::GetIO();
  // Hover works while the sentence box still has the keyboard (the user just typed): an active
  // text box would otherwise block every other item's hover.
  const bool hovered = ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem);
  if (hovered) ImGui::SetItemUsingMouseWheel();
  const ImVec2 m = io.MousePos;
  const double mouse_row = viewport.row0 + (m.y - g.y0) / g.cell,
               mouse_col = viewport.col0 + (m.x - g.x0) / g.cell;
  if (hovered && io.MouseWheel != 0.0f)
    viewport.zoom_about(std::pow(1.25, io.MouseWheel), mouse_row,
                        m.x >= g.x0 ? mouse_col : viewport.col0, g.rows, g.cols, g.max_zoom);
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3.0f)) {
    dragging = true;
    viewport.row0 -= io.MouseDelta.y / g.cell, viewport.col0 -= io.MouseDelta.x / g.cell;
    viewport.clamp(g.rows, g.cols, g.max_zoom);
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) viewport = HeatmapViewport{};
  const int i = static_cast<int>(std::floor(mouse_row)),
            j = static_cast<int>(std::floor(mouse_col));
  if (ImGui::IsItemDeactivated()) {
    if (!dragging && i >= 0 && i < g.rows) ctx.app.slots[ctx.slot].locked_token = i;
    dragging = false;
  }
  if (hovered && !dragging && i >= 0 && i < g.rows) {
    ctx.app.focus.hover(ctx.slot, i);
    if (j >= 0 && j < g.cols && m.x >= g.x0) {
      if (g.cell >= 3)
        dl->AddRect(ImVec2(g.cell_x(j, viewport), g.cell_y(i, viewport)),
                    ImVec2(g.cell_x(j + 1, viewport), g.cell_y(i + 1, viewport)), colors.focus,
                    0.0f, 0, 2.0f);
      ImGui::BeginTooltip();
      ImGui::Text("query  %s  (#%d)", labels[i].c_str(), i);
      ImGui::Text("key    %s  (#%d)", labels[j].c_str(), j);
      ImGui::PushFont(ctx.fonts.mono);
      ImGui::Text("weight %.3f", w(i, j));
      ImGui::PopFont();
      if (g.max_zoom > 1.0) ImGui::TextDisabled("wheel zooms, drag pans, double-click fits");
      ImGui::EndTooltip();
    }
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(size);

  if (!ctx.layout) return;
  nlohmann::json view = {
      {"view", "heatmap"},
      {"slot", ctx.slot},
      {"layer", ctx.app.layer},
      {"head", ctx.app.head},
      {"rows", g.rows},
      {"cols", g.cols},
      // Cell (i, j) is drawn at (x0 + j·cell_w, y0 + i·cell_h); zoomed in, x0/y0 may lie outside.
      {"x0", g.cell_x(0, viewport) * s},
      {"y0", g.cell_y(0, viewport) * s},
      {"cell_w", g.cell * s},
      {"cell_h", g.cell * s},
      {"grid", {{"x", g.x0 * s}, {"y", g.y0 * s}, {"w", g.grid_w * s}, {"h", g.grid_h * s}}},
      {"pane", {{"x", origin.x * s}, {"y", origin.y * s}, {"w", size.x * s}, {"h", size.y * s}}},
      {"zoom", viewport.zoom},
      {"first_row", viewport.row0},
      {"first_col", viewport.col0},
      {"pool_level", level},
      {"pooled_rows", cells.rows(level)},
      {"pooled_cols", cells.cols(level)},
      {"label_size", g.label_size * s},
      {"label_every", g.every},
      {"vmin", range.vmin},
      {"vmax", range.vmax},
      {"log_scale", range.log},
      {"title", ctx.shown->title},
      {"aggregate", ctx.shown->options.aggregate},
      {"hidden_keys", ctx.shown->hidden_key},
      {"selected_queries", ctx.shown->queries},
      {"combined_row", ctx.shown->combined},
      {"colormap", colormaps()[range.colormap].name},
      {"numbers", numbers},
      {"colorbar", {{"x", bx * s}, {"y", g.y0 * s}, {"w", bar_w * s}, {"h", g.grid_h * s}}},
      {"colorbar_ticks", ticks_json},
      {"row_labels", row_json},
      {"col_labels", col_json},
      {"labels", shaped_json},
      {"focus", ctx.focus}};
  if (!minimap_json.is_null()) view["minimap"] = minimap_json;
  if (static_cast<long long>(g.rows) * g.cols <= kLayoutWeightsMax) {
    nlohmann::json rows_json = nlohmann::json::array();
    for (int r = 0; r < g.rows; ++r) {
      nlohmann::json row = nlohmann::json::array();
      for (int c = 0; c < g.cols; ++c) row.push_back(w(r, c));
      rows_json.push_back(row);
    }
    view["weights"] = rows_json;
  }
  ctx.layout->push_back(std::move(view));
}

}  // namespace attnscope
