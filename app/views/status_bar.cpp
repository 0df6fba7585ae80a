#include "app/views/status_bar.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: a grown bar lies over the panels

#include "app/ui/imgui_text.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
// The longest message shown. Real ones (a path, a session error) are a few hundred bytes; a
// hostile one (a 6,000-character path) would need more vertices than Debian's 16-bit-index ImGui
// can draw in one window, and would cover the screen.
constexpr std::size_t kMaxMessageBytes = 1000;

struct Item {
  const char* kind;
  std::string text;  // as the user reads it (UTF-8)
  ImU32 color;
  bool dismiss = false;  // an × after it closes it
  // Placement, relative to the bar's content origin: the row it starts on, x, its size.
  int row = 0, rows = 1;
  float x = 0, w = 0, wrap_w = 0;  // wrap_w > 0: wrapped at that width over `rows` rows
};

std::string printf_string(const char* fmt, ...) IM_FMTARGS(1);
std::string printf_string(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}
}  // namespace

void StatusBar::Draw(const App& app, float frame_ms, float height) {
  const AppState& st = app.state;
  // A new error replaces the kept one; a notice after it leaves it in place.
  if (st.message != seen_message_ || st.message_is_error != seen_error_) {
    seen_message_ = st.message, seen_error_ = st.message_is_error;
    if (seen_error_ && !seen_message_.empty()) error_ = seen_message_;
  }
  const ThemeColors& colors = theme_colors();
  std::vector<Item> items;
  if (st.model) {
    const ModelInfo& info = st.model_info;
    // A GGUF says so, with its quantisation: "(llama, 16×32, GGUF Q4_K_M)".
    std::string source;
    if (!info.source.empty()) {
      source = ", ";
      for (const char c : info.source.format)
        source += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (!info.source.file_type.empty()) source.append(" ").append(info.source.file_type);
    }
    items.push_back({"model",
                     printf_string("model %s (%s, %d\xC3\x97%d%s)", info.name.c_str(),
                                   info.kind.c_str(), info.layers, info.heads, source.c_str()),
                     colors.text});
  } else {
    items.push_back({"model", "no model", colors.error});
  }
  // Built with append: GCC 12 warns falsely (-Wstringop-overflow) on "literal" + std::string.
  std::string backend = "backend ";
  backend.append(st.backend ? st.backend->name() : std::string("?"));
  items.push_back({"backend", backend, colors.text});
  if (!st.backend_note.empty()) {
    std::string note = "(";
    note.append(message_excerpt(st.backend_note, kMaxMessageBytes)).append(")");
    items.push_back({"backend_note", note, colors.warning});
  }
  for (int s = 0; s < kSlots; ++s) {
    if (s == 1 && !st.show_second) break;
    const auto& r = st.slots[s].result;
    if (r && r->trace)  // "1:" and "2:" name the two sentence boxes ("Sentence 1/2")
      items.push_back(
          {"slot",
           printf_string("%d: %d tokens, %.1f ms", s + 1, static_cast<int>(r->trace->tokens.size()),
                         r->trace->compute_ms),
           colors.text});
    else
      items.push_back({"slot", printf_string("%d: \xE2\x80\x94", s + 1), colors.text_dim});
  }
  items.push_back({"frame", printf_string("frame %.1f ms", frame_ms), colors.text_dim});
  if (!error_.empty())
    items.push_back({"error", message_excerpt(error_, kMaxMessageBytes), colors.error, true});
  if (!st.message.empty() && !st.message_is_error)
    items.push_back({"notice", message_excerpt(st.message, kMaxMessageBytes), colors.accent});

  // Flow the items left to right; one that does not fit starts a new row, and one wider than the
  // bar wraps over rows of its own.
  ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImVec2 pad(8, 3);
  const float font = ImGui::GetFontSize(), line_h = ImGui::GetTextLineHeight();
  const float gap = font * 1.5f, row_gap = 2.0f;
  const float width = std::max(font, vp->Size.x - 2 * pad.x);
  const float dismiss_w = ImGui::CalcTextSize("\xC3\x97").x + font * 0.8f;
  int row = 0;
  float x = 0;
  for (Item& it : items) {
    const float extra = it.dismiss ? dismiss_w : 0.0f;
    float w = ImGui::CalcTextSize(to_imgui(it.text).c_str()).x + extra;
    // The frame time changes every frame: measured at its widest, so the rows (and the panels'
    // layout above them) never jump between frames.
    if (std::string(it.kind) == "frame") w = std::max(w, ImGui::CalcTextSize("frame 999.9 ms").x);
    if (x > 0 && x + gap + w <= width) {
      it.row = row, it.x = x + gap, it.w = w;
    } else if (w <= width) {
      if (x > 0) ++row;
      it.row = row, it.x = 0, it.w = w;
    } else {
      if (x > 0) ++row;
      it.wrap_w = width - extra;
      const float h = ImGui::CalcTextSize(to_imgui(it.text).c_str(), nullptr, false, it.wrap_w).y;
      it.rows = std::max(1, static_cast<int>(std::lround(h / line_h)));
      it.row = row, it.x = 0, it.w = width;
      row += it.rows - 1;
    }
    x = it.x + it.w;
  }
  // "computing…" after the frame time where its row has room (never a row of its own: the bar
  // would grow and shrink as work starts and ends).
  const char* computing = "  computing\xE2\x80\xA6";
  for (Item& it : items)
    if (std::string(it.kind) == "frame" && app.computing()) {
      const float extra = ImGui::CalcTextSize(computing).x;
      const bool last_in_row = std::none_of(
          items.begin(), items.end(), [&](const Item& o) { return o.row == it.row && o.x > it.x; });
      if (last_in_row && it.x + it.w + extra <= width) it.text += computing, it.w += extra;
    }
  const int rows = row + 1;
  const float bar_h = height + (rows - 1) * (line_h + row_gap);
  const ImVec2 bar_pos(vp->Pos.x, vp->Pos.y + vp->Size.y - bar_h);

  ImGui::SetNextWindowPos(bar_pos);
  ImGui::SetNextWindowSize(ImVec2(vp->Size.x, bar_h));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, pad);
  ImGui::Begin("##status", nullptr, flags);
  // Grown upwards, the bar covers the panels' bottom edge (unless the layout left it room): keep
  // it above them, below any popup.
  if (rows > 1 && !ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId))
    ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
  height_ = bar_h;
  const float s = ImGui::GetIO().DisplayFramebufferScale.x;  // pixels of the saved image
  const ImVec2 origin(bar_pos.x + pad.x, bar_pos.y + pad.y);
  nlohmann::json items_json = nlohmann::json::array(), dismiss_json;
  for (const Item& it : items) {
    const ImVec2 p(origin.x + it.x, origin.y + it.row * (line_h + row_gap));
    const std::string shown = to_imgui(it.text);
    ImGui::SetCursorScreenPos(p);
    ImGui::PushStyleColor(ImGuiCol_Text, it.color);
    if (it.wrap_w > 0) ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + it.wrap_w);
    ImGui::TextUnformatted(shown.c_str());
    if (it.wrap_w > 0) ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    const ImVec2 drawn = ImGui::GetItemRectSize();
    items_json.push_back({{"kind", it.kind},
                          {"text", it.text},
                          {"x", p.x * s},
                          {"y", p.y * s},
                          {"w", drawn.x * s},
                          {"h", drawn.y * s},
                          {"rows", it.rows},
                          {"wrapped", it.wrap_w > 0}});
    if (it.dismiss) {  // the × right after the text (a wrapped one: at the end of its first row)
      ImGui::SetCursorScreenPos(
          ImVec2(it.wrap_w > 0 ? origin.x + it.wrap_w : p.x + drawn.x + font * 0.3f, p.y));
      const bool dismissed = ImGui::SmallButton("\xC3\x97##dismiss");
      help_tooltip("dismiss this error");
      const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
      dismiss_json = {
          {"x", a.x * s}, {"y", a.y * s}, {"w", (b.x - a.x) * s}, {"h", (b.y - a.y) * s}};
      if (dismissed) error_.clear();
    }
  }
  ImGui::End();
  ImGui::PopStyleVar();
  layout = {{"x", bar_pos.x * s}, {"y", bar_pos.y * s},     {"w", vp->Size.x * s},
            {"h", bar_h * s},     {"rows", rows},           {"items", std::move(items_json)},
            {"error", error_},    {"dismiss", dismiss_json}};
}

}  // namespace attnscope
