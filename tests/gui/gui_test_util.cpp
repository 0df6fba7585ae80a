#include "gui_test_util.h"

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <stb_image.h>
#include <unistd.h>

namespace attnscope::test {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string temp_dir() {
  static std::atomic<int> counter{0};
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("attnscope_gui_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "config");
  return dir.string();
}

int run_app(const std::string& args, const std::string& stderr_file) {
  return run_app_with_env("", args + (stderr_file.empty() ? "" : " 2>" + shell_quote(stderr_file)));
}

int run_app_with_env(const std::string& env, const std::string& args) {
  const char* bin = std::getenv("ATTNSCOPE_BIN");
  if (!bin) throw std::runtime_error("ATTNSCOPE_BIN is not set (run through ctest)");
  std::string config = temp_dir() + "/config";
  std::string cmd =
      env + " XDG_CONFIG_HOME=" + shell_quote(config) + " " + shell_quote(bin) + " " + args;
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing " + path);
  return nlohmann::json::parse(in);
}

std::array<int, 3> Image::at(int x, int y) const {
  // A test that samples outside the screenshot fails with a message instead of reading past it.
  if (x < 0 || y < 0 || x >= width || y >= height)
    throw std::out_of_range("pixel (" + std::to_string(x) + ", " + std::to_string(y) +
                            ") is outside the " + std::to_string(width) + "x" +
                            std::to_string(height) + " screenshot");
  size_t i = (static_cast<size_t>(y) * width + x) * 3;
  return {rgb[i], rgb[i + 1], rgb[i + 2]};
}

Image read_png(const std::string& path) {
  Image img;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &img.width, &img.height, &channels, 3);
  if (!data) throw std::runtime_error("cannot read " + path);
  img.rgb.assign(data, data + static_cast<size_t>(img.width) * img.height * 3);
  stbi_image_free(data);
  return img;
}

std::array<double, 3> colormap_rgb(const std::string& name, double t) {
  static std::map<std::string, std::vector<std::array<double, 3>>> tables;
  auto& table = tables[name];
  if (table.empty()) {
    std::ifstream in(std::string(ATTNSCOPE_COLORMAP_DIR) + "/" + name + ".csv");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::replace(line.begin(), line.end(), ',', ' ');
      std::istringstream row(line);
      std::array<double, 3> c{};
      row >> c[0] >> c[1] >> c[2];
      table.push_back(c);
    }
    if (table.size() != 256) throw std::runtime_error("colormap " + name + " has no 256 entries");
  }
  double x = std::clamp(t, 0.0, 1.0) * 255.0;
  int i = std::min(static_cast<int>(x), 254);
  double f = x - i;
  std::array<double, 3> c{};
  for (int k = 0; k < 3; ++k) c[k] = 255.0 * (table[i][k] * (1 - f) + table[i + 1][k] * f);
  return c;
}

std::string words(int n) {
  static const char* kWords[] = {"the", "river", "bank", "was", "muddy",   "after", "rain",
                                 "and", "money", "went", "to",  "deposit", "his",   "boat"};
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (i) s += ' ';
    s += kWords[(i * 5 + i / 3) % 14];
  }
  return s;
}

const nlohmann::json* find_view(const nlohmann::json& layout, const std::string& name, int slot) {
  for (const auto& v : layout["views"])
    if (v.value("view", "") == name && (slot < 0 || v.value("slot", -1) == slot)) return &v;
  return nullptr;
}

void expect_disjoint(const nlohmann::json& rects, const std::string& what) {
  // A rectangle is {x, y, w, h} or a label's {"box": [x, y, w, h]}.
  const auto box = [](const nlohmann::json& r) -> std::array<double, 4> {
    if (r.contains("box") && r["box"].is_array() && r["box"].size() == 4)
      return {r["box"][0], r["box"][1], r["box"][2], r["box"][3]};
    return {r.value("x", 0.0), r.value("y", 0.0), r.value("w", 0.0), r.value("h", 0.0)};
  };
  for (size_t a = 0; a < rects.size(); ++a)
    for (size_t b = a + 1; b < rects.size(); ++b) {
      const auto [px, py, pw, ph] = box(rects[a]);
      const auto [qx, qy, qw, qh] = box(rects[b]);
      const bool overlap = px < qx + qw && qx < px + pw && py < qy + qh && qy < py + ph;
      EXPECT_FALSE(overlap) << what << ": '" << rects[a].value("text", std::string()) << "' at ("
                            << px << ", " << py << ", " << pw << "x" << ph << ") overlaps '"
                            << rects[b].value("text", std::string()) << "' at (" << qx << ", " << qy
                            << ", " << qw << "x" << qh << ")";
    }
}

}  // namespace attnscope::test
