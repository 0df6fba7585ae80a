#include "app/views/draw_util.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

#include "app/ui/colormap.h"
#include "app/ui/theme.h"
#include "core/util/file_read.h"

namespace attnscope {

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

std::string fit_text(const std::string& text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  const char* ellipsis = "\xE2\x80\xA6";
  const float room = width - ImGui::CalcTextSize(ellipsis).x;
  // Code point by code point while the prefix fits (titles are one line: a few dozen).
  size_t end = 0;
  float used = 0;
  while (end < text.size()) {
    size_t next = end + 1;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    used += ImGui::CalcTextSize(text.data() + end, text.data() + next).x;
    if (used > room) break;
    end = next;
  }
  return text.substr(0, end) + ellipsis;
}

const char* format_weight(char* buf, std::size_t size, float value, int decimals) {
  const int n = std::snprintf(buf, size, "%.*f", decimals, static_cast<double>(value));
  // "-0.00": every digit zero after the sign.
  if (n > 1 && buf[0] == '-' && std::strspn(buf + 1, "0.") == static_cast<std::size_t>(n - 1))
    std::memmove(buf, buf + 1, static_cast<std::size_t>(n));
  return buf;
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
