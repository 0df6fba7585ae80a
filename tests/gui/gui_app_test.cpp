// The desktop app, run for real under Xvfb: its screenshots have the promised size, are not blank,
// and their heatmap cells carry the colormap color of the weights the core computes; keystrokes
// typed into a text box change the published trace; odd input and bad options fail gracefully.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"
#include "gui_test_util.h"

namespace attnscope {
namespace {

using test::colormap_rgb;
using test::read_json;
using test::read_png;
using test::run_app;
using test::shell_quote;

// Distinct colors in a coarse sample of the image: a blank (or single-color) frame has 1 or 2.
int distinct_colors(const test::Image& img) {
  std::set<int> colors;
  for (int y = 0; y < img.height; y += 7)
    for (int x = 0; x < img.width; x += 7) {
      auto c = img.at(x, y);
      colors.insert((c[0] << 16) | (c[1] << 8) | c[2]);
    }
  return static_cast<int>(colors.size());
}

// Checks every heatmap the app drew: the weights it shows are the core's, and each cell's pixel
// is the colormap color of that weight (sampled away from the numbers printed in the cell).
void check_heatmaps(const nlohmann::json& layout, const test::Image& img, int expected_heatmaps) {
  auto model = open_model("lesson");
  auto backend = make_cpu_backend();
  int heatmaps = 0;
  for (const auto& view : layout["views"]) {
    if (view["view"] != "heatmap") continue;
    ++heatmaps;
    const int slot = view["slot"], rows = view["rows"], cols = view["cols"];
    const int layer = view["layer"], head = view["head"];
    const std::string text = layout["traces"][slot]["text"];
    SCOPED_TRACE("sentence " + std::to_string(slot + 1) + ": " + text);
    AttentionTrace core = model->run(text, *backend);
    const Matrix& w = core.attention.at(layer).at(head);
    ASSERT_EQ(rows, w.rows());
    ASSERT_EQ(cols, w.cols());
    // Labels name the core's tokens.
    for (const auto& label : view["row_labels"]) {
      int i = label["index"];
      EXPECT_EQ(label["text"].get<std::string>(), core.tokens.at(i).text);
    }
    // The colors span 0..max weight (or 0..1).
    const double vmin = view["vmin"], vmax = view["vmax"];
    EXPECT_EQ(vmin, 0.0);
    EXPECT_NEAR(vmax, w.maxCoeff(), 1e-5);
    const double x0 = view["x0"], y0 = view["y0"], cw = view["cell_w"], ch = view["cell_h"];
    ASSERT_GE(cw, 4.0) << "cells too small to sample";
    const bool numbers = view["numbers"];
    const std::string map = view["colormap"];
    int checked = 0, bad = 0;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        int x = static_cast<int>(x0 + (j + 0.5) * cw);
        int y = static_cast<int>(y0 + (i + (numbers ? 0.12 : 0.5)) * ch);
        ASSERT_TRUE(x >= 0 && y >= 0 && x < img.width && y < img.height);
        auto expected = colormap_rgb(map, (w(i, j) - vmin) / (vmax - vmin));
        auto got = img.at(x, y);
        double err = 0;
        for (int k = 0; k < 3; ++k) err = std::max(err, std::fabs(got[k] - expected[k]));
        if (err > 4.0) {
          ++bad;
          ADD_FAILURE() << "cell (" << i << ", " << j << ") weight " << w(i, j) << " at (" << x
                        << ", " << y << "): got " << got[0] << "," << got[1] << "," << got[2]
                        << " expected " << expected[0] << "," << expected[1] << "," << expected[2];
          if (bad > 5) return;
        }
        ++checked;
      }
    EXPECT_EQ(checked, rows * cols);
  }
  EXPECT_EQ(heatmaps, expected_heatmaps);
}

void screenshot_case(int scale, const std::string& extra, int width, int height) {
  std::string dir = test::temp_dir();
  std::string png = dir + "/shot.png", layout_path = dir + "/layout.json";
  int rc = run_app("--screenshot " + shell_quote(png) + " --scale " + std::to_string(scale) +
                   " --layout " + shell_quote(layout_path) + " " + extra);
  ASSERT_EQ(rc, 0);
  test::Image img = read_png(png);
  EXPECT_EQ(img.width, width * scale);
  EXPECT_EQ(img.height, height * scale);
  EXPECT_GT(distinct_colors(img), 200) << "the screenshot looks blank";
  nlohmann::json layout = read_json(layout_path);
  EXPECT_EQ(layout["width"], width * scale);
  EXPECT_EQ(layout["model_error"], "") << "the lesson model did not open";
  check_heatmaps(layout, img, 2);
  std::filesystem::copy_file(png,
                             std::filesystem::temp_directory_path() /
                                 ("attnscope_gui_last_" + std::to_string(scale) + "x.png"),
                             std::filesystem::copy_options::overwrite_existing);
}

TEST(Screenshot, DefaultExampleAt1x) {
  screenshot_case(1, "", 1600, 1000);
}

TEST(Screenshot, DefaultExampleAt2x) {
  screenshot_case(2, "", 1600, 1000);
}

TEST(Screenshot, LightThemeAt1280x720) {
  screenshot_case(1, "--theme light --window 1280x720", 1280, 720);
  // The projector theme is light: most of a screenshot's pixels are near white.
  std::string dir = test::temp_dir();
  ASSERT_EQ(
      run_app("--screenshot " + shell_quote(dir + "/l.png") + " --theme light --window 1280x720"),
      0);
  test::Image img = read_png(dir + "/l.png");
  long light = 0, total = 0;
  for (int y = 0; y < img.height; y += 5)
    for (int x = 0; x < img.width; x += 5, ++total) {
      auto c = img.at(x, y);
      light += c[0] > 200 && c[1] > 200 && c[2] > 200;
    }
  EXPECT_GT(light, total / 2);
}

// The app computes on the opengl backend (its own headless context on its own thread, beside the
// window's): the status bar's backend is opengl, both traces were computed there, and every
// heatmap shows the core's (CPU) weights.
TEST(Backend, OpenGlComputesInTheApp) {
  std::string dir = test::temp_dir();
  std::string png = dir + "/gl.png", layout_path = dir + "/gl.json";
  ASSERT_EQ(run_app("--backend opengl --screenshot " + shell_quote(png) + " --layout " +
                    shell_quote(layout_path)),
            0);
  nlohmann::json layout = read_json(layout_path);
  EXPECT_EQ(layout["backend"], "opengl");
  EXPECT_EQ(layout["backend_note"], "");
  for (const auto& t : layout["traces"]) EXPECT_EQ(t["backend"], "opengl") << t.dump();
  check_heatmaps(layout, read_png(png), 2);
}

TEST(Typing, KeystrokesChangeThePublishedTrace) {
  const std::string typed = "the cat sat on the warm mat";
  std::string dir = test::temp_dir();
  std::string layout_path = dir + "/layout.json";
  ASSERT_EQ(run_app("--type-keys " + shell_quote(typed) + " --layout " + shell_quote(layout_path)),
            0);
  nlohmann::json layout = read_json(layout_path);
  const auto& typing = layout["typing"];
  EXPECT_TRUE(typing["done"].get<bool>());
  // One character per frame went through ImGui's input queue into the text box...
  EXPECT_EQ(typing["keystroke_frames"].get<int>(), static_cast<int>(typed.size()));
  // ...and the published trace followed within a few frames of the last keystroke.
  EXPECT_LE(typing["frames_to_publish"].get<int>(), 30);
  // Newest wins: at most one job per keystroke (plus the cleared box); fewer when coalesced.
  EXPECT_LE(typing["jobs_computed"].get<int>(), static_cast<int>(typed.size()) + 2);
  const auto& trace = layout["traces"][0];
  EXPECT_EQ(trace["box_text"], typed);
  EXPECT_EQ(trace["text"], typed);
  EXPECT_EQ(trace["trace_text"], typed);
  // The tokens are the core's tokens of the typed text.
  auto model = open_model("lesson");
  std::vector<std::string> expected;
  for (const Token& t : model->tokenize(typed)) expected.push_back(t.text);
  EXPECT_EQ(trace["tokens"].get<std::vector<std::string>>(), expected);
  // Sentence 2 kept its text.
  EXPECT_NE(layout["traces"][1]["text"], typed);
}

TEST(OddInput, EmptyInvalidUtf8AndHugeTextDoNotCrash) {
  std::string dir = test::temp_dir();
  std::string huge;
  for (int i = 0; i < 12000; ++i) huge += "bank river ";  // 132 KB is over ARG_MAX per string
  huge.resize(100000);
  const std::string cases[][2] = {
      {"", ""}, {"caf\xc3\xa9 \xff\xfe bank \xc3", "\xe2\x82"}, {huge, "a"}};
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE("case " + std::to_string(n));
    std::string png = dir + "/odd" + std::to_string(n++) + ".png";
    ASSERT_EQ(run_app("--screenshot " + shell_quote(png) + " --text " + shell_quote(c[0]) +
                      " --text2 " + shell_quote(c[1]) + " --layout " + shell_quote(png + ".json")),
              0);
    test::Image img = read_png(png);
    EXPECT_EQ(img.width, 1600);
    EXPECT_GT(distinct_colors(img), 50);
    nlohmann::json layout = read_json(png + ".json");
    EXPECT_EQ(layout["model_error"], "");
    EXPECT_TRUE(layout["traces"][0].contains("tokens")) << "no trace for the odd text";
  }
}

TEST(Cli, HelpAndUsageErrors) {
  std::string dir = test::temp_dir();
  std::string out = dir + "/help.txt";
  EXPECT_EQ(run_app("--help >" + shell_quote(out)), 0);
  std::ifstream in(out);
  std::string help((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(help.find("--screenshot"), std::string::npos);
  EXPECT_NE(help.find("--theme"), std::string::npos);
  EXPECT_EQ(help.find("--type-keys"), std::string::npos) << "a testing aid should stay hidden";
  EXPECT_EQ(run_app("--scale 3 --screenshot x.png", dir + "/err1"), 2);
  EXPECT_EQ(run_app("--window big --screenshot x.png", dir + "/err2"), 2);
  // A screenshot that cannot be written is a runtime error (1) with a one-line message.
  EXPECT_EQ(run_app("--screenshot /nonexistent/dir/x.png", dir + "/err3"), 1);
  std::ifstream err(dir + "/err3");
  std::string line;
  std::getline(err, line);
  EXPECT_NE(line.find("cannot write"), std::string::npos) << line;
}

}  // namespace
}  // namespace attnscope

namespace attnscope {
namespace {

// Pointer over a heatmap cell: its query becomes the focus of every view of that sentence (the
// focus is shared), the other sentence keeps its own.
TEST(Hover, PointerOnACellFocusesItsQueryEverywhere) {
  std::string dir = test::temp_dir();
  ASSERT_EQ(run_app("--screenshot " + shell_quote(dir + "/a.png") + " --layout " +
                    shell_quote(dir + "/a.json")),
            0);
  nlohmann::json first = read_json(dir + "/a.json");
  nlohmann::json heatmap;
  std::map<int, int> default_focus;
  for (const auto& v : first["views"])
    if (v["view"] == "heatmap") {
      default_focus[v["slot"]] = v["focus"];
      if (v["slot"] == 0) heatmap = v;
    }
  ASSERT_FALSE(heatmap.is_null());
  const int row = 2, col = 5;
  ASSERT_NE(default_focus[0], row);
  double x = heatmap["x0"].get<double>() + (col + 0.5) * heatmap["cell_w"].get<double>();
  double y = heatmap["y0"].get<double>() + (row + 0.5) * heatmap["cell_h"].get<double>();
  ASSERT_EQ(run_app("--screenshot " + shell_quote(dir + "/b.png") + " --layout " +
                    shell_quote(dir + "/b.json") + " --hover " + std::to_string(x) + "," +
                    std::to_string(y)),
            0);
  nlohmann::json second = read_json(dir + "/b.json");
  int views0 = 0;
  for (const auto& v : second["views"]) {
    if (v["view"] == "formula") continue;
    SCOPED_TRACE(v["view"].get<std::string>() + " of sentence " +
                 std::to_string(v["slot"].get<int>()));
    if (v["slot"] == 0) {
      EXPECT_EQ(v["focus"], row);
      ++views0;
    } else {
      EXPECT_EQ(v["focus"], default_focus[1]);
    }
  }
  EXPECT_EQ(views0, 3);  // sentence, heatmap, arcs (the lines are the tab behind the arcs)
  // The tooltip (query, key, weight) is drawn next to the pointer: the two screenshots differ
  // there.
  test::Image a = read_png(dir + "/a.png"), b = read_png(dir + "/b.png");
  int differing = 0;
  for (int dy = 10; dy < 60; dy += 2)
    for (int dx = 10; dx < 120; dx += 2) {
      int px = static_cast<int>(x) + dx, py = static_cast<int>(y) + dy;
      if (px < a.width && py < a.height && a.at(px, py) != b.at(px, py)) ++differing;
    }
  EXPECT_GT(differing, 100);
}

// A model that cannot be opened: the window says why (and keeps working); a headless run writes
// the screenshot showing the error and exits 1 with the reason on stderr.
TEST(Model, FailedLoadIsShownNotFatal) {
  std::string dir = test::temp_dir();
  std::string png = dir + "/err.png";
  EXPECT_EQ(run_app("--model /nonexistent/model-folder --screenshot " + shell_quote(png) +
                        " --layout " + shell_quote(dir + "/err.json"),
                    dir + "/stderr"),
            1);
  test::Image img = read_png(png);
  EXPECT_GT(distinct_colors(img), 50);
  nlohmann::json layout = read_json(dir + "/err.json");
  std::string error = layout["model_error"];
  EXPECT_NE(error.find("/nonexistent/model-folder"), std::string::npos) << error;
  std::ifstream err(dir + "/stderr");
  std::string line;
  std::getline(err, line);
  EXPECT_NE(line.find("nonexistent"), std::string::npos) << line;
}

}  // namespace
}  // namespace attnscope

namespace attnscope {
namespace {

// A slow model (every compute made 600 ms slower) must not slow typing down: the keystrokes go in
// one per frame regardless, edits that pile up while a job runs are coalesced (far fewer jobs than
// keystrokes), and the newest text wins.
TEST(Typing, ASlowModelNeitherBlocksTypingNorLagsBehind) {
  const std::string typed = "a river bank in spring";
  std::string dir = test::temp_dir();
  std::string layout_path = dir + "/layout.json";
  ASSERT_EQ(test::run_app_with_env(
                "ATTNSCOPE_TEST_COMPUTE_DELAY_MS=600",
                "--type-keys " + shell_quote(typed) + " --layout " + shell_quote(layout_path)),
            0);
  nlohmann::json layout = read_json(layout_path);
  const auto& typing = layout["typing"];
  const int keys = static_cast<int>(typed.size());
  EXPECT_TRUE(typing["done"].get<bool>());
  EXPECT_EQ(typing["keystroke_frames"].get<int>(), keys);
  // Had the UI waited for each job, typing would take keys × 600 ms.
  EXPECT_LT(typing["typing_ms"].get<double>(), keys * 600.0 * 0.75);
  EXPECT_LT(typing["jobs_computed"].get<int>(), keys * 2 / 3);
  EXPECT_EQ(layout["traces"][0]["text"], typed);
  EXPECT_EQ(layout["traces"][0]["trace_text"], typed);
}

}  // namespace
}  // namespace attnscope
