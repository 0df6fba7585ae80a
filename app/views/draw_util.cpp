#include "app/views/draw_util.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <vector>

#include "app/ui/colormap.h"
#include "app/ui/theme.h"
#include "core/util/file_read.h"

namespace attnscope {

namespace {
// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not valid UTF-8.
int utf8_length(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (int k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}
// GPT-2's byte-level BPE writes each byte as a printable character: bytes that are not printable
// become U+0100 + k (a space is "Ġ", a newline "Ċ"). Undo that for labels when a token shows the
// tell-tale characters; returns false (leaving `out` alone) when it is not such a token.
bool decode_byte_level(const std::string& s, std::string& out) {
  // The printable bytes map to themselves; the other 68 map to U+0100.. in byte order.
  static const std::vector<int> remapped = [] {
    std::vector<int> bytes;
    for (int b = 0; b < 256; ++b) {
      bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      if (!printable) bytes.push_back(b);
    }
    return bytes;
  }();
  std::string bytes;
  bool marker = false;
  for (size_t i = 0; i < s.size();) {
    int n = utf8_length(s, i);
    if (n == 0) return false;
    unsigned cp = static_cast<unsigned char>(s[i]);
    if (n == 2) cp = ((cp & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F);
    if (n > 2) return false;  // byte-level tokens only use code points below U+0800
    if (cp >= 0x100 && cp < 0x100 + remapped.size()) {
      bytes += static_cast<char>(remapped[cp - 0x100]);
      marker = true;
    } else if (cp < 0x100) {
      bytes += static_cast<char>(cp);
    } else {
      return false;
    }
    i += n;
  }
  if (!marker) return false;
  // Trim the leading space the marker stood for; the views put gaps between tokens anyway.
  size_t first = bytes.find_first_not_of(' ');
  out = first == std::string::npos ? std::string("\xE2\x90\xA3") : bytes.substr(first);  // ␣
  return true;
}
}  // namespace

std::string token_label(const Token& token, int max_chars) {
  std::string out;
  int chars = 0;
  std::string decoded;
  const std::string& s = decode_byte_level(token.text, decoded) ? decoded : token.text;
  for (size_t i = 0; i < s.size();) {
    if (chars == max_chars) {
      out += "\xE2\x80\xA6";  // …
      break;
    }
    int n = utf8_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for a broken byte
      i += 1;
    } else {
      unsigned char c = static_cast<unsigned char>(s[i]);
      out += (n == 1 && (c < 0x20 || c == 0x7F)) ? std::string(" ") : s.substr(i, n);
      i += n;
    }
    ++chars;
  }
  if (out.empty()) out = "\xE2\x88\x85";  // ∅
  return out;
}

void add_text_vertical(ImDrawList* draw_list, ImVec2 bottom_left, ImU32 color, const char* text) {
  // Draw horizontally at the pivot, then rotate the new vertices by −90° about it: (dx, dy) ->
  // (dy, −dx). ImGui culls glyphs against the clip rect before we rotate, so open it up meanwhile.
  ImVec2 display = ImGui::GetIO().DisplaySize;
  draw_list->PushClipRect(ImVec2(-display.x, -display.y), ImVec2(2 * display.x, 2 * display.y));
  int first = draw_list->VtxBuffer.Size;
  draw_list->AddText(bottom_left, color, text);
  for (int i = first; i < draw_list->VtxBuffer.Size; ++i) {
    ImVec2& p = draw_list->VtxBuffer[i].pos;
    float dx = p.x - bottom_left.x, dy = p.y - bottom_left.y;
    p = ImVec2(bottom_left.x + dy, bottom_left.y - dx);
  }
  draw_list->PopClipRect();
}

ImU32 colormap_color(int colormap, float w, float vmin, float vmax, float alpha) {
  float t = (w - vmin) / std::max(vmax - vmin, 1e-12f);
  auto c = colormaps()[static_cast<size_t>(colormap)].rgb(t);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(c[0], c[1], c[2], alpha));
}

ImU32 text_color_on(int colormap, float w, float vmin, float vmax) {
  float t = (w - vmin) / std::max(vmax - vmin, 1e-12f);
  return colormaps()[static_cast<size_t>(colormap)].luminance(t) > 0.25f
             ? IM_COL32(0, 0, 0, 255)
             : IM_COL32(255, 255, 255, 255);
}

WeightRange weight_range(const Matrix& weights, bool fixed) {
  if (fixed || weights.size() == 0) return {0.0f, 1.0f};
  float max = weights.maxCoeff();
  return {0.0f, (std::isfinite(max) && max > 0.0f) ? max : 1.0f};
}

float snap(float v, float pixel_scale) {
  return std::floor(v * pixel_scale) / pixel_scale;
}

std::string message_excerpt(const std::string& text, std::size_t max_bytes) {
  std::string out = quote_excerpt(text, max_bytes);
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return out;
}

void text_wrapped_message(const std::string& text, ImU32 color, std::size_t max_bytes) {
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  ImGui::TextWrapped("%s", quote_excerpt(text, max_bytes).c_str());
  ImGui::PopStyleColor();
}

ImU32 with_alpha(ImU32 color, float alpha) {
  return (color & 0x00FFFFFF) | (static_cast<ImU32>(std::clamp(alpha, 0.0f, 1.0f) * 255) << 24);
}

void text_dim(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  ImGui::PushStyleColor(ImGuiCol_Text, theme_colors().text_dim);
  ImGui::TextV(fmt, args);
  ImGui::PopStyleColor();
  va_end(args);
}

void section_title(const char* title) {
  ImGui::Spacing();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().accent), "%s", title);
  ImGui::Separator();
}

void help_tooltip(const char* text) {
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

bool color_swatch(const char* id, ImU32 color, bool& on, float size) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const bool clicked = ImGui::InvisibleButton(id, ImVec2(size, size));
  if (clicked) on = !on;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float r = size * 0.18f;
  if (on)
    dl->AddRectFilled(p, ImVec2(p.x + size, p.y + size), color, r);
  else
    dl->AddRect(ImVec2(p.x + 1, p.y + 1), ImVec2(p.x + size - 1, p.y + size - 1), color, r, 0,
                2.0f);
  if (ImGui::IsItemHovered())
    dl->AddRect(ImVec2(p.x - 2, p.y - 2), ImVec2(p.x + size + 2, p.y + size + 2),
                theme_colors().focus, r, 0, 1.5f);
  return clicked;
}

}  // namespace attnscope
