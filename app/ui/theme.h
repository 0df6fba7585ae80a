#pragma once
// Dark (default) and light "projector" themes: the light one has pure white panels, black text and
// strong borders so it survives a washed-out classroom projector.
#include <imgui.h>

namespace attnscope {

struct ThemeColors {
  ImU32 text = 0, text_dim = 0, accent = 0, focus = 0, arc = 0, arc_faint = 0, error = 0,
        warning = 0, panel_line = 0, token_bg = 0;
};

// The theme's colours, without touching ImGui (the figure exporters use them too).
ThemeColors theme_palette(bool light);
// Rebuilds ImGui's style for the theme and the UI scale (sizes, paddings, roundings).
void apply_theme(bool light, float ui_scale);
const ThemeColors& theme_colors();
bool theme_is_light();

}  // namespace attnscope
