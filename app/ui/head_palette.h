#pragma once
// The colours of the head overlay (several heads of a layer drawn at once in the lines and arcs
// views). Twelve sRGB colours chosen by a farthest-point search over an sRGB grid, lightness
// L* 45–75 so each reads on the dark and the light theme, scored by the smallest CIELAB distance
// between any two colours for normal vision and for the three dichromacies simulated with
// Machado et al. (2009) at full severity. tests/unit/head_palette_test.cpp checks the distances:
// ≥ 25 ΔE*ab for normal vision, ≥ 15 under protanopia, deuteranopia and tritanopia.
// Heads beyond the twelfth reuse the colours in order (head h gets kHeadPalette[h % 12]).
// No GL or ImGui here, so the unit test includes it alone.
#include <array>
#include <cstdint>

namespace attnscope {

struct Rgb8 {
  std::uint8_t r, g, b;
};

// Ordered so that the first heads of a layer get the colours farthest apart.
inline constexpr std::array<Rgb8, 12> kHeadPalette = {{{135, 105, 45},
                                                       {255, 0, 195},
                                                       {90, 210, 0},
                                                       {255, 135, 165},
                                                       {150, 30, 255},
                                                       {150, 195, 105},
                                                       {45, 120, 90},
                                                       {120, 165, 255},
                                                       {150, 105, 255},
                                                       {240, 0, 105},
                                                       {180, 60, 135},
                                                       {120, 135, 0}}};

inline constexpr Rgb8 head_color(int head) {
  return kHeadPalette[static_cast<std::size_t>(head < 0 ? 0 : head) % kHeadPalette.size()];
}

}  // namespace attnscope
