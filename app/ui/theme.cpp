#include "app/ui/theme.h"

namespace attnscope {

namespace {
ThemeColors g_colors;
bool g_light = false;
}  // namespace

ThemeColors theme_palette(bool light) {
  if (light)
    return {IM_COL32(0, 0, 0, 255),      IM_COL32(70, 70, 70, 255), IM_COL32(0, 70, 190, 255),
            IM_COL32(200, 60, 0, 255),   IM_COL32(0, 70, 190, 255), IM_COL32(0, 0, 0, 40),
            IM_COL32(190, 0, 0, 255),    IM_COL32(150, 90, 0, 255), IM_COL32(120, 120, 120, 255),
            IM_COL32(235, 235, 235, 255)};
  return {IM_COL32(235, 235, 240, 255), IM_COL32(160, 160, 170, 255), IM_COL32(110, 170, 255, 255),
          IM_COL32(255, 150, 60, 255),  IM_COL32(120, 190, 255, 255), IM_COL32(255, 255, 255, 34),
          IM_COL32(255, 100, 100, 255), IM_COL32(255, 200, 90, 255),  IM_COL32(90, 90, 100, 255),
          IM_COL32(40, 40, 48, 255)};
}

void apply_theme(bool light, float ui_scale) {
  g_light = light;
  ImGuiStyle style;
  if (light) {
    ImGui::StyleColorsLight(&style);
    ImVec4* c = style.Colors;
    c[ImGuiCol_Text] = ImVec4(0, 0, 0, 1);
    c[ImGuiCol_TextDisabled] = ImVec4(0.30f, 0.30f, 0.30f, 1);
    c[ImGuiCol_WindowBg] = ImVec4(1, 1, 1, 1);
    c[ImGuiCol_ChildBg] = ImVec4(1, 1, 1, 1);
    c[ImGuiCol_MenuBarBg] = ImVec4(0.90f, 0.90f, 0.90f, 1);
    c[ImGuiCol_Border] = ImVec4(0.25f, 0.25f, 0.25f, 1);
    c[ImGuiCol_FrameBg] = ImVec4(0.93f, 0.93f, 0.93f, 1);
    c[ImGuiCol_FrameBgHovered] = ImVec4(0.85f, 0.90f, 1.0f, 1);
    c[ImGuiCol_TitleBgActive] = ImVec4(0.80f, 0.80f, 0.80f, 1);
    c[ImGuiCol_Header] = ImVec4(0.75f, 0.85f, 1.0f, 1);
    style.FrameBorderSize = 1.0f;
    style.WindowBorderSize = 1.0f;
    style.ChildBorderSize = 1.0f;
  } else {
    ImGui::StyleColorsDark(&style);
    ImVec4* c = style.Colors;
    c[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.09f, 0.11f, 1);
    c[ImGuiCol_ChildBg] = ImVec4(0.11f, 0.11f, 0.13f, 1);
    c[ImGuiCol_MenuBarBg] = ImVec4(0.14f, 0.14f, 0.17f, 1);
    c[ImGuiCol_Border] = ImVec4(0.30f, 0.30f, 0.36f, 1);
  }
  g_colors = theme_palette(light);
  style.WindowRounding = 0.0f;
  style.ChildRounding = 3.0f;
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.ItemSpacing = ImVec2(8, 5);
  style.ScaleAllSizes(ui_scale);
  ImGui::GetStyle() = style;
}

const ThemeColors& theme_colors() {
  return g_colors;
}
bool theme_is_light() {
  return g_light;
}

}  // namespace attnscope
