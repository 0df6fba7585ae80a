#include "app/ui/sentence_box.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include <imgui_internal.h>  // ImGuiInputTextState: the caret blinks as ImGui's

#include "app/render/text_layer.h"
#include "app/render/text_shape.h"
#include "app/ui/imgui_text.h"

namespace attnscope {

namespace {
// A longer text (a paste) is edited as ImGui draws it: shaping it every keystroke would cost more
// than the box can show. Idle, its first 4 KiB are drawn (what fits is a small prefix).
constexpr std::size_t kMaxShapedBytes = 4096;

// Per-box state in ImGui's storage, keyed from the box's id.
struct Keys {
  ImGuiID scroll, drag, anchor, x0, y0, x1, y1;
  explicit Keys(ImGuiID id)
      : scroll(id ^ 0x5C0A11u),
        drag(id ^ 0xD4A6u),
        anchor(id ^ 0xA4C0u),
        x0(id ^ 0xB0A0u),
        y0(id ^ 0xB0B0u),
        x1(id ^ 0xB1A0u),
        y1(id ^ 0xB1B0u) {}
};

bool shapes(const std::string& text) {
  return !text.empty() && !plain_ascii(text) && text.size() <= kMaxShapedBytes;
}

ShapeRequest request(std::string_view text) {
  ShapeRequest r;
  r.text = text;
  r.pixel_size = std::max(1, static_cast<int>(std::lround(ImGui::GetFontSize() * pixel_density())));
  return r;
}

// The code points [start, end) of the word around code point k (a run without spaces).
std::pair<int, int> word_around(std::string_view text, int k) {
  std::vector<bool> space;
  for_each_code_point(text, [&](unsigned cp, int, bool) {
    space.push_back(cp == ' ' || cp == '\t' || cp == 0x3000);
  });
  const int n = static_cast<int>(space.size());
  k = std::clamp(k, 0, n);
  if (k == n && k > 0) --k;
  int a = k, b = k;
  while (a > 0 && !space[a - 1]) --a;
  while (b < n && !space[b]) ++b;
  return {a, b};
}

// Clicks and drags in a shaped box, before ImGui sees them: the code point under the pointer
// comes from the shaped line (last frame's place and scroll), and the caret asked for is applied
// inside this frame's InputText, after ImGui's own (unshaped) placement.
void map_pointer(ImGuiID id, const std::string& text) {
  const ImGuiIO& io = ImGui::GetIO();
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const Keys k(id);
  if (!io.MouseDown[0]) storage->SetInt(k.drag, 0);
  const bool moved = io.MouseDelta.x != 0.0f || io.MouseDelta.y != 0.0f;
  const bool click = io.MouseClicked[0], drag = io.MouseDown[0] && moved && storage->GetInt(k.drag);
  if ((!click && !drag) || !shapes(text)) return;
  const ImVec2 a(storage->GetFloat(k.x0, -1), storage->GetFloat(k.y0, -1)),
      b(storage->GetFloat(k.x1, -1), storage->GetFloat(k.y1, -1));
  const ImVec2 m = io.MousePos;
  const bool over = b.x > a.x && m.x >= a.x && m.x < b.x && m.y >= a.y && m.y < b.y &&
                    ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem);
  if (click && !over) return;
  const float s = pixel_density();
  const LineGeometry line(request(text));
  const float origin = a.x + ImGui::GetStyle().FramePadding.x - storage->GetFloat(k.scroll, 0);
  const int byte = line.index_at(static_cast<int>(std::lround((m.x - origin) * s)));
  const int at = code_points_before(text, static_cast<std::size_t>(byte));
  if (click && io.MouseDoubleClicked[0]) {
    const auto [from, to] = word_around(text, at);
    set_text_box_caret(id, to, from);
    storage->SetInt(k.drag, 0);
  } else if (click) {
    // Shift+click extends from the anchor ImGui keeps; a plain click starts a selection here.
    const TextBoxCaret* c = text_box_caret(id);
    int anchor = at;
    if (io.KeyShift && c) anchor = c->select_start != c->select_end ? c->select_start : c->cursor;
    storage->SetInt(k.anchor, anchor);
    storage->SetInt(k.drag, 1);
    set_text_box_caret(id, at, anchor);
  } else {
    set_text_box_caret(id, at, storage->GetInt(k.anchor, at));
  }
}

// Hides ImGui's glyphs (and its caret and selection): the frame's colour made opaque over the
// child's and the window's backgrounds.
void cover(ImDrawList* dl, ImVec2 a, ImVec2 b, bool hovered, bool active) {
  const ImGuiStyle& style = ImGui::GetStyle();
  ImVec4 bg = style.Colors[ImGuiCol_WindowBg];
  const ImGuiCol frame = active    ? ImGuiCol_FrameBgActive
                         : hovered ? ImGuiCol_FrameBgHovered
                                   : ImGuiCol_FrameBg;
  for (const ImGuiCol layer : {static_cast<ImGuiCol>(ImGuiCol_ChildBg), frame}) {
    const ImVec4 c = style.Colors[layer];
    bg = ImVec4(c.x * c.w + bg.x * (1 - c.w), c.y * c.w + bg.y * (1 - c.w),
                c.z * c.w + bg.z * (1 - c.w), 1.0f);
  }
  dl->AddRectFilled(a, b, ImGui::ColorConvertFloat4ToU32(bg),
                    std::max(0.0f, style.FrameRounding - 1));
}

void draw_idle(ImDrawList* dl, const std::string& text, ImVec2 a, ImVec2 b, SentenceBoxDrawn& d) {
  const ImGuiStyle& style = ImGui::GetStyle();
  std::size_t n = std::min<std::size_t>(text.size(), kMaxShapedBytes);  // at a character boundary
  while (n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  const std::string_view shown = std::string_view(text).substr(0, n);
  const ImVec2 at(a.x + style.FramePadding.x, a.y + style.FramePadding.y);
  TextOptions o;
  o.max_width = std::max(1.0f, b.x - style.FramePadding.x - at.x);
  const float size = ImGui::GetFontSize();
  text_layer().draw(dl, at, shown, size, ImGui::GetColorU32(ImGuiCol_Text), o);
  d.text_x0 = at.x, d.text_x1 = at.x + text_layer().measure(shown, size, o).x;
}

void draw_editing(ImDrawList* dl, ImGuiID id, const std::string& text, const TextBoxCaret& caret,
                  ImVec2 a, ImVec2 b, SentenceBoxDrawn& d) {
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const Keys k(id);
  const float s = pixel_density(), size = ImGui::GetFontSize();
  const LineGeometry line(request(text));
  const float width = static_cast<float>(line.width()) / s;
  const float caret_x =
      static_cast<float>(line.caret_x(static_cast<int>(byte_of_code_point(text, caret.cursor)))) /
      s;
  // Scroll the line so the caret stays in view, as ImGui scrolls its own.
  const float room = std::max(1.0f, b.x - a.x - 2 * style.FramePadding.x - 1);
  float scroll = storage->GetFloat(k.scroll, 0);
  if (caret_x - scroll > room) scroll = caret_x - room;
  if (caret_x < scroll) scroll = caret_x;
  scroll = std::clamp(scroll, 0.0f, std::max(0.0f, width + 1 - room));
  scroll = std::round(scroll * s) / s;
  storage->SetFloat(k.scroll, scroll);

  const ImVec2 at(a.x + style.FramePadding.x - scroll, a.y + style.FramePadding.y);
  if (caret.select_start != caret.select_end) {
    const ImU32 selected = ImGui::GetColorU32(ImGuiCol_TextSelectedBg);
    for (const auto& [x0, x1] :
         line.ranges(static_cast<int>(byte_of_code_point(text, caret.select_start)),
                     static_cast<int>(byte_of_code_point(text, caret.select_end))))
      dl->AddRectFilled(ImVec2(at.x + x0 / s, at.y), ImVec2(at.x + x1 / s, at.y + size), selected);
  }
  text_layer().draw(dl, at, text, size, ImGui::GetColorU32(ImGuiCol_Text));
  d.text_x0 = at.x, d.text_x1 = at.x + width;
  d.caret_x = at.x + caret_x;
  // ImGui's caret: a line a font high, blinking as ImGui's does (steady while keys go in).
  const ImGuiInputTextState* state = ImGui::GetInputTextState(id);
  const float blink = state ? state->CursorAnim : 0.0f;
  if (!ImGui::GetIO().ConfigInputTextCursorBlink || blink <= 0.0f ||
      std::fmod(blink, 1.20f) <= 0.80f)
    dl->AddLine(ImVec2(d.caret_x, at.y + 0.5f), ImVec2(d.caret_x, at.y + size - 1.5f),
                ImGui::GetColorU32(ImGuiCol_Text));
}
}  // namespace

bool sentence_box(const char* id, const char* hint, std::string& utf8, SentenceBoxDrawn* drawn) {
  const ImGuiID gid = ImGui::GetID(id);
  map_pointer(gid, utf8);
  const bool changed = input_text_with_hint(id, hint, utf8);
  SentenceBoxDrawn d;
  d.min = ImGui::GetItemRectMin(), d.max = ImGui::GetItemRectMax();
  d.editing = ImGui::IsItemActive();
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const Keys k(gid);
  storage->SetFloat(k.x0, d.min.x), storage->SetFloat(k.y0, d.min.y);
  storage->SetFloat(k.x1, d.max.x), storage->SetFloat(k.y1, d.max.y);
  const TextBoxCaret* caret = d.editing ? text_box_caret(gid) : nullptr;
  if (caret) d.caret = caret->cursor;
  if (!d.editing) storage->SetFloat(k.scroll, 0);
  const bool idle = !d.editing && !utf8.empty() && !plain_ascii(utf8);
  if (idle || (caret && shapes(utf8))) {
    d.shaped = true;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 inner_a(d.min.x + 1, d.min.y + 1), inner_b(d.max.x - 1, d.max.y - 1);
    cover(dl, inner_a, inner_b, ImGui::IsItemHovered(), d.editing);
    dl->PushClipRect(inner_a, inner_b, true);
    if (caret)
      draw_editing(dl, gid, utf8, *caret, d.min, d.max, d);
    else
      draw_idle(dl, utf8, d.min, d.max, d);
    dl->PopClipRect();
  }
  if (drawn) *drawn = d;
  return changed;
}

nlohmann::json sentence_box_json(const SentenceBoxDrawn& d, float s) {
  return {{"x", d.min.x * s},
          {"y", d.min.y * s},
          {"w", (d.max.x - d.min.x) * s},
          {"h", (d.max.y - d.min.y) * s},
          {"editing", d.editing},
          {"shaped", d.shaped},
          {"text_x0", d.text_x0 * s},
          {"text_x1", d.text_x1 * s},
          {"caret_x", d.caret_x < 0 ? -1.0f : d.caret_x * s},
          {"caret", d.caret}};
}

}  // namespace attnscope
