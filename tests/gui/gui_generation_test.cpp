// The generation timeline, run for real under Xvfb on a fixture decoder (llama-tiny): Generate
// (the hidden --generate N presses it) adds N tokens that the timeline lists, Shift+← steps back,
// and the focused step's heatmap row, in numbers and in pixels, is what the core's own Generator
// says that token attended to.
#include <cmath>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"
#include "gui_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::colormap_rgb;
using test::read_json;
using test::read_png;
using test::run_app;
using test::shell_quote;

const std::string kPrompt = "Once upon a time";

fs::path fixture_decoder() {
  return fs::path(ATTNSCOPE_FIXTURES) / "llama-tiny";
}

const nlohmann::json* find_view(const nlohmann::json& layout, const std::string& name, int slot) {
  for (const auto& v : layout["views"])
    if (v["view"] == name && v["slot"] == slot) return &v;
  return nullptr;
}

struct Reference {
  AttentionTrace trace;               // prompt + every generated token
  std::vector<GenerationStep> steps;  // the Generator's own steps
  int prompt_tokens = 0;
};

Reference generate_in_core(int tokens) {
  auto model = open_model(fixture_decoder().string());
  auto backend = make_cpu_backend();
  GenerationOptions options;
  options.max_new_tokens = tokens;
  auto generator = model->start_generation(kPrompt, *backend, options);
  Reference ref;
  ref.prompt_tokens = static_cast<int>(generator->trace().tokens.size());
  while (!generator->done()) ref.steps.push_back(generator->step());
  ref.trace = generator->trace();
  return ref;
}

void run_generation(int tokens, const std::string& keys, const std::string& extra,
                    nlohmann::json& layout, test::Image& img) {
  const std::string dir = test::temp_dir();
  const std::string png = dir + "/shot.png", layout_path = dir + "/layout.json";
  const int rc = run_app("--model " + shell_quote(fixture_decoder().string()) + " --text " +
                         shell_quote(kPrompt) + " --generate " + std::to_string(tokens) +
                         (keys.empty() ? "" : " --keys " + keys) + " --screenshot " +
                         shell_quote(png) + " --layout " + shell_quote(layout_path) + " " + extra);
  ASSERT_EQ(rc, 0);
  layout = read_json(layout_path);
  img = read_png(png);
  // Kept for a look by eye (the review of the screenshots).
  const std::string theme = extra.find("light") != std::string::npos ? "light" : "dark";
  fs::copy_file(png,
                fs::temp_directory_path() /
                    ("attnscope_gui_generation_" + std::to_string(tokens) + "_" + theme + ".png"),
                fs::copy_options::overwrite_existing);
}

// The heatmap's row `row` in pixels and numbers against `want` (the Generator's step row, over the
// keys so far; later keys are 0: a token never sees the future).
void check_heatmap_row(const nlohmann::json& heatmap, const test::Image& img, int row,
                       const RowVector& want) {
  SCOPED_TRACE("heatmap row " + std::to_string(row));
  const int cols = heatmap["cols"];
  const double x0 = heatmap["x0"], y0 = heatmap["y0"], cw = heatmap["cell_w"],
               ch = heatmap["cell_h"];
  const double vmin = heatmap["vmin"], vmax = heatmap["vmax"];
  const bool numbers = heatmap["numbers"];
  const std::string map = heatmap["colormap"];
  ASSERT_GE(cw, 4.0) << "cells too small to sample";
  for (int j = 0; j < cols; ++j) {
    const double w = j < want.cols() ? want(j) : 0.0;
    EXPECT_NEAR(heatmap["weights"][row][j].get<double>(), w, 1e-5) << "key " << j;
    const int x = static_cast<int>(x0 + (j + 0.5) * cw);
    const int y = static_cast<int>(y0 + (row + (numbers ? 0.12 : 0.5)) * ch);
    const auto expected = colormap_rgb(map, (w - vmin) / (vmax - vmin));
    const auto got = img.at(x, y);
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(got[k], expected[k], 4.0) << "key " << j << " weight " << w << " channel " << k;
  }
}

TEST(Generation, TheTimelineStepsThroughWhatEachNewTokenAttendedTo) {
  if (!fs::exists(fixture_decoder() / "tokenizer.json")) GTEST_SKIP() << "no llama-tiny fixture";
  constexpr int kTokens = 5;
  const Reference ref = generate_in_core(kTokens);
  ASSERT_EQ(static_cast<int>(ref.steps.size()), kTokens);
  nlohmann::json layout;
  test::Image img;
  // Two steps back from the newest token: step 2 (steps 0..4) is in focus.
  run_generation(kTokens, "shift+left,shift+left", "", layout, img);
  if (HasFatalFailure()) return;

  // The timeline lists the generated tokens; the trace shown is the Generator's.
  const nlohmann::json* timeline = find_view(layout, "timeline", 0);
  ASSERT_NE(timeline, nullptr) << "no timeline in the layout";
  EXPECT_EQ((*timeline)["steps"], kTokens);
  EXPECT_EQ((*timeline)["prompt_tokens"], ref.prompt_tokens);
  EXPECT_EQ((*timeline)["running"], false);
  EXPECT_EQ((*timeline)["chips"].size(), static_cast<size_t>(kTokens));
  EXPECT_EQ((*timeline)["selected_step"], 2);
  const int focus = ref.prompt_tokens + 2;
  EXPECT_EQ((*timeline)["focus"], focus);
  const auto& tokens = layout["traces"][0]["tokens"];
  ASSERT_EQ(tokens.size(), ref.trace.tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i)
    EXPECT_EQ(tokens[i].get<std::string>(), ref.trace.tokens[i].text) << "token " << i;
  EXPECT_EQ(layout["traces"][0]["text"], kPrompt) << "the text box keeps the prompt";

  // Generated tokens are marked in the sentence, and it focuses the chosen step.
  const nlohmann::json* sentence = find_view(layout, "sentence", 0);
  ASSERT_NE(sentence, nullptr);
  EXPECT_EQ((*sentence)["focus"], focus);
  for (const auto& box : (*sentence)["tokens"])
    EXPECT_EQ(box["generated"], box["index"].get<int>() >= ref.prompt_tokens) << box["index"];

  // The heatmap's rows of the generated tokens are the Generator's step rows (the head shown);
  // the focused one is marked.
  const nlohmann::json* heatmap = find_view(layout, "heatmap", 0);
  ASSERT_NE(heatmap, nullptr);
  const int layer = (*heatmap)["layer"], head = (*heatmap)["head"];
  ASSERT_EQ((*heatmap)["rows"], ref.prompt_tokens + kTokens);
  for (int k = 0; k < kTokens; ++k)
    check_heatmap_row(*heatmap, img, ref.prompt_tokens + k, ref.steps[k].attention[layer][head]);
}

TEST(Generation, ScreenshotsForTheReviewInBothThemes) {
  if (!fs::exists(fixture_decoder() / "tokenizer.json")) GTEST_SKIP() << "no llama-tiny fixture";
  for (const std::string extra : {"--theme light --window 1280x720", "--theme dark"}) {
    SCOPED_TRACE(extra);
    nlohmann::json layout;
    test::Image img;
    run_generation(8, "shift+left", extra, layout, img);
    if (HasFatalFailure()) return;
    const nlohmann::json* timeline = find_view(layout, "timeline", 0);
    ASSERT_NE(timeline, nullptr);
    EXPECT_EQ((*timeline)["selected_step"], 6);
    // Every chip lies inside the window.
    for (const auto& chip : (*timeline)["chips"]) {
      EXPECT_GE(chip["y"].get<double>(), 0.0);
      EXPECT_LE(chip["y"].get<double>() + chip["h"].get<double>(), layout["height"].get<double>());
    }
  }
}

}  // namespace
}  // namespace attnscope
