// The model view's hover popup (model_view.h): one head's thumbnail enlarged, with its token axes
// (queries down the left, keys along the top, as the heatmap has them) and every summary by name.
// It is placed by hand instead of by ImGui's tooltip logic, which keeps a tooltip inside the
// display but not off the status bar: here it stays between the top of the window and the top of
// the status bar, and shrinks its map when it would not fit there.
#include <algorithm>
#include <cmath>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "app/views/model_view.h"

namespace attnscope {

void ModelView::DrawHoverPopup(ViewContext& ctx, int l, int h, float thumb, float top, float bottom,
                               nlohmann::json& json) {
  const ThemeColors& colors = theme_colors();
  const AttentionTrace& trace = *ctx.trace;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font = ImGui::GetFontSize(), s = ctx.pixel_scale;
  const float axis_font = std::round(font * 0.85f);
  const int keys = static_cast<int>(summaries.names.size());
  const int rows = std::max(1, atlas.texel_rows()), cols = std::max(1, atlas.texel_cols());
  const int n_rows = trace.queries(), n_cols = trace.keys();
  const bool pooled = atlas.pool_rows() > 1 || atlas.pool_cols() > 1;
  // Texel t of a side of `texels` shows tokens from t·n/texels on (max-pooled blocks).
  const auto token_of = [](int t, int texels, int n) { return t * n / texels; };
  TextLayer& text = text_layer();
  const auto label_of = [&](int i) {
    return i < static_cast<int>(trace.tokens.size()) ? token_label(trace, i, 10) : std::string("?");
  };
  float label_w = 0;
  for (int r = 0; r < rows; ++r)
    label_w = std::max(label_w, text.measure(label_of(token_of(r, rows, n_rows)), axis_font).x);
  for (int c = 0; c < cols; ++c)
    label_w = std::max(label_w, text.measure(label_of(token_of(c, cols, n_cols)), axis_font).x);
  const float label_room = std::min(label_w, font * 7) + font * 0.5f;  // longer ones end in "…"

  // The map's side: larger than the thumbnail, within what lies between top and bottom.
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  const int text_lines = 1 + (pooled ? 1 : 0) + keys + 1;
  const float chrome =
      2 * style.WindowPadding.y + text_lines * line_h + label_room + style.ItemSpacing.y;
  float big = std::min(std::max(font * 16, thumb * 2), ImGui::GetIO().DisplaySize.y * 0.6f);
  big = std::max(font * 4, std::min(big, bottom - top - chrome - 2));
  const float aspect = static_cast<float>(cols) / static_cast<float>(rows);
  const float map_w = big * std::min(aspect, 1.0f), map_h = big / std::max(aspect, 1.0f);

  // Beside the pointer, flipped left at the window's right edge, inside [top, bottom]. Its size:
  // an estimate from what it holds, or last frame's if larger (ImGui sizes a tooltip only after
  // its first frame, so last frame's alone would misplace it when it appears).
  const char* hint = "click: focus this head in every view";
  ImGui::PushFont(ctx.fonts.mono);
  const float summary_w = ImGui::CalcTextSize("induction  0.000  ").x;
  ImGui::PopFont();
  const ImVec2 popup(
      std::max(popup_size_.x,
               2 * style.WindowPadding.x +
                   std::max({label_room + map_w, ImGui::CalcTextSize(hint).x, summary_w})),
      std::max(popup_size_.y, chrome + map_h + style.ItemSpacing.y));
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImVec2 pos(mouse.x + font * 1.2f, mouse.y + font * 1.2f);
  if (pos.x + popup.x > vp->Pos.x + vp->Size.x) pos.x = mouse.x - font * 1.2f - popup.x;
  pos.x = std::max(pos.x, vp->Pos.x);
  pos.y = std::max(top, std::min(pos.y, bottom - popup.y));
  ImGui::SetNextWindowPos(pos);
  ImGui::BeginTooltip();
  ImGui::Text("layer %d \xC2\xB7 head %d", l, h);  // from 0, as everywhere

  // The map with its axes: queries down the left, keys along the top (read bottom to top).
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(label_room + map_w, label_room + map_h));
  const ImVec2 a(p.x + label_room, p.y + label_room), b(a.x + map_w, a.y + map_h);
  dl->AddImage(atlas.texture(), a, b, atlas.uv0(l, h), atlas.uv1(l, h));
  const float cell_y = map_h / rows, cell_x = map_w / cols;
  const int every_r = std::max(1, static_cast<int>(std::ceil(axis_font * 1.1f / cell_y)));
  const int every_c = std::max(1, static_cast<int>(std::ceil(axis_font * 1.1f / cell_x)));
  nlohmann::json row_json = nlohmann::json::array(), col_json = nlohmann::json::array();
  const auto record = [&](nlohmann::json& out, int index, const std::string& label,
                          const DrawnText& drawn) {
    out.push_back({{"index", index},
                   {"text", label},
                   {"x", drawn.min.x * s},
                   {"y", drawn.min.y * s},
                   {"w", (drawn.max.x - drawn.min.x) * s},
                   {"h", (drawn.max.y - drawn.min.y) * s}});
  };
  TextOptions right;
  right.anchor = ImVec2(1, 0);  // right-aligned against the map
  right.max_width = label_room - font * 0.5f;
  for (int r = 0; r < rows; r += every_r) {
    const int i = token_of(r, rows, n_rows);
    const std::string label = label_of(i);
    const DrawnText drawn =
        text.draw(dl, ImVec2(a.x - font * 0.25f, a.y + (r + 0.5f) * cell_y - axis_font / 2), label,
                  axis_font, colors.text, right);
    record(row_json, i, label, drawn);
  }
  TextOptions up;
  up.vertical = true;  // reads bottom to top, its start at the map
  up.max_width = label_room - font * 0.5f;
  for (int c = 0; c < cols; c += every_c) {
    const int j = token_of(c, cols, n_cols);
    const std::string label = label_of(j);
    const DrawnText drawn =
        text.draw(dl, ImVec2(a.x + (c + 0.5f) * cell_x - axis_font / 2, a.y - font * 0.25f), label,
                  axis_font, colors.text, up);
    record(col_json, j, label, drawn);
  }
  if (pooled)
    text_dim("max of each %d \xC3\x97 %d block (%d tokens)", atlas.pool_rows(), atlas.pool_cols(),
             static_cast<int>(trace.tokens.size()));
  ImGui::PushFont(ctx.fonts.mono);
  for (int k = 0; k < keys; ++k)
    ImGui::Text("%-10s %6.3f", summaries.names[k].c_str(), summaries.value(l, h, k));
  ImGui::PopFont();
  text_dim("%s", hint);
  const ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
  popup_size_ = ws;
  ImGui::EndTooltip();
  if (!ctx.layout) return;
  json = {{"layer", l},
          {"head", h},
          {"x", a.x * s},
          {"y", a.y * s},
          {"w", map_w * s},
          {"h", map_h * s},
          {"row_labels", row_json},
          {"col_labels", col_json},
          {"popup", {{"x", wp.x * s}, {"y", wp.y * s}, {"w", ws.x * s}, {"h", ws.y * s}}}};
}

}  // namespace attnscope
