#pragma once
// Perceptually uniform colormaps (viridis, magma, cividis): matplotlib's 256-entry tables, kept in
// assets/colormaps/*.csv and embedded at build time. The GPU samples the same table (colormap
// shader); the CPU copy picks readable text colors and fills the layout file for tests.
#include <array>
#include <string>
#include <vector>

namespace attnscope {

struct Colormap {
  std::string name;                         // "viridis"
  std::vector<std::array<float, 3>> table;  // 256 RGB entries in [0, 1]
  // The table's piecewise-linear interpolation at t in [0, 1] (what the shader computes).
  std::array<float, 3> rgb(float t) const;
  // Relative luminance at t: choose black or white text on top of a cell.
  float luminance(float t) const;
};

// viridis (index 0, the default), magma, cividis. Throws Error if a table is malformed.
const std::vector<Colormap>& colormaps();
int colormap_index(const std::string& name);  // 0 (viridis) for an unknown name

}  // namespace attnscope
