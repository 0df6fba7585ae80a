#include "app/views/sentence_view.h"

#include <algorithm>
#include <cctype>

#include <imgui_stdlib.h>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
constexpr int kStripLines = 4;         // a long input scrolls in this many lines
constexpr int kSearchFromTokens = 40;  // the search box appears for inputs this long

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

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

void SentenceView::Place(const AttentionTrace& trace, float width, float font) {
  const Tokens& tokens = trace.tokens;
  const float pad_x = font * 0.22f, gap = font * 0.3f;
  const int n = static_cast<int>(tokens.size());
  labels.resize(static_cast<size_t>(n));
  places.resize(static_cast<size_t>(n));
  line_starts.assign(1, 0);
  float x = 0;
  for (int i = 0; i < n; ++i) {
    labels[i] = token_label(trace, static_cast<std::size_t>(i), 24);
    const float box_w = text_layer().measure(labels[i], font).x + 2 * pad_x;
    if (x > 0 && x + box_w > width) {
      x = 0;
      line_starts.push_back(i);
    }
    places[i] = {x, box_w, static_cast<int>(line_starts.size()) - 1};
    x += box_w + gap;
  }
}

void SentenceView::DrawSearch(ViewContext& ctx) {
  const Tokens& tokens = ctx.trace->tokens;
  const float font = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(font * 12);
  const bool enter = ImGui::InputTextWithHint(ctx.slot == 0 ? "##find0" : "##find1", "find a token",
                                              &search, ImGuiInputTextFlags_EnterReturnsTrue);
  const bool edited = ImGui::IsItemEdited();
  if (enter) ImGui::SetKeyboardFocusHere(-1);  // Enter steps to the next match: keep the box
  // Matches: tokens whose label contains the text, ignoring ASCII case.
  std::vector<int> hits;
  const std::string needle = lower(search);
  if (!needle.empty())
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i)
      if (lower(labels[i]).find(needle) != std::string::npos) hits.push_back(i);
  ImGui::SameLine();
  const bool next = ImGui::ArrowButton(ctx.slot == 0 ? "##next0" : "##next1", ImGuiDir_Down);
  ImGui::SameLine();
  const bool previous = ImGui::ArrowButton(ctx.slot == 0 ? "##prev0" : "##prev1", ImGuiDir_Up);
  if (!hits.empty() && (enter || next || previous || edited)) {
    // Step from the last hit (or the locked token) to the next/previous match, wrapping.
    const int from = search_hit >= 0 ? search_hit : ctx.app.slots[ctx.slot].locked_token;
    auto it = std::upper_bound(hits.begin(), hits.end(), from);
    if (edited && !enter && !next && !previous)  // the text changed: stay on a hit that still fits
      it = std::lower_bound(hits.begin(), hits.end(), std::max(search_hit, 0));
    if (previous) {
      auto back = std::lower_bound(hits.begin(), hits.end(), from);
      it = back == hits.begin() ? hits.end() - 1 : back - 1;
    } else if (it == hits.end()) {
      it = hits.begin();
    }
    search_hit = *it;
    ctx.app.slots[ctx.slot].locked_token = search_hit;
    scroll_to_token = search_hit;
  }
  ImGui::SameLine();
  const auto dim = ImGui::ColorConvertU32ToFloat4(theme_colors().text_dim);
  if (needle.empty()) {
    ImGui::TextColored(dim, "%d tokens", static_cast<int>(tokens.size()));
  } else if (hits.empty()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().warning), "no token matches");
    search_hit = -1;
  } else {
    const int at =
        static_cast<int>(std::lower_bound(hits.begin(), hits.end(), search_hit) - hits.begin());
    if (at < static_cast<int>(hits.size()) && hits[at] == search_hit)
      ImGui::TextColored(dim, "token #%d \xC2\xB7 match %d of %d (Enter: next)", search_hit, at + 1,
                         static_cast<int>(hits.size()));
    else
      ImGui::TextColored(dim, "%d matches (Enter: go)", static_cast<int>(hits.size()));
  }
}

void SentenceView::Draw(ViewContext& ctx, float width, bool large) {
  const ThemeColors& colors = theme_colors();
  if (!ctx.trace) return;
  const Tokens& tokens = ctx.trace->tokens;
  const int n = static_cast<int>(tokens.size());
  ImGui::PushFont(large ? ctx.fonts.big : ctx.fonts.ui);
  const float h = ImGui::GetFontSize(), pad_x = h * 0.22f, line_h = h * 1.55f;
  const float density = ImGui::GetIO().DisplayFramebufferScale.x;  // labels measured at it
  if (placed_for != ctx.trace || placed_width != width || placed_font != h ||
      placed_density != density) {
    Place(*ctx.trace, width - ImGui::GetStyle().ScrollbarSize, h);
    placed_for = ctx.trace, placed_width = width, placed_font = h, placed_density = density;
    if (search_hit >= n) search_hit = -1;
  }
  const int lines = static_cast<int>(line_starts.size());
  const int strip_lines = large ? kStripLines : 2;  // small windows keep room for the heatmap
  if (n >= kSearchFromTokens || lines > strip_lines) {
    ImGui::PopFont();
    DrawSearch(ctx);
    ImGui::PushFont(large ? ctx.fonts.big : ctx.fonts.ui);
  }
  if (!ImGui::IsMouseDown(0)) drag_anchor = -1;
  const float* row = ctx.shown ? ctx.shown->focus_row(ctx.focus) : nullptr;
  const bool tint = row != nullptr && ctx.weights;
  const std::vector<int> no_selection;
  const std::vector<int>& selected = ctx.shown ? ctx.shown->queries : no_selection;

  // The strip: all lines when they fit, else kStripLines of them with a scrollbar.
  const float strip_h =
      line_h * std::min(lines, strip_lines) + (lines > strip_lines ? h * 0.2f : 0);
  ImGui::BeginChild(ctx.slot == 0 ? "##strip0" : "##strip1", ImVec2(width, strip_h), false,
                    lines > strip_lines ? 0 : ImGuiWindowFlags_NoScrollbar);
  if (scroll_to_token >= 0 && scroll_to_token < n) {
    const float y = places[scroll_to_token].line * line_h;
    ImGui::SetScrollY(std::max(0.0f, y - (strip_h - line_h) / 2));
    scroll_to_token = -1;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  nlohmann::json boxes = nlohmann::json::array();
  int first_line = lines, last_line = -1;
  ImGuiListClipper clipper;
  clipper.Begin(lines, line_h);
  while (clipper.Step())
    for (int line = clipper.DisplayStart; line < clipper.DisplayEnd; ++line) {
      first_line = std::min(first_line, line), last_line = std::max(last_line, line);
      const int end = line + 1 < lines ? line_starts[line + 1] : n;
      const float y = top.y + line * line_h;
      for (int i = line_starts[line]; i < end; ++i) {
        const float x = top.x + places[i].x;
        ImVec2 a(x, y), b(x + places[i].w, y + h * 1.3f);
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
          dl->AddRectFilled(ImVec2(a.x + pad_x, b.y + h * 0.06f),
                            ImVec2(b.x - pad_x, b.y + h * 0.16f), colors.accent);
        }
        const bool in_selection = std::binary_search(selected.begin(), selected.end(), i);
        if (i == ctx.focus || in_selection)
          dl->AddRect(a, b, colors.focus, h * 0.2f, 0, std::max(2.0f, h * 0.12f));
        if (in_selection)  // a bar under each selected query
          dl->AddRectFilled(ImVec2(a.x, b.y + 1), ImVec2(b.x, b.y + std::max(3.0f, h * 0.15f)),
                            colors.focus);
        if (i == search_hit && i != ctx.focus) dl->AddRect(a, b, colors.accent, h * 0.2f, 0, 1.5f);
        const DrawnText drawn =
            text_layer().draw(dl, ImVec2(x + pad_x, y + h * 0.15f), labels[i], h, fg);
        if (ImGui::IsMouseHoveringRect(a, b) &&
            ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
          ctx.app.focus.hover(ctx.slot, i);
          HandleSelection(ctx, i);
        }
        if (ctx.layout)
          boxes.push_back({{"index", i},
                           {"text", labels[i]},
                           {"x", a.x * ctx.pixel_scale},
                           {"y", a.y * ctx.pixel_scale},
                           {"w", places[i].w * ctx.pixel_scale},
                           {"h", (b.y - a.y) * ctx.pixel_scale},
                           {"generated", tokens[i].generated},
                           {"label", label_json(i, labels[i], drawn, ctx.pixel_scale)}});
      }
    }
  const float scroll = ImGui::GetScrollY();
  ImGui::EndChild();
  ImGui::PopFont();
  if (ctx.layout)
    ctx.layout->push_back({{"view", "sentence"},
                           {"slot", ctx.slot},
                           {"tokens", boxes},
                           {"total", n},
                           {"lines", lines},
                           {"first_line", first_line},
                           {"last_line", last_line},
                           {"scroll", scroll * ctx.pixel_scale},
                           {"search_hit", search_hit},
                           {"focus", ctx.focus},
                           {"selected_queries", selected}});
}

}  // namespace attnscope
