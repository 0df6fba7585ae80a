#include "app/views/sentence_view.h"

#include <algorithm>

#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
constexpr int kMaxTokensShown = 400;  // a huge paste shows its start; the heatmap shows all
}

void SentenceView::HandleSelection(ViewContext& ctx, int token) {
  SlotState& slot = ctx.app.slots[ctx.slot];
  std::vector<int>& sel = slot.selected_queries;
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsMouseClicked(0)) {
    if (io.KeyShift) {
      // Shift-click: start from the locked token, then add or remove this one.
      if (sel.empty() && slot.locked_token >= 0 && slot.locked_token != token)
        sel.push_back(slot.locked_token);
      auto it = std::find(sel.begin(), sel.end(), token);
      if (it != sel.end())
        sel.erase(it);
      else
        sel.push_back(token);
      std::sort(sel.begin(), sel.end());
      drag_anchor = -1;
    } else {
      sel.clear();
      slot.locked_token = token;
      drag_anchor = token;
    }
  } else if (drag_anchor >= 0 && ImGui::IsMouseDown(0) && token != drag_anchor) {
    // A drag across tokens selects the range between where it started and here.
    sel.clear();
    for (int i = std::min(drag_anchor, token); i <= std::max(drag_anchor, token); ++i)
      sel.push_back(i);
  }
}

void SentenceView::Draw(ViewContext& ctx, float width, bool large) {
  const ThemeColors& colors = theme_colors();
  if (!ctx.trace) return;
  const Tokens& tokens = ctx.trace->tokens;
  ImGui::PushFont(large ? ctx.fonts.big : ctx.fonts.ui);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetFontSize(), pad_x = h * 0.22f, gap = h * 0.3f, line_h = h * 1.55f;
  if (!ImGui::IsMouseDown(0)) drag_anchor = -1;
  const float* row = ctx.shown ? ctx.shown->focus_row(ctx.focus) : nullptr;
  const bool tint = row != nullptr;
  const std::vector<int> no_selection;
  const std::vector<int>& selected = ctx.shown ? ctx.shown->queries : no_selection;
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
      const float t = ctx.shown->scale.position(row[i]);
      bg = colormap_color(ctx.shown->scale.colormap, t, 0.0f, 1.0f);
      fg = text_color_on(ctx.shown->scale.colormap, t, 0.0f, 1.0f);
    }
    if (tokens[i].special) fg = (fg & 0x00FFFFFF) | 0xA0000000;
    dl->AddRectFilled(a, b, bg, h * 0.2f);
    // A token the model wrote (generation): outlined and underlined in the accent colour.
    if (tokens[i].generated) {
      dl->AddRect(a, b, colors.accent, h * 0.2f, 0, std::max(1.0f, h * 0.07f));
      dl->AddRectFilled(ImVec2(a.x + pad_x, b.y + h * 0.06f), ImVec2(b.x - pad_x, b.y + h * 0.16f),
                        colors.accent);
    }
    const bool in_selection = std::binary_search(selected.begin(), selected.end(), i);
    if (i == ctx.focus || in_selection)
      dl->AddRect(a, b, colors.focus, h * 0.2f, 0, std::max(2.0f, h * 0.12f));
    if (in_selection)  // a bar under each selected query
      dl->AddRectFilled(ImVec2(a.x, b.y + 1), ImVec2(b.x, b.y + std::max(3.0f, h * 0.15f)),
                        colors.focus);
    dl->AddText(ImVec2(x + pad_x, y + h * 0.15f), fg, label.c_str());
    if (ImGui::IsMouseHoveringRect(a, b) &&
        ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
      ctx.app.focus.hover(ctx.slot, i);
      HandleSelection(ctx, i);
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
    ctx.layout->push_back({{"view", "sentence"},
                           {"slot", ctx.slot},
                           {"tokens", boxes},
                           {"focus", ctx.focus},
                           {"selected_queries", selected}});
}

}  // namespace attnscope
