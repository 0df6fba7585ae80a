#pragma once
// Helpers of the gui tests: run the app, read its PNG and layout file, the colormap reference.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnscope::test {

// Runs the attnscope executable ($ATTNSCOPE_BIN) with `args` (already shell-quoted), with a fresh
// XDG_CONFIG_HOME; returns its exit status. stderr goes to `stderr_file` when given.
int run_app(const std::string& args, const std::string& stderr_file = "");
// The same with extra environment assignments ("NAME=value ...") in front.
int run_app_with_env(const std::string& env, const std::string& args);

std::string temp_dir();  // a fresh folder for one test
std::string shell_quote(const std::string& s);
nlohmann::json read_json(const std::string& path);

struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;  // width * height * 3
  std::array<int, 3> at(int x, int y) const;
};
Image read_png(const std::string& path);  // throws std::runtime_error

// n words the lesson model knows, one token each ("the river bank was muddy after rain …").
std::string words(int n);

// The first view entry of the layout file named `name` (for sentence `slot`; -1: any), or null.
const nlohmann::json* find_view(const nlohmann::json& layout, const std::string& name,
                                int slot = -1);
// No two rectangles ({x, y, w, h}, with an optional "text") of `rects` intersect; a failure names
// both and `what`.
void expect_disjoint(const nlohmann::json& rects, const std::string& what);

// The test's own reading of assets/colormaps/NAME.csv and its linear interpolation, in 0..255.
std::array<double, 3> colormap_rgb(const std::string& name, double t);

}  // namespace attnscope::test
