// Hostile input in the GUI (issue 15): a broken model never ends the app, however long its error;
// a window too large for the GL implementation is clamped with a message; a screenshot that cannot
// be written is a failure (exit 1), not a silent exit 0.
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
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
using test::run_app_with_env;
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
  // Built with append: GCC 12 gives a false -Warray-bounds on "lit" + std::string(n, c).
  std::string spec = "/nonexistent/";
  spec.append(3000, 'a').append("/").append(3000, 'b');
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

// A settings.json that is a FIFO blocked the window before it opened (issue 23): now it is
// refused as not a regular file, the defaults are used and the problem is shown.
TEST(Hostile, SettingsThatAreAFifoDoNotBlockTheWindow) {
  const std::string dir = test::temp_dir();
  const std::string config = dir + "/fifo_config";
  std::filesystem::create_directories(config + "/attnscope");
  ASSERT_EQ(::mkfifo((config + "/attnscope/settings.json").c_str(), 0600), 0);
  const char* bin = std::getenv("ATTNSCOPE_BIN");
  ASSERT_NE(bin, nullptr);
  const std::string png = dir + "/s.png", layout = dir + "/s.json";
  const std::string cmd = "XDG_CONFIG_HOME=" + shell_quote(config) + " timeout 60 " +
                          shell_quote(bin) + " --screenshot " + shell_quote(png) + " --layout " +
                          shell_quote(layout) + " 2>" + shell_quote(dir + "/stderr");
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "124: blocked on the FIFO\n" << read_text(dir + "/stderr");
  EXPECT_EQ(read_png(png).width, 1600);
  EXPECT_NE(read_text(layout).find("is a FIFO (named pipe), expected a regular file"),
            std::string::npos);
}

// A trace that is a FIFO, dropped on the window or given to `view`, blocked it (issue 23): now
// both say what it is and the window keeps its model.
TEST(Hostile, FifoTraceDroppedOrViewedIsRefused) {
  const std::string dir = test::temp_dir();
  const std::string fifo = dir + "/trace.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(run_app_with_env("timeout 60 env", "--drop " + shell_quote(fifo) + " --screenshot " +
                                                   shell_quote(dir + "/d.png") + " --layout " +
                                                   shell_quote(dir + "/d.json") + " 2>/dev/null"),
            1);  // 124: blocked
  const nlohmann::json layout = read_json(dir + "/d.json");
  EXPECT_EQ(layout["model"], "lesson");
  EXPECT_NE(layout["model_error"].get<std::string>().find(
                "trace.json: is a FIFO (named pipe), expected a regular file"),
            std::string::npos)
      << layout["model_error"];

  EXPECT_EQ(run_app_with_env("timeout 60 env", "view " + shell_quote(fifo) + " --screenshot " +
                                                   shell_quote(dir + "/v.png") + " 2>" +
                                                   shell_quote(dir + "/v.err")),
            1);
  const std::string err = read_text(dir + "/v.err");
  EXPECT_NE(err.find("is a FIFO (named pipe), expected a regular file"), std::string::npos) << err;
}

}  // namespace
}  // namespace attnscope
