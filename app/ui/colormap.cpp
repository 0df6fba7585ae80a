#include "app/ui/colormap.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "app/render/embedded.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
Colormap parse(const std::string& name) {
  Colormap map;
  map.name = name;
  std::istringstream in(resource_text("assets/colormaps/" + name + ".csv"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::array<float, 3> rgb{};
    char comma1 = 0, comma2 = 0;
    std::istringstream row(line);
    if (!(row >> rgb[0] >> comma1 >> rgb[1] >> comma2 >> rgb[2]) || comma1 != ',' || comma2 != ',')
      throw Error("colormap " + name + ": bad line '" + line + "'");
    map.table.push_back(rgb);
  }
  if (map.table.size() != 256) throw Error("colormap " + name + ": expected 256 entries");
  return map;
}
}  // namespace

std::array<float, 3> Colormap::rgb(float t) const {
  float x = std::clamp(std::isfinite(t) ? t : 0.0f, 0.0f, 1.0f) * 255.0f;
  int i = std::min(static_cast<int>(x), 254);
  float f = x - static_cast<float>(i);
  std::array<float, 3> c{};
  for (int k = 0; k < 3; ++k) c[k] = table[i][k] * (1.0f - f) + table[i + 1][k] * f;
  return c;
}

float Colormap::luminance(float t) const {
  auto c = rgb(t);
  auto lin = [](float v) {
    return v <= 0.04045f ? v / 12.92f : std::pow((v + 0.055f) / 1.055f, 2.4f);
  };
  return 0.2126f * lin(c[0]) + 0.7152f * lin(c[1]) + 0.0722f * lin(c[2]);
}

const std::vector<Colormap>& colormaps() {
  static const std::vector<Colormap> all = {parse("viridis"), parse("magma"), parse("cividis")};
  return all;
}

int colormap_index(const std::string& name) {
  const auto& all = colormaps();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name == name) return static_cast<int>(i);
  return 0;
}

}  // namespace attnscope
