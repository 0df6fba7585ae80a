#include "app/views/lens_view.h"

#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

void LensView::Draw(ViewContext& ctx) {
  const ThemeColors& colors = theme_colors();
  if (!ctx.trace) return;
  if (!ctx.probe) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colors.text_dim));
    ImGui::TextWrapped(ctx.toggle_ablation
                           ? "computing the logit lens\xE2\x80\xA6"
                           : "The logit lens reads a decoder's residual stream after every block "
                             "(GPT-2, Llama, \xE2\x80\xA6); this model has none.");
    ImGui::PopStyleColor();
    return;
  }
  const ProbeResult& r = *ctx.probe;
  if (!r.error.empty()) {
    text_wrapped_message(r.error, colors.error);
    return;
  }
  if (r.lens.empty() || r.at < 0 || r.at >= static_cast<int>(ctx.trace->tokens.size())) return;
  std::string title = "the next token after \"";
  title += token_label(*ctx.trace, r.at, 16);
  title += "\" (#";
  title += std::to_string(r.at);
  title += ") as read after each layer";
  shaped_text(title, colors.accent);
  if (r.intervened) text_dim("clean run (the interventions change the Next token tab)");
  const float font = ImGui::GetFontSize();
  ImGui::PushFont(ctx.fonts.mono);
  const float label_w = ImGui::CalcTextSize("embed ").x;
  ImGui::PopFont();
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float width = ImGui::GetContentRegionAvail().x;
  const int columns = static_cast<int>(r.lens.front().size());
  const float cell_w = std::max(font * 3, (width - label_w - gap) / std::max(1, columns) - 2);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  nlohmann::json rows = nlohmann::json::array();
  // The last layer on top, as the residual stream flows upwards in most diagrams; the row that
  // equals the prediction is the first one read.
  for (int b = static_cast<int>(r.lens.size()) - 1; b >= 0; --b) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeightWithSpacing();
    char label[16];
    if (b == 0)
      std::snprintf(label, sizeof label, "embed");
    else
      std::snprintf(label, sizeof label, "L%d", b - 1);
    ImGui::PushFont(ctx.fonts.mono);
    dl->AddText(p, colors.text_dim, label);
    ImGui::PopFont();
    nlohmann::json cells = nlohmann::json::array();
    for (int c = 0; c < static_cast<int>(r.lens[b].size()); ++c) {
      const TokenProbability& t = r.lens[b][c];
      const float x = p.x + label_w + gap + c * (cell_w + 2);
      const float w = static_cast<float>(std::clamp(t.probability, 0.0, 1.0));
      const ImU32 bg = colormap_color(ctx.app.colormap, w, 0.0f, 1.0f);
      dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + cell_w, p.y + h - 2), bg, 2.0f);
      ImGui::PushClipRect(ImVec2(x, p.y), ImVec2(x + cell_w - 2, p.y + h), true);
      text_layer().draw(dl, ImVec2(x + 3, p.y), bytes_label(t.text, 12), font,
                        text_color_on(ctx.app.colormap, w, 0.0f, 1.0f));
      ImGui::PopClipRect();
      if (ImGui::IsMouseHoveringRect(ImVec2(x, p.y), ImVec2(x + cell_w, p.y + h))) {
        ImGui::BeginTooltip();
        ImGui::Text("%s  id %d  p = %.4f", bytes_label(t.text, 24).c_str(), t.id, t.probability);
        ImGui::EndTooltip();
      }
      if (ctx.layout) cells.push_back({{"id", t.id}, {"text", t.text}, {"p", t.probability}});
    }
    ImGui::Dummy(ImVec2(width, h));
    if (ctx.layout) rows.push_back({{"after_block", b - 1}, {"top", cells}});
  }
  if (ctx.layout)
    ctx.layout->push_back({{"view", "lens"}, {"slot", ctx.slot}, {"at", r.at}, {"layers", rows}});
}

}  // namespace attnscope
