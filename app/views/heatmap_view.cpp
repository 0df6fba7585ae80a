#include "app/views/heatmap_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "app/ui/colormap.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
constexpr int kMaxLabelChars = 12;

std::uint64_t cache_key(const ColorScale& c) {
  std::uint64_t k = std::hash<float>{}(c.vmin) * 31 + std::hash<float>{}(c.vmax);
  return k * 131 + static_cast<std::uint64_t>(c.colormap) * 7 + (c.log ? 1 : 0);
}

// The GPU pass maps values linearly: a log scale uploads each weight's colormap position instead.
void render_cells(ColormapRenderer& renderer, const Matrix& w, const ColorScale& scale,
                  GlTexture& scratch, GlFramebuffer& target) {
  if (!scale.log)
    return renderer.render(w, scale.colormap, scale.vmin, scale.vmax, scratch, target);
  Matrix positions = w.unaryExpr([&](float v) { return scale.position(v); });
  renderer.render(positions, scale.colormap, 0.0f, 1.0f, scratch, target);
}
}  // namespace

void HeatmapView::Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 origin = ImGui::GetCursorScreenPos();
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
  const int rows = static_cast<int>(w.rows()), cols = static_cast<int>(w.cols());
  const float s = ctx.pixel_scale;
  const ColorScale& range = ctx.shown->scale;

  // Labels and their widths (rows and columns name the same tokens).
  std::vector<std::string> labels(static_cast<size_t>(std::max(rows, cols)));
  float label_w = 0.0f;
  for (int i = 0; i < static_cast<int>(labels.size()); ++i) {
    labels[i] = i < static_cast<int>(tokens.size()) ? token_label(tokens[i], kMaxLabelChars) : "?";
    label_w = std::max(label_w, ImGui::CalcTextSize(labels[i].c_str()).x);
  }
  const float font = ImGui::GetFontSize();
  const float pad = 6.0f;
  const float margin_left = std::min(label_w, font * 8) + 2 * pad + font * 0.6f;  // + focus marker
  const float margin_top = std::min(label_w, font * 8) + 2 * pad;
  ImGui::PushFont(ctx.fonts.mono);
  const float mono = ImGui::GetFontSize();
  const float tick_w = ImGui::CalcTextSize("0.000").x;
  const float number_w = ImGui::CalcTextSize("0.00").x;
  ImGui::PopFont();
  const float bar_w = font * 0.9f, margin_right = bar_w + tick_w + 3 * pad + font * 0.4f;
  float cell =
      std::min((size.x - margin_left - margin_right) / cols, (size.y - margin_top - pad) / rows);
  cell = std::clamp(cell, 1.0f / s, font * 3.2f);
  if (cell * s >= 4) cell = snap(cell, s);
  const float x0 = snap(origin.x + margin_left, s), y0 = snap(origin.y + margin_top, s);
  const float grid_w = cell * cols, grid_h = cell * rows;

  // GPU pass: only when the matrix, colormap or range changed.
  std::uint64_t key = cache_key(range);
  if (drawn_shown != ctx.shown || drawn_key != key || cells.width() != cols ||
      cells.height() != rows) {
    render_cells(renderer, w, range, values, cells);
    Matrix ramp(256, 1);  // top = vmax, bottom = vmin (positions on the colormap)
    for (int i = 0; i < 256; ++i) ramp(i, 0) = 1.0f - i / 255.0f;
    renderer.render(ramp, range.colormap, 0.0f, 1.0f, bar_values, bar);
    drawn_shown = ctx.shown;
    drawn_key = key;
  }
  const auto texture = [](const GlFramebuffer& fb) {
    return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(fb.color().id()));
  };
  dl->AddImage(texture(cells), ImVec2(x0, y0), ImVec2(x0 + grid_w, y0 + grid_h));

  // Numbers in the cells when they fit.
  if (cell >= mono * 2.1f && cell >= number_w + 4) {
    ImGui::PushFont(ctx.fonts.mono);
    char buf[16];
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        std::snprintf(buf, sizeof buf, "%.2f", w(i, j));
        ImVec2 ts = ImGui::CalcTextSize(buf);
        dl->AddText(ImVec2(x0 + j * cell + (cell - ts.x) / 2, y0 + i * cell + (cell - ts.y) / 2),
                    text_color_on(range.colormap, range.position(w(i, j)), 0.0f, 1.0f), buf);
      }
    ImGui::PopFont();
  }

  // Axis labels; with tiny cells only every k-th one.
  const int every = std::max(1, static_cast<int>(std::ceil(font * 0.85f / cell)));
  nlohmann::json row_json = nlohmann::json::array(), col_json = nlohmann::json::array();
  for (int i = 0; i < rows; i += every) {
    ImVec2 ts = ImGui::CalcTextSize(labels[i].c_str());
    ImVec2 p(x0 - pad - std::min(ts.x, margin_left), y0 + i * cell + (cell - ts.y) / 2);
    bool focused = i == ctx.focus;
    const Token* t = i < static_cast<int>(tokens.size()) ? &tokens[i] : nullptr;
    ImU32 c = focused                             ? colors.focus
              : (t && t->generated)               ? colors.accent  // the model wrote it
              : (t && (t->special || t->unknown)) ? colors.text_dim
                                                  : colors.text;
    dl->AddText(p, c, labels[i].c_str());
    if (ctx.layout)
      row_json.push_back({{"index", i},
                          {"text", labels[i]},
                          {"x", p.x * s},
                          {"y", p.y * s},
                          {"w", ts.x * s},
                          {"h", ts.y * s}});
  }
  for (int j = 0; j < cols; j += every) {
    ImVec2 ts = ImGui::CalcTextSize(labels[j].c_str());
    ImVec2 p(x0 + j * cell + (cell - ts.y) / 2, y0 - pad);
    const Token* t = j < static_cast<int>(tokens.size()) ? &tokens[j] : nullptr;
    add_text_vertical(dl, p,
                      (t && t->generated)                 ? colors.accent
                      : (t && (t->special || t->unknown)) ? colors.text_dim
                                                          : colors.text,
                      labels[j].c_str());
    if (ctx.layout)
      col_json.push_back({{"index", j},
                          {"text", labels[j]},
                          {"x", p.x * s},
                          {"y", (p.y - ts.x) * s},
                          {"w", ts.y * s},
                          {"h", ts.x * s}});
  }
  // Several selected queries: a bar left of each selected row and a frame around the rows.
  for (int q : ctx.shown->queries) {
    const float ya = y0 + q * cell, yb = ya + cell;
    dl->AddRectFilled(ImVec2(x0 - std::max(3.0f, font * 0.25f), ya), ImVec2(x0 - 1, yb),
                      colors.focus);
    dl->AddRect(ImVec2(x0, ya), ImVec2(x0 + grid_w, yb), with_alpha(colors.focus, 0.9f), 0, 0,
                std::max(1.0f, std::min(2.0f, cell * 0.2f)));
  }
  // Focus marker: a triangle left of the focused row (never drawn over the cells).
  if (ctx.focus >= 0 && ctx.focus < rows) {
    float cy = y0 + (ctx.focus + 0.5f) * cell,
          r = std::min(font * 0.35f, std::max(cell * 0.5f, 3.0f));
    dl->AddTriangleFilled(ImVec2(origin.x + 1, cy - r), ImVec2(origin.x + 1, cy + r),
                          ImVec2(origin.x + 1 + r * 1.4f, cy), colors.focus);
  }

  // Colorbar with ticks.
  const float bx = x0 + grid_w + 2 * pad;
  dl->AddImage(texture(bar), ImVec2(bx, y0), ImVec2(bx + bar_w, y0 + grid_h));
  dl->AddRect(ImVec2(bx, y0), ImVec2(bx + bar_w, y0 + grid_h), colors.panel_line);
  ImGui::PushFont(ctx.fonts.mono);
  const int ticks = grid_h > mono * 6 ? 5 : grid_h > mono * 2.5f ? 2 : 1;
  for (int k = 0; k < ticks; ++k) {
    float f = ticks == 1 ? 0.0f : static_cast<float>(k) / (ticks - 1);
    float y = y0 + grid_h * f, v = range.weight_at(1.0f - f);
    char buf[16];
    std::snprintf(buf, sizeof buf, range.log && v < 0.01f ? "%.0e" : "%.2f", v);
    dl->AddLine(ImVec2(bx + bar_w, y), ImVec2(bx + bar_w + 3, y), colors.text);
    float ty = std::clamp(y - mono / 2, y0 - mono / 2, y0 + grid_h - mono / 2);
    dl->AddText(ImVec2(bx + bar_w + 3 + font * 0.4f, ty), colors.text, buf);
  }
  ImGui::PopFont();

  // Interaction: hover a cell (tooltip, focus its query), click to lock.
  ImGui::SetCursorScreenPos(ImVec2(origin.x, y0));
  ImGui::InvisibleButton("##heatmap",
                         ImVec2(std::max(1.0f, x0 - origin.x + grid_w), std::max(1.0f, grid_h)));
  // Hover works while the sentence box still has the keyboard (the user just typed): an active
  // text box would otherwise block every other item's hover.
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
    ImVec2 m = ImGui::GetIO().MousePos;
    int i = static_cast<int>((m.y - y0) / cell), j = static_cast<int>((m.x - x0) / cell);
    if (i >= 0 && i < rows) {
      ctx.app.focus.hover(ctx.slot, i);
      if (ImGui::IsItemClicked()) ctx.app.slots[ctx.slot].locked_token = i;
      if (j >= 0 && j < cols) {
        dl->AddRect(ImVec2(x0 + j * cell, y0 + i * cell),
                    ImVec2(x0 + (j + 1) * cell, y0 + (i + 1) * cell), colors.focus, 0.0f, 0, 2.0f);
        ImGui::BeginTooltip();
        ImGui::Text("query  %s", labels[i].c_str());
        ImGui::Text("key    %s", labels[j].c_str());
        ImGui::PushFont(ctx.fonts.mono);
        ImGui::Text("weight %.3f", w(i, j));
        ImGui::PopFont();
        ImGui::EndTooltip();
      }
    }
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(size);

  if (ctx.layout)
    ctx.layout->push_back(
        {{"view", "heatmap"},
         {"slot", ctx.slot},
         {"layer", ctx.app.layer},
         {"head", ctx.app.head},
         {"rows", rows},
         {"cols", cols},
         {"x0", x0 * s},
         {"y0", y0 * s},
         {"cell_w", cell * s},
         {"cell_h", cell * s},
         {"vmin", range.vmin},
         {"vmax", range.vmax},
         {"log_scale", range.log},
         {"title", ctx.shown->title},
         {"aggregate", ctx.shown->options.aggregate},
         {"hidden_keys", ctx.shown->hidden_key},
         {"selected_queries", ctx.shown->queries},
         {"combined_row", ctx.shown->combined},
         {"colormap", colormaps()[range.colormap].name},
         {"numbers", cell >= mono * 2.1f && cell >= number_w + 4},
         {"colorbar", {{"x", bx * s}, {"y", y0 * s}, {"w", bar_w * s}, {"h", grid_h * s}}},
         {"weights",
          [&] {
            nlohmann::json m = nlohmann::json::array();
            for (int i = 0; i < rows; ++i) {
              nlohmann::json r = nlohmann::json::array();
              for (int j = 0; j < cols; ++j) r.push_back(w(i, j));
              m.push_back(r);
            }
            return m;
          }()},
         {"row_labels", row_json},
         {"col_labels", col_json},
         {"focus", ctx.focus}});
}

}  // namespace attnscope
