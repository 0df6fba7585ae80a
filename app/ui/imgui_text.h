#pragma once
// Text handed to Dear ImGui. Debian's ImGui 1.86 has a 16-bit ImWchar: a code point above U+FFFF
// (emoji, rare CJK) becomes U+FFFD when ImGui decodes UTF-8, and InputText, which edits a 16-bit
// copy of its buffer, would write that U+FFFD back over the user's emoji. So every such code point
// gets a proxy in the Private Use Area (U+E000..U+F8FF, allocated on first use, one per code
// point, never reused): ImGui sees and edits proxies, and the app keeps real UTF-8. Real PUA code
// points are proxied too, so the mapping stays one-to-one. The font atlas draws each proxy with
// the glyph of the code point it stands for (app/ui/fonts.cpp).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnscope {

// UTF-8 -> what ImGui is given: code points above U+FFFF (and PUA ones) replaced by their proxy.
// Invalid bytes pass through unchanged (ImGui shows them as U+FFFD; an unedited text keeps them).
std::string to_imgui(std::string_view utf8);
// The inverse: proxies back to the code points they stand for.
std::string from_imgui(std::string_view imgui_utf8);
// A typed code point (the GLFW char callback, scripted typing). ImGui takes most as they are;
// one that needs a proxy cannot go through io.AddInputCharacter (ImWchar is 16-bit, and
// InputText's character filter drops the Private Use Area), so it is queued and the active
// input_text_with_hint box inserts its proxy at the cursor in the next frame (the characters
// typed after it before that frame queue too, keeping their order). Returns true when queued (the
// caller must not hand it to ImGui too). Call between frames (GLFW's callbacks, before NewFrame).
bool queue_typed_character(unsigned code_point);
// Queued characters not yet taken by a box: the frame loop must draw the next frame at once
// instead of waiting for an event.
bool input_pending();
// A pasted text that holds a code point needing a proxy: every code point of it (line breaks as
// spaces: the boxes are one line) is queued like a typed proxy, in order, for the active box to
// insert at its cursor. Returns false (nothing queued) when no code point needs a proxy: ImGui's
// own paste handles that text.
bool queue_pasted_text(std::string_view utf8);
// The proxy of `code_point` if it needs one (allocating it), else the code point itself. Once the
// 6,400 proxies are spent, U+FFFD.
unsigned proxy_for(unsigned code_point);
// Every (proxy, real code point) pair allocated so far, in allocation order.
const std::vector<std::pair<unsigned, unsigned>>& proxies();

// Decodes UTF-8 into code points (an invalid byte: U+FFFD); calls f(code_point, byte_length).
template <class F>
void for_each_code_point(std::string_view s, F&& f) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80           ? 1
                  : (c >> 5) == 0x6  ? 2
                  : (c >> 4) == 0xE  ? 3
                  : (c >> 3) == 0x1E ? 4
                                     : 0;
    bool ok = n > 0 && i + n <= s.size();
    unsigned cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; ok && k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = (d & 0xC0) == 0x80;
      cp = (cp << 6) | (d & 0x3F);
    }
    ok = ok && cp <= 0x10FFFF;
    f(ok ? cp : 0xFFFDu, ok ? n : 1, ok);
    i += ok ? n : 1;
  }
}

void append_utf8(std::string& out, unsigned cp);

// Code points in the first `bytes` bytes of `s` (an invalid byte counts as one, as above), and
// the byte offset of code point `k` (clamped to the size).
int code_points_before(std::string_view s, std::size_t bytes);
std::size_t byte_of_code_point(std::string_view s, int k);

// The caret of an input_text_with_hint box in the frame it was active: code point indices into its
// text (the same in the real and the proxy form), as ImGui left them after this frame's keys.
struct TextBoxCaret {
  unsigned id = 0;  // ImGui::GetID of the box's label
  int frame = -1;   // ImGui's frame count when recorded
  int cursor = 0, select_start = 0, select_end = 0;
};
// The caret of box `id` when it was active in this frame, else nullptr.
const TextBoxCaret* text_box_caret(unsigned id);
// Puts the caret of box `id` at code point `cursor`, selecting from `anchor` (= cursor: nothing
// selected), in its next active frame: a click mapped through the shaped line
// (app/ui/sentence_box).
void set_text_box_caret(unsigned id, int cursor, int anchor);

// ImGui::InputTextWithHint on real UTF-8 text: edits the proxy form (typed proxies included),
// writes `utf8` back (real code points) only when the user changed it. Returns true on a change.
bool input_text_with_hint(const char* id, const char* hint, std::string& utf8);

}  // namespace attnscope
