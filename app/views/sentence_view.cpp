#include "app/views/sentence_view.h"

#include <algorithm>

#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
constexpr int kMaxTokensShown = 400;  // a huge paste shows its start; the heatmap shows all
}

void SentenceView::Draw(ViewContext& ctx, float width, bool large) {
  const ThemeColors& colors = theme_colors();
  if (!ctx.trace) return;
  const Tokens& tokens = ctx.trace->tokens;
  ImGui::PushFont(large ? ctx.fonts.big : ctx.fonts.ui);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetFontSize(), pad_x = h * 0.22f, gap = h * 0.3f, line_h = h * 1.55f;
  const bool tint = ctx.weights && ctx.focus >= 0 && ctx.focus < ctx.weights->rows();
  WeightRange range = ctx.weights ? weight_range(*ctx.weights, ctx.app.fixed_range) : WeightRange{};
  float x = origin.x, y = origin.y;
  const int shown = std::min(static_cast<int>(tokens.size()), kMaxTokensShown);
  nlohmann::json boxes = nlohmann::json::array();
  for (int i = 0; i < shown; ++i) {
    std::string label = token_label(tokens[i], 24);
    ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    float box_w = ts.x + 2 * pad_x;
    if (x > origin.x && x + box_w > origin.x + width) {
      x = origin.x;
      y += line_h;
    }
    ImVec2 a(x, y), b(x + box_w, y + h * 1.3f);
    ImU32 bg = colors.token_bg, fg = colors.text;
    if (tint && i < ctx.weights->cols()) {
      float w = (*ctx.weights)(ctx.focus, i);
      bg = colormap_color(ctx.app.colormap, w, range.vmin, range.vmax);
      fg = text_color_on(ctx.app.colormap, w, range.vmin, range.vmax);
    }
    if (tokens[i].special) fg = (fg & 0x00FFFFFF) | 0xA0000000;
    dl->AddRectFilled(a, b, bg, h * 0.2f);
    // A token the model wrote (generation): outlined and underlined in the accent colour.
    if (tokens[i].generated) {
      dl->AddRect(a, b, colors.accent, h * 0.2f, 0, std::max(1.0f, h * 0.07f));
      dl->AddRectFilled(ImVec2(a.x + pad_x, b.y + h * 0.06f), ImVec2(b.x - pad_x, b.y + h * 0.16f),
                        colors.accent);
    }
    if (i == ctx.focus) dl->AddRect(a, b, colors.focus, h * 0.2f, 0, std::max(2.0f, h * 0.12f));
    dl->AddText(ImVec2(x + pad_x, y + h * 0.15f), fg, label.c_str());
    if (ImGui::IsMouseHoveringRect(a, b) &&
        ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
      ctx.app.focus.hover(ctx.slot, i);
      if (ImGui::IsMouseClicked(0)) ctx.app.slots[ctx.slot].locked_token = i;
    }
    if (ctx.layout)
      boxes.push_back({{"index", i},
                       {"text", label},
                       {"x", a.x * ctx.pixel_scale},
                       {"y", a.y * ctx.pixel_scale},
                       {"w", box_w * ctx.pixel_scale},
                       {"h", (b.y - a.y) * ctx.pixel_scale},
                       {"generated", tokens[i].generated}});
    x += box_w + gap;
  }
  if (shown < static_cast<int>(tokens.size())) {
    ImGui::PopFont();
    ImGui::SetCursorScreenPos(ImVec2(origin.x, y + line_h));
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.text_dim), "… and %d more tokens",
                       static_cast<int>(tokens.size()) - shown);
    ImGui::PushFont(large ? ctx.fonts.big : ctx.fonts.ui);
    y += ImGui::GetFontSize();
  }
  ImGui::PopFont();
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(width, y - origin.y + line_h));
  if (ctx.layout)
    ctx.layout->push_back(
        {{"view", "sentence"}, {"slot", ctx.slot}, {"tokens", boxes}, {"focus", ctx.focus}});
}

}  // namespace attnscope
