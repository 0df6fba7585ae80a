// Hostile input in the GUI (issue 15): a broken model never ends the app, however long its error;
// a window too large for the GL implementation is clamped with a message; a screenshot that cannot
// be written is a failure (exit 1), not a silent exit 0.
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "gui_test_util.h"

namespace attnscope {
namespace {

using test::read_json;
using test::read_png;
using test::run_app;
using test::shell_quote;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A 3,000-character model path made ImGui abort ("too many vertices", 16-bit indices): no PNG,
// and a crash instead of the error. Now the error shows, wrapped and cut, and the exit code is 1.
TEST(Hostile, LongErrorTextIsShownNotFatal) {
  const std::string dir = test::temp_dir();
  const std::string png = dir + "/err.png";
  const std::string spec = "/nonexistent/" + std::string(3000, 'a') + "/" + std::string(3000, 'b');
  EXPECT_EQ(
      run_app("--model " + shell_quote(spec) + " --text " + shell_quote(spec) + " --screenshot " +
                  shell_quote(png) + " --layout " + shell_quote(dir + "/err.json"),
              dir + "/stderr"),
      1)
      << read_text(dir + "/stderr");
  const test::Image img = read_png(png);
  EXPECT_EQ(img.width, 1600);
  const nlohmann::json layout = read_json(dir + "/err.json");
  EXPECT_NE(layout["model_error"].get<std::string>().find("/nonexistent/aaaa"), std::string::npos);
}

TEST(Hostile, WindowBeyondTheGlLimitIsClampedWithAMessage) {
  const std::string dir = test::temp_dir();
  const std::string png = dir + "/big.png";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(
      run_app("--window 8192x8192 --scale 2 --screenshot " + shell_quote(png), dir + "/stderr"), 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string err = read_text(dir + "/stderr");
  EXPECT_NE(err.find("a 8192x8192 window at scale 2 needs 16384x16384 pixels; at most"),
            std::string::npos)
      << err;
  const test::Image img = read_png(png);
  EXPECT_LE(img.width, 8192);
  EXPECT_LE(img.height, 8192);
  EXPECT_LE(static_cast<long long>(img.width) * img.height, 6400LL * 4000);  // the pixel budget
  EXPECT_LT(seconds, 60.0);
}

TEST(Hostile, ScreenshotToAFullDiskFails) {
  const std::string dir = test::temp_dir();
  EXPECT_EQ(run_app("--screenshot /dev/full", dir + "/stderr"), 1);
  const std::string err = read_text(dir + "/stderr");
  EXPECT_NE(err.find("writing the screenshot to '/dev/full' failed"), std::string::npos) << err;
}

}  // namespace
}  // namespace attnscope
