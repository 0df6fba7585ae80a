#pragma once
// A view's one-line title ("layer 0 · head 3 · log colours (floor 0.001)") where the pane is too
// narrow for it: wrapped only after its " · " separators (wrap_title in shown_matrix.h), so a
// number never breaks ("floor 0." / "001" was ImGui's word wrap, which breaks after a '.').
#include <string>
#include <vector>

#include <imgui.h>
#include <nlohmann/json.hpp>

namespace attnscope {

// Draws `title` in `color` at the cursor, within the content region's width; returns the lines.
// With `layout`, records {"view": "title", "slot", "text", "lines", "x", "y", "w", "h"} (pixels
// of the saved image).
std::vector<std::string> text_title(const std::string& title, ImU32 color,
                                    nlohmann::json* layout = nullptr, int slot = 0,
                                    float pixel_scale = 1.0f);

}  // namespace attnscope
