#include "app/views/heatmap_view.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <functional>

#include "app/render/text_layer.h"
#include "app/ui/colormap.h"
#include "app/ui/imgui_compat.h"
#include "app/ui/layout.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
constexpr int kMaxLabelChars = 12;
// Zoomed out, a pooled texel covers at least this many pixels: a single hot cell shows as a dot
// a projector still resolves, not a lone pixel.
constexpr double kMinTexelPixels = 2.0;
constexpr int kLayoutWeightsMax = 64 * 64;  // --layout lists the weights of matrices this small
constexpr float kPad = 6.0f;
constexpr float kMaxLabelFonts = 8.0f;  // a label's margin: at most this many font sizes

std::uint64_t cache_key(const ColorScale& c) {
  std::uint64_t k = std::hash<float>{}(c.vmin) * 31 + std::hash<float>{}(c.vmax);
  return k * 131 + static_cast<std::uint64_t>(c.colormap) * 7 + (c.log ? 1 : 0);
}

ImTextureID texture_id(const GlFramebuffer& fb) {
  return imgui_compat::texture_id(fb.color().id());
}

// The margins around the grid for labels `label_w` wide (before any cut) at `font`: labels left
// and above (the focus marker left of them), the colorbar and its ticks right.
HeatmapChrome chrome_for(float font, float label_w, const Fonts& fonts, bool minimap_corner) {
  ImGui::PushFont(fonts.mono);
  const float tick_w = ImGui::CalcTextSize("0.000").x;
  ImGui::PopFont();
  const float label = std::min(label_w, font * kMaxLabelFonts);
  const float corner = minimap_corner ? font * 5.0f : 0.0f;
  HeatmapChrome c;
  c.left = std::max(label + 2 * kPad + font * 0.6f, corner);
  c.top = std::max(label + 2 * kPad, corner);
  c.right = font * 0.9f + tick_w + 3 * kPad + font * 0.4f;
  c.bottom = kPad;
  return c;
}
// Why a token is drawn grey, in words (empty when it is not).
std::string greyed_reason(const AttentionTrace& trace, int i) {
  if (i < 0 || i >= static_cast<int>(trace.tokens.size())) return {};
  const Token& t = trace.tokens[i];
  if (t.unknown)
    return "greyed: the lesson model has no word vector for it, so it is masked \xE2\x80\x94 its "
           "key score is \xE2\x88\x92\xE2\x88\x9E (weight 0) and its own row is spread evenly";
  if (t.special) return "greyed: a special token the tokenizer added, not a word of the text";
  return {};
}
}  // namespace

// Where everything goes this frame, in ImGui units.
struct HeatmapView::Geometry {
  int rows = 0, cols = 0;
  ImVec2 origin, size;           // the pane
  float x0 = 0, y0 = 0;          // top-left of the grid's screen rectangle
  float grid_w = 0, grid_h = 0;  // the rectangle the visible cells fill
  float fit_cell = 0;            // cell size at zoom 1
  float cell = 0;                // cell size now
  float label_size = 0;          // font size of the axis labels
  int every = 1;                 // label every `every`-th token (1: all)
  HeatmapChrome chrome;
  double max_zoom = 1;
  int first_row = 0, last_row = 0, first_col = 0, last_col = 0;  // visible cells
  // Screen position of cell (i, j)'s top-left corner.
  float cell_x(double j, const HeatmapViewport& v) const {
    return x0 + static_cast<float>((j - v.col0) * cell);
  }
  float cell_y(double i, const HeatmapViewport& v) const {
    return y0 + static_cast<float>((i - v.row0) * cell);
  }
  double visible_rows(const HeatmapViewport& v) const { return rows / v.zoom; }
  double visible_cols(const HeatmapViewport& v) const { return cols / v.zoom; }
  ImVec2 grid_a() const { return ImVec2(x0, y0); }
  ImVec2 grid_b() const { return ImVec2(x0 + grid_w, y0 + grid_h); }
};

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

void HeatmapView::UpdateLabels(const AttentionTrace& trace, int count) {
  const float font = ImGui::GetFontSize(), density = ImGui::GetIO().DisplayFramebufferScale.x;
  if (labels_for == &trace && labels_font == font && labels_density == density &&
      static_cast<int>(labels.size()) == count)
    return;
  labels.resize(static_cast<size_t>(count));
  label_widths.resize(static_cast<size_t>(count));
  max_label_w = 0;
  for (int i = 0; i < count; ++i) {
    labels[i] =
        i < static_cast<int>(trace.tokens.size()) ? token_label(trace, i, kMaxLabelChars) : "?";
    label_widths[i] = text_layer().measure(labels[i], font).x;
    max_label_w = std::max(max_label_w, label_widths[i]);
  }
  labels_for = &trace;
  labels_font = font, labels_density = density;
}

HeatmapChrome HeatmapView::Chrome(const ViewContext& ctx) {
  const float font = ImGui::GetFontSize();
  if (!ctx.weights || !ctx.trace) return chrome_for(font, font * 4, ctx.fonts, false);
  const int n = static_cast<int>(std::max(ctx.weights->rows(), ctx.weights->cols()));
  UpdateLabels(*ctx.trace, n);
  return chrome_for(font, max_label_w, ctx.fonts, n > 48);
}

void HeatmapView::Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  if (!ctx.weights || ctx.weights->size() == 0 || !ctx.trace || !ctx.shown) {
    ImGui::Dummy(size);
    dl->AddText(ImVec2(origin.x + 8, origin.y + 8), colors.text_dim,
                ctx.trace ? "no tokens: type a sentence above" : ctx.no_trace_text());
    return;
  }
  const Matrix& w = *ctx.weights;
  const float s = ctx.pixel_scale;
  const ColorScale& range = ctx.shown->scale;  // one colour scale per shown matrix
  Geometry g;
  g.origin = origin, g.size = size;
  g.rows = rows = static_cast<int>(w.rows());
  g.cols = cols = static_cast<int>(w.cols());

  // --- Geometry: the grid fills what the labels and the colorbar leave, with square cells. ---
  const float font = ImGui::GetFontSize();
  g.chrome = Chrome(ctx);
  g.fit_cell =
      std::min((size.x - g.chrome.width()) / g.cols, (size.y - g.chrome.height()) / g.rows);
  g.fit_cell = std::max(g.fit_cell, 1e-3f);
  if (g.fit_cell * s >= 4) g.fit_cell = snap(g.fit_cell, s);
  g.max_zoom = max_zoom = std::max(1.0, font * 4.0 / g.fit_cell);
  viewport.clamp(g.rows, g.cols, g.max_zoom);
  g.x0 = snap(origin.x + g.chrome.left, s), g.y0 = snap(origin.y + g.chrome.top, s);
  g.grid_w = g.fit_cell * g.cols, g.grid_h = g.fit_cell * g.rows;
  g.cell = static_cast<float>(g.fit_cell * viewport.zoom);
  // Labels at the UI font's size while cells allow, never below kMinLabel of it: smaller cells
  // label every k-th token instead (a label needs its size and a sliver of air).
  g.label_size = std::clamp(g.cell * 0.92f, font * kMinLabel, font);
  g.every = std::max(1, static_cast<int>(std::ceil(g.label_size * 1.08f / g.cell - 1e-4f)));
  // Only the visible cells and labels are visited (thousands of tokens).
  g.first_row = std::clamp(static_cast<int>(std::floor(viewport.row0)), 0, g.rows - 1);
  g.last_row = std::clamp(static_cast<int>(std::ceil(viewport.row0 + g.visible_rows(viewport))) - 1,
                          0, g.rows - 1);
  g.first_col = std::clamp(static_cast<int>(std::floor(viewport.col0)), 0, g.cols - 1);
  g.last_col = std::clamp(static_cast<int>(std::ceil(viewport.col0 + g.visible_cols(viewport))) - 1,
                          0, g.cols - 1);

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
  const ImVec2 uv_a(static_cast<float>(viewport.col0 / g.cols),
                    static_cast<float>(viewport.row0 / g.rows));
  const ImVec2 uv_b(static_cast<float>((viewport.col0 + g.visible_cols(viewport)) / g.cols),
                    static_cast<float>((viewport.row0 + g.visible_rows(viewport)) / g.rows));
  dl->AddImage(texture_id(level_cells), g.grid_a(), g.grid_b(), uv_a, uv_b);

  // Numbers in the cells when they fit, in the mono font (it scales with the UI font).
  ImGui::PushFont(ctx.fonts.mono);
  const float mono = ImGui::GetFontSize();
  const bool numbers = g.cell >= mono * 2.1f && g.cell >= ImGui::CalcTextSize("0.00").x + 4;
  if (numbers) {
    dl->PushClipRect(g.grid_a(), g.grid_b(), true);
    char buf[16];
    for (int i = g.first_row; i <= g.last_row; ++i)
      for (int j = g.first_col; j <= g.last_col; ++j) {
        format_weight(buf, sizeof buf, w(i, j), 2);
        ImVec2 ts = ImGui::CalcTextSize(buf);
        dl->AddText(ImVec2(g.cell_x(j, viewport) + (g.cell - ts.x) / 2,
                           g.cell_y(i, viewport) + (g.cell - ts.y) / 2),
                    text_color_on(range.colormap, range.position(w(i, j)), 0.0f, 1.0f), buf);
      }
    dl->PopClipRect();
  }
  ImGui::PopFont();

  nlohmann::json record;
  nlohmann::json* rec = ctx.layout ? &record : nullptr;
  DrawLabels(ctx, g, rec);
  DrawColorbar(ctx, g, rec);
  DrawMinimap(ctx, renderer, g, rec);
  Interact(ctx, g, rec);
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(size);

  if (!ctx.layout) return;
  record.update(
      {{"view", "heatmap"},
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
       {"font_size", font * s},
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
       {"focus", ctx.focus}});
  if (static_cast<long long>(g.rows) * g.cols <= kLayoutWeightsMax) {
    nlohmann::json rows_json = nlohmann::json::array();
    for (int r = 0; r < g.rows; ++r) {
      nlohmann::json row = nlohmann::json::array();
      for (int c = 0; c < g.cols; ++c) row.push_back(w(r, c));
      rows_json.push_back(row);
    }
    record["weights"] = rows_json;
  }
  ctx.layout->push_back(std::move(record));
}

// --- Axis labels: every visible one when it fits, else every k-th (k fixed by the zoom), and
// always the focused, locked and selected tokens. ---
void HeatmapView::DrawLabels(ViewContext& ctx, const Geometry& g, nlohmann::json* record) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Tokens& tokens = ctx.trace->tokens;
  const float s = ctx.pixel_scale;
  TextLayer& text = text_layer();
  const auto label_color = [&](int i, bool focused) {
    const Token* t = i < static_cast<int>(tokens.size()) ? &tokens[i] : nullptr;
    return focused                             ? colors.focus
           : (t && (t->special || t->unknown)) ? colors.text_dim
                                               : colors.text;
  };
  std::vector<int> always = ctx.shown->queries;
  if (ctx.focus >= 0) always.push_back(ctx.focus);
  if (const int locked = ctx.app.slots[ctx.slot].locked_token; locked >= 0)
    always.push_back(locked);
  const float air = g.label_size * 1.04f;  // a label's extent along the axis, with air
  nlohmann::json row_json = nlohmann::json::array(), col_json = nlohmann::json::array();
  nlohmann::json shaped_json = nlohmann::json::array();  // both axes: box, unknown glyphs, ink
  const ImVec2 grid_a = g.grid_a(), grid_b = g.grid_b();
  const float max_w = std::min(max_label_w, ImGui::GetFontSize() * kMaxLabelFonts);
  dl->PushClipRect(ImVec2(g.origin.x, g.y0 - g.label_size / 2),
                   ImVec2(g.x0, grid_b.y + g.label_size / 2), true);
  for (int i : thinned_labels(g.first_row, g.last_row, g.every, always, g.cell, air)) {
    const float cy = g.cell_y(i + 0.5, viewport);
    if (cy < grid_a.y || cy > grid_b.y) continue;
    TextOptions right;
    right.anchor = ImVec2(1, 0);  // right-aligned against the grid
    right.max_width = max_w;      // a longer one ends in "…"
    const float tw = text.measure(labels[i], g.label_size, right).x;
    const ImVec2 p(g.x0 - kPad - tw, cy - g.label_size / 2);
    const DrawnText drawn = text.draw(dl, ImVec2(g.x0 - kPad, p.y), labels[i], g.label_size,
                                      label_color(i, i == ctx.focus), right);
    if (!record) continue;
    shaped_json.push_back(label_json(i, labels[i], drawn, s));
    shaped_json.back()["axis"] = "row";
    row_json.push_back({{"index", i},
                        {"text", labels[i]},
                        {"x", p.x * s},
                        {"y", p.y * s},
                        {"w", tw * s},
                        {"h", g.label_size * s}});
  }
  dl->PopClipRect();
  dl->PushClipRect(ImVec2(g.x0 - g.label_size / 2, g.origin.y),
                   ImVec2(grid_b.x + g.label_size / 2, g.y0), true);
  for (int j : thinned_labels(g.first_col, g.last_col, g.every, always, g.cell, air)) {
    const float cx = g.cell_x(j + 0.5, viewport);
    if (cx < grid_a.x || cx > grid_b.x) continue;
    TextOptions vertical;
    vertical.vertical = true;  // reads bottom to top, its start at the grid
    vertical.max_width = max_w;
    const float th = text.measure(labels[j], g.label_size, vertical).x;
    const ImVec2 p(cx - g.label_size / 2, g.y0 - kPad);
    const DrawnText drawn =
        text.draw(dl, p, labels[j], g.label_size, label_color(j, j == ctx.focus), vertical);
    if (!record) continue;
    shaped_json.push_back(label_json(j, labels[j], drawn, s));
    shaped_json.back()["axis"] = "col";
    col_json.push_back({{"index", j},
                        {"text", labels[j]},
                        {"x", p.x * s},
                        {"y", (p.y - th) * s},
                        {"w", g.label_size * s},
                        {"h", th * s}});
  }
  dl->PopClipRect();
  const float font = ImGui::GetFontSize();
  const float stroke = std::max(1.0f, font / 7.5f);  // strokes grow with the presentation scale
  // Several selected queries: a bar left of each selected row (in view) and a frame around it.
  for (int q : ctx.shown->queries) {
    if (q < g.first_row || q > g.last_row) continue;
    const float ya = std::max(grid_a.y, g.cell_y(q, viewport)),
                yb = std::min(grid_b.y, g.cell_y(q + 1, viewport));
    dl->AddRectFilled(ImVec2(g.x0 - std::max(3.0f, font * 0.25f), ya), ImVec2(g.x0 - 1, yb),
                      colors.focus);
    dl->AddRect(ImVec2(g.x0, ya), ImVec2(grid_b.x, yb), with_alpha(colors.focus, 0.9f), 0, 0,
                std::max(1.0f, std::min(stroke, g.cell * 0.2f)));
  }
  // Focus marker: a triangle left of the focused row (never drawn over the cells).
  if (ctx.focus >= g.first_row && ctx.focus <= g.last_row) {
    const float cy = g.cell_y(ctx.focus + 0.5, viewport),
                r = std::min(font * 0.35f, std::max(g.cell * 0.5f, 3.0f));
    dl->AddTriangleFilled(ImVec2(g.origin.x + 1, cy - r), ImVec2(g.origin.x + 1, cy + r),
                          ImVec2(g.origin.x + 1 + r * 1.4f, cy), colors.focus);
  }
  if (!record) return;
  (*record)["row_labels"] = std::move(row_json);
  (*record)["col_labels"] = std::move(col_json);
  (*record)["labels"] = std::move(shaped_json);
}

// --- Colorbar with ticks. ---
void HeatmapView::DrawColorbar(ViewContext& ctx, const Geometry& g, nlohmann::json* record) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ColorScale& range = ctx.shown->scale;
  const float font = ImGui::GetFontSize(), s = ctx.pixel_scale;
  const float bar_w = font * 0.9f;
  const float bx = g.grid_b().x + 2 * kPad, y1 = g.grid_b().y;
  dl->AddImage(texture_id(bar), ImVec2(bx, g.y0), ImVec2(bx + bar_w, y1));
  dl->AddRect(ImVec2(bx, g.y0), ImVec2(bx + bar_w, y1), colors.panel_line);
  ImGui::PushFont(ctx.fonts.mono);
  const float mono = ImGui::GetFontSize();
  // Ticks at round weights, where they fall on the bar, about two lines apart: colorbar_ticks,
  // the one tick function of the window and the figures.
  const int max_ticks = std::clamp(static_cast<int>(g.grid_h / (mono * 2.2f)), 2, 6);
  nlohmann::json ticks_json = nlohmann::json::array();
  for (const ColorTick& tick : colorbar_ticks(range, max_ticks)) {
    const float y = g.y0 + g.grid_h * (1.0f - tick.position), v = tick.value;
    const char* buf = tick.label.c_str();
    dl->AddLine(ImVec2(bx + bar_w, y), ImVec2(bx + bar_w + font * 0.25f, y), colors.text,
                std::max(1.0f, font / 15.0f));
    const float ty = std::clamp(y - mono / 2, g.y0 - mono / 2, y1 - mono / 2);
    const ImVec2 p(bx + bar_w + font * 0.25f + font * 0.4f, ty);
    dl->AddText(p, colors.text, buf);
    if (record) {
      const ImVec2 ts = ImGui::CalcTextSize(buf);
      ticks_json.push_back({{"text", buf},
                            {"value", v},
                            {"x", p.x * s},
                            {"y", p.y * s},
                            {"w", ts.x * s},
                            {"h", ts.y * s},
                            {"tick_y", y * s}});  // tick_y: the tick mark on the bar
    }
  }
  ImGui::PopFont();
  if (!record) return;
  (*record)["colorbar"] = {{"x", bx * s}, {"y", g.y0 * s}, {"w", bar_w * s}, {"h", g.grid_h * s}};
  (*record)["colorbar_ticks"] = std::move(ticks_json);
}

// --- Minimap (zoomed in): the whole matrix, the visible part outlined; click or drag moves it.
void HeatmapView::DrawMinimap(ViewContext& ctx, ColormapRenderer& renderer, const Geometry& g,
                              nlohmann::json* record) {
  if (viewport.zoom <= 1.0001) return;
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize(), s = ctx.pixel_scale;
  const float side = std::min(g.chrome.left, g.chrome.top) - 2 * kPad;
  const bool in_corner = side >= font * 3;
  const float box = in_corner ? side : std::min(g.grid_w, g.grid_h) * 0.3f;
  const float mw = box * g.cols / std::max(g.rows, g.cols),
              mh = box * g.rows / std::max(g.rows, g.cols);
  const ImVec2 ma = in_corner ? ImVec2(g.origin.x + kPad, g.origin.y + kPad)
                              : ImVec2(g.grid_b().x - mw - kPad, g.grid_b().y - mh - kPad);
  const ImVec2 mb(ma.x + mw, ma.y + mh);
  const int mini_level = cells.level_for(box / std::max(g.rows, g.cols) * s / kMinTexelPixels);
  dl->AddRectFilled(ImVec2(ma.x - 2, ma.y - 2), ImVec2(mb.x + 2, mb.y + 2), colors.panel_line);
  dl->AddImage(texture_id(cells.texture(mini_level, renderer)), ma, mb);
  const ImVec2 va(ma.x + static_cast<float>(viewport.col0 / g.cols) * mw,
                  ma.y + static_cast<float>(viewport.row0 / g.rows) * mh);
  const ImVec2 vb(va.x + static_cast<float>(mw / viewport.zoom),
                  va.y + static_cast<float>(mh / viewport.zoom));
  dl->AddRect(va, vb, colors.focus, 0.0f, 0, std::max(2.0f, font / 7.5f));
  ImGui::SetCursorScreenPos(ma);
  ImGui::InvisibleButton("##minimap", ImVec2(std::max(1.0f, mw), std::max(1.0f, mh)));
  if (ImGui::IsItemActive()) {  // centre the view on the pointer
    const ImVec2 m = ImGui::GetIO().MousePos;
    viewport.row0 = (m.y - ma.y) / mh * g.rows - g.visible_rows(viewport) / 2;
    viewport.col0 = (m.x - ma.x) / mw * g.cols - g.visible_cols(viewport) / 2;
    viewport.clamp(g.rows, g.cols, g.max_zoom);
  }
  if (!record) return;
  (*record)["minimap"] = {
      {"x", ma.x * s},
      {"y", ma.y * s},
      {"w", mw * s},
      {"h", mh * s},
      {"view",
       {{"x", va.x * s}, {"y", va.y * s}, {"w", (vb.x - va.x) * s}, {"h", (vb.y - va.y) * s}}}};
}

// --- Cut edges (issue 27): a cross in each knocked-out cell of the layer and head shown. ---
void HeatmapView::DrawCutEdges(ViewContext& ctx, const Geometry& g, nlohmann::json* record) {
  const auto& result = ctx.app.slots[ctx.slot].result;
  if (!result || result->trace != ctx.trace_ref) return;  // the cuts of the trace drawn
  const AppState& st = ctx.app;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float width = std::max(2.0f, ImGui::GetFontSize() / 6.0f);
  nlohmann::json cuts = nlohmann::json::array();
  for (const EdgeKnockout& k : result->interventions.knockout) {
    if (k.layer != st.layer || (k.head >= 0 && st.shown.aggregate.empty() && k.head != st.head))
      continue;
    if (k.query < g.first_row || k.query > g.last_row || k.key < g.first_col || k.key > g.last_col)
      continue;
    const ImVec2 a(g.cell_x(k.key, viewport), g.cell_y(k.query, viewport)),
        b(g.cell_x(k.key + 1, viewport), g.cell_y(k.query + 1, viewport));
    const float inset = (b.x - a.x) * 0.15f;
    dl->AddLine(ImVec2(a.x + inset, a.y + inset), ImVec2(b.x - inset, b.y - inset),
                theme_colors().error, width);
    dl->AddLine(ImVec2(b.x - inset, a.y + inset), ImVec2(a.x + inset, b.y - inset),
                theme_colors().error, width);
    if (record) cuts.push_back({{"query", k.query}, {"key", k.key}, {"head", k.head}});
  }
  if (record) (*record)["cut_edges"] = std::move(cuts);
}

// --- Interaction: wheel zooms about the pointer, drag pans, hover focuses, click locks. ---
void HeatmapView::Interact(ViewContext& ctx, const Geometry& g, nlohmann::json* record) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Matrix& w = *ctx.weights;
  const float font = ImGui::GetFontSize();
  // The grid and the row labels left of it; the column labels above it.
  ImGui::SetCursorScreenPos(ImVec2(g.origin.x, g.y0));
  ImGui::InvisibleButton(
      "##heatmap", ImVec2(std::max(1.0f, g.x0 - g.origin.x + g.grid_w), std::max(1.0f, g.grid_h)));
  const ImGuiIO& io = ImGui::GetIO();
  // Hover works while the sentence box still has the keyboard (the user just typed): an active
  // text box would otherwise block every other item's hover.
  const bool hovered = ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem);
  if (hovered) imgui_compat::item_takes_mouse_wheel();  // the wheel zooms instead of scrolling
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
  DrawCutEdges(ctx, g, record);
  if (ImGui::IsItemDeactivated()) {
    if (!dragging && io.KeyCtrl && ctx.toggle_knockout && i >= 0 && i < g.rows && j >= 0 &&
        j < g.cols && m.x >= g.x0) {
      // Ctrl+click: cut this edge (or put it back) in the head shown, or in every head of the
      // layer when an aggregate is shown.
      const AppState& st = ctx.app;
      ctx.toggle_knockout({st.layer, st.shown.aggregate.empty() ? st.head : -1, i, j});
    } else if (!dragging && i >= 0 && i < g.rows) {
      ctx.app.slots[ctx.slot].locked_token = i;
    }
    dragging = false;
  }
  if (hovered && !dragging && i >= 0 && i < g.rows) {
    ctx.app.focus.hover(ctx.slot, i);
    ImGui::BeginTooltip();
    // The tokens shaped (an Arabic one joined), as the labels are.
    const ImU32 text_colour = ImGui::GetColorU32(ImGuiCol_Text);
    // Piece by piece: GCC 12's -Wrestrict (bug 105329) on "…" + s + "…".
    const auto token_line = [&](const char* role, int t) {
      std::string line = role;
      line += labels[t];
      line += "  (#";
      line += std::to_string(t);
      line += ')';
      shaped_text(line, text_colour);
    };
    token_line("query  ", i);
    if (j >= 0 && j < g.cols && m.x >= g.x0) {
      if (g.cell >= 3)
        dl->AddRect(ImVec2(g.cell_x(j, viewport), g.cell_y(i, viewport)),
                    ImVec2(g.cell_x(j + 1, viewport), g.cell_y(i + 1, viewport)), colors.focus,
                    0.0f, 0, std::max(2.0f, font / 7.5f));
      token_line("key    ", j);
      ImGui::PushFont(ctx.fonts.mono);
      char buf[16];
      format_weight(buf, sizeof buf, w(i, j), 3);
      ImGui::Text("weight %s", buf);
      ImGui::PopFont();
    }
    std::vector<int> greyed = {i};  // a greyed query or key says why
    if (j >= 0 && j < g.cols && m.x >= g.x0 && j != i) greyed.push_back(j);
    for (const int t : greyed) {
      if (const std::string why = greyed_reason(*ctx.trace, t); !why.empty()) {
        std::string label = labels[t];
        label += ':';
        shaped_text(label, colors.text_dim);
        ImGui::PushTextWrapPos(font * 24);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.text_dim), "%s", why.c_str());
        if (record) (*record)["greyed_note"] = labels[t] + ": " + why;
        ImGui::PopTextWrapPos();
      }
    }
    if (g.max_zoom > 1.0) ImGui::TextDisabled("wheel zooms, drag pans, double-click fits");
    if (ctx.toggle_knockout) ImGui::TextDisabled("Ctrl+click: cut this edge (again: restore it)");
    ImGui::EndTooltip();
  }
}

}  // namespace attnscope
