// Encoder–decoder traces in the window (issue 24), from a stored trace of the fake encoder–decoder
// (tests/common/fake_seq2seq_model.h) opened with `view FILE`, which goes through the worker's
// translation path: the cross-attention heatmap has a row per target token and a column per
// source token, each cell coloured as its weight, labelled with each side's tokens; the arcs join
// two rows of tokens, the source above and the target below. The screenshots are kept in the
// temporary folder (attnscope_gui_seq2seq_*.png) for a look by eye.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/backend/cpu/cpu_backend.h"
#include "core/text/token_label.h"
#include "core/trace/trace_writer.h"
#include "gui_test_util.h"
#include "tests/common/fake_seq2seq_model.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::find_view;
using test::read_json;
using test::run_app;
using test::shell_quote;

AttentionTrace translation() {
  const std::unique_ptr<Backend> cpu = make_cpu_backend();
  return test::FakeSeq2SeqModel().run_translation("the cat sat on the mat", std::nullopt, *cpu);
}

struct Shot {
  nlohmann::json layout;
  test::Image image;
};

// `view FILE`, or with `drop` the top-level `--drop FILE` (which takes the testing options such as
// --hover that the view subcommand does not).
Shot view_trace(const AttentionTrace& trace, const std::string& extra, const std::string& name,
                bool drop = false) {
  const std::string dir = test::temp_dir();
  const std::string file = dir + "/t.json", png = dir + "/shot.png",
                    layout_path = dir + "/layout.json";
  {
    std::ofstream out(file, std::ios::binary);
    ExportTarget target{out, nullptr};
    trace_writer("json").write(whole_trace(trace), target);
  }
  EXPECT_EQ(run_app((drop ? "--drop " : "view ") + shell_quote(file) +
                    " --window 1600x1000 --screenshot " + shell_quote(png) + " --layout " +
                    shell_quote(layout_path) + " " + extra),
            0);
  fs::copy_file(png, fs::temp_directory_path() / ("attnscope_gui_seq2seq_" + name + ".png"),
                fs::copy_options::overwrite_existing);
  return {read_json(layout_path), test::read_png(png)};
}

double colour_error(const std::array<int, 3>& got, const std::array<double, 3>& want) {
  double err = 0;
  for (int k = 0; k < 3; ++k) err = std::max(err, std::fabs(got[k] - want[k]));
  return err;
}

TEST(Seq2SeqWindow, CrossAttentionHeatmapIsTargetRowsBySourceColumns) {
  const AttentionTrace t = translation();
  const DecoderTrace& d = *t.decoder;
  const Shot shot = view_trace(t, "", "heatmap");
  const nlohmann::json* view = find_view(shot.layout, "seq2seq_heatmap", 0);
  ASSERT_NE(view, nullptr) << "no cross-attention heatmap drawn";
  EXPECT_EQ((*view)["part"], "Cross-attention");
  EXPECT_NE((*view)["title"].get<std::string>().find(
                "Cross-attention: target queries \xC3\x97 source keys"),
            std::string::npos);
  ASSERT_EQ((*view)["rows"], d.targets());
  ASSERT_EQ((*view)["cols"], static_cast<int>(t.tokens.size()));
  for (int i = 0; i < d.targets(); ++i)
    EXPECT_EQ((*view)["row_labels"][i], token_label(d.tokens, i, t.model.pieces));
  for (size_t j = 0; j < t.tokens.size(); ++j)
    EXPECT_EQ((*view)["col_labels"][j], token_label(t.tokens, j, t.model.pieces));
  // Every cell's colour (sampled at its corner, clear of the number) is the colormap at its weight
  // over the drawn range.
  const int layer = (*view)["layer"], head = (*view)["head"];
  const Matrix& w = d.cross_attention[static_cast<size_t>(layer)][static_cast<size_t>(head)];
  const double x0 = (*view)["x0"], y0 = (*view)["y0"], cell_w = (*view)["cell_w"],
               cell_h = (*view)["cell_h"];
  const double vmax = (*view)["vmax"];
  ASSERT_GT(std::min(cell_w, cell_h), 8.0) << "cells too small to read";
  EXPECT_FLOAT_EQ(static_cast<float>(vmax), w.maxCoeff());
  for (int i = 0; i < w.rows(); ++i)
    for (int j = 0; j < w.cols(); ++j) {
      const auto want = test::colormap_rgb((*view)["colormap"], w(i, j) / vmax);
      const auto got = shot.image.at(static_cast<int>(x0 + j * cell_w + 3),
                                     static_cast<int>(y0 + i * cell_h + 3));
      EXPECT_LT(colour_error(got, want), 10.0) << "cell " << i << "," << j << " weight " << w(i, j);
    }
}

TEST(Seq2SeqWindow, ArcsJoinTheSourceRowAndTheTargetRow) {
  const AttentionTrace t = translation();
  const DecoderTrace& d = *t.decoder;
  const Shot shot = view_trace(t, "--focus arcs", "arcs");
  const nlohmann::json* view = find_view(shot.layout, "seq2seq_arcs", 0);
  ASSERT_NE(view, nullptr) << "no cross-attention arcs drawn";
  ASSERT_EQ((*view)["top"].size(), t.tokens.size());
  ASSERT_EQ((*view)["bottom"].size(), d.tokens.size());
  for (size_t j = 0; j < t.tokens.size(); ++j)
    EXPECT_EQ((*view)["top_labels"][j], token_label(t.tokens, j, t.model.pieces));
  const double top_y = (*view)["top"][0][1], bottom_y = (*view)["bottom"][0][1];
  EXPECT_GT(bottom_y - top_y, 100.0) << "the two sentences' rows are expected apart";
  // Every arc leaves a target token at the bottom and ends at a source token at the top; the
  // strongest of target token i (i >= 1) is the source word it translates (i - 1).
  ASSERT_FALSE((*view)["arcs"].empty());
  for (const auto& arc : (*view)["arcs"]) {
    const int q = arc["query"], k = arc["key"];
    EXPECT_NEAR(arc["from"][0].get<double>(), (*view)["bottom"][q][0].get<double>(), 1.0);
    EXPECT_NEAR(arc["to"][0].get<double>(), (*view)["top"][k][0].get<double>(), 1.0);
    EXPECT_GT(arc["from"][1].get<double>(), arc["to"][1].get<double>());
  }
  const Matrix& w = d.cross_attention[0][0];
  for (int i = 1; i + 1 < d.targets(); ++i) {
    Eigen::Index best = 0;
    w.row(i).maxCoeff(&best);
    EXPECT_EQ(best, i - 1) << "the fake model aligns target " << i << " with source " << i - 1;
  }
  // The strongest arc is drawn: its midpoint is not the background.
  const auto& a = (*view)["arcs"][0];
  const int mx = static_cast<int>((a["from"][0].get<double>() + a["to"][0].get<double>()) / 2);
  const int my = static_cast<int>((a["from"][1].get<double>() + a["to"][1].get<double>()) / 2);
  // The background: left of the rows, half-way down, where the captions leave room.
  const double step = (*view)["top"][1][0].get<double>() - (*view)["top"][0][0].get<double>();
  const auto background =
      shot.image.at(static_cast<int>((*view)["top"][0][0].get<double>() - step / 2 - 10),
                    static_cast<int>((top_y + bottom_y) / 2));
  int differs = 0;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx) {
      const auto c = shot.image.at(mx + dx, my + dy);
      differs += std::abs(c[0] - background[0]) + std::abs(c[1] - background[1]) +
                     std::abs(c[2] - background[2]) >
                 30;
    }
  EXPECT_GT(differs, 0) << "no arc drawn at (" << mx << ", " << my << ")";
}

// Both sentences are shown, and hovering a token of the translation's timeline shows the top
// predictions it was chosen from: token i's are the trace's predictions[i - 1].
TEST(Seq2SeqWindow, TheTimelineShowsWhatEachTokenWasChosenFrom) {
  const AttentionTrace t = translation();
  const DecoderTrace& d = *t.decoder;
  const Shot first = view_trace(t, "", "timeline", true);
  const nlohmann::json* timeline = find_view(first.layout, "seq2seq_timeline", 0);
  ASSERT_NE(timeline, nullptr);
  EXPECT_TRUE((*timeline)["greedy"].get<bool>());
  EXPECT_EQ((*timeline)["target_text"], "le chat assis sur le tapis");
  ASSERT_EQ((*timeline)["chips"].size(), d.tokens.size());
  const nlohmann::json& chip = (*timeline)["chips"][2];
  EXPECT_EQ(chip["text"], token_label(d.tokens, 2, t.model.pieces));
  const int x = static_cast<int>(chip["x"].get<double>() + chip["w"].get<double>() / 2);
  const int y = static_cast<int>(chip["y"].get<double>() + chip["h"].get<double>() / 2);
  const Shot hovered = view_trace(t, "--hover " + std::to_string(x) + "," + std::to_string(y),
                                  "timeline_hover", true);
  const nlohmann::json* after = find_view(hovered.layout, "seq2seq_timeline", 0);
  ASSERT_NE(after, nullptr);
  const nlohmann::json& tip = (*after)["tooltip"];
  ASSERT_TRUE(tip.is_object()) << "no tooltip at (" << x << ", " << y << ")";
  EXPECT_EQ(tip["token"], 2);
  const std::vector<Prediction>& want = d.predictions[1];
  ASSERT_EQ(tip["predictions"].size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(tip["predictions"][k]["text"], want[k].text);
    EXPECT_EQ(tip["predictions"][k]["probability"].get<float>(), want[k].probability);
  }
  EXPECT_EQ(want[0].text, d.tokens[2].text) << "the greedy choice is the top prediction";
}

// A real encoder–decoder (the bart-tiny fixture) through the worker: with --target the decoder
// reads that sentence (decoder start token, its tokens, </s>), without it the model's own greedy
// translation; both sentences are shown.
TEST(Seq2SeqWindow, ARealModelTranslatesOrReadsTheGivenTarget) {
  const fs::path folder = fs::path(ATTNSCOPE_FIXTURES) / "bart-tiny";
  if (!fs::exists(folder / "config.json")) GTEST_SKIP() << "no bart-tiny fixture";
  for (const bool given : {true, false}) {
    const std::string dir = test::temp_dir(), layout_path = dir + "/layout.json";
    ASSERT_EQ(run_app("--model " + shell_quote(folder.string()) + " --text 'the cat sat' " +
                      (given ? "--target 'le chat' " : "") + "--window 1600x1000 --screenshot " +
                      shell_quote(dir + "/s.png") + " --layout " + shell_quote(layout_path)),
              0);
    fs::copy_file(dir + "/s.png",
                  fs::temp_directory_path() / (std::string("attnscope_gui_seq2seq_bart_") +
                                               (given ? "target" : "greedy") + ".png"),
                  fs::copy_options::overwrite_existing);
    const nlohmann::json layout = read_json(layout_path);
    const nlohmann::json* timeline = find_view(layout, "seq2seq_timeline", 0);
    ASSERT_NE(timeline, nullptr) << (given ? "target" : "greedy");
    EXPECT_EQ((*timeline)["greedy"].get<bool>(), !given);
    if (given) {
      EXPECT_EQ((*timeline)["target_text"], "le chat");
    } else {
      EXPECT_GT((*timeline)["chips"].size(), 1u);
    }
    const nlohmann::json* heatmap = find_view(layout, "seq2seq_heatmap", 0);
    ASSERT_NE(heatmap, nullptr);
    EXPECT_EQ((*heatmap)["rows"], (*timeline)["chips"].size());
  }
}

// A click on "Decoder self-attention" (real X events through xdotool; the trace opened as a
// dropped file, as `view` opens it) turns the heatmap into the decoder's own [target x target]
// matrix: nothing above the diagonal, the decoder's tokens on both sides.
TEST(Seq2SeqWindow, ClickingDecoderSelfAttentionShowsTheCausalTargetMatrix) {
  if (std::system("command -v xdotool >/dev/null 2>&1") != 0) GTEST_SKIP() << "no xdotool";
  const AttentionTrace t = translation();
  const DecoderTrace& d = *t.decoder;
  const Shot first = view_trace(t, "", "before_click");
  const nlohmann::json* selector = find_view(first.layout, "seq2seq_selector", 0);
  ASSERT_NE(selector, nullptr);
  EXPECT_EQ((*selector)["chosen"], "Cross-attention");
  const nlohmann::json& button = (*selector)["buttons"][1];
  ASSERT_EQ(button["text"], "Decoder self-attention");
  const std::string dir = test::temp_dir(), file = dir + "/t.json";
  {
    std::ofstream out(file, std::ios::binary);
    ExportTarget target{out, nullptr};
    trace_writer("json").write(whole_trace(t), target);
  }
  const int x = static_cast<int>(button["x"].get<double>() + button["h"].get<double>() / 2);
  const int y = static_cast<int>(button["y"].get<double>() + button["h"].get<double>() / 2);
  const std::string cmd = shell_quote(ATTNSCOPE_CLICK_SCRIPT) + " " +
                          shell_quote(std::getenv("ATTNSCOPE_BIN")) + " " + shell_quote(dir) + " " +
                          std::to_string(x) + " " + std::to_string(y) + " '' --drop " +
                          shell_quote(file) + " --window 1600x1000";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const nlohmann::json layout = read_json(dir + "/layout.json");
  const nlohmann::json* view = find_view(layout, "seq2seq_heatmap", 0);
  ASSERT_NE(view, nullptr);
  EXPECT_EQ((*view)["part"], "Decoder self-attention");
  EXPECT_NE((*view)["title"].get<std::string>().find("Decoder self-attention"), std::string::npos);
  ASSERT_EQ((*view)["rows"], d.targets());
  ASSERT_EQ((*view)["cols"], d.targets());
  for (int j = 0; j < d.targets(); ++j)
    EXPECT_EQ((*view)["col_labels"][j], token_label(d.tokens, j, t.model.pieces));
  const Matrix& w = d.attention[0][0];
  for (int i = 0; i < d.targets(); ++i)
    for (int j = 0; j < d.targets(); ++j) {
      EXPECT_EQ((*view)["weights"][i][j].get<float>(), w(i, j));
      if (j > i) {
        EXPECT_EQ(w(i, j), 0.0f) << "the decoder sees no later token";
      }
    }
}

// `render --view cross` draws the same matrix as a page figure: a PNG whose cells have the
// colours of the weights, target rows by source columns; a trace without a decoder is refused.
TEST(Seq2SeqFigure, RenderCrossDrawsTheDecodersCrossAttention) {
  const AttentionTrace t = translation();
  const std::string dir = test::temp_dir();
  const std::string file = dir + "/t.json", png = dir + "/cross.png",
                    layout_path = dir + "/figure.json";
  {
    std::ofstream out(file, std::ios::binary);
    ExportTarget target{out, nullptr};
    trace_writer("json").write(whole_trace(t), target);
  }
  ASSERT_EQ(run_app("render --trace " + shell_quote(file) + " --view cross --layer 2 --head 1 -o " +
                    shell_quote(png) + " --layout " + shell_quote(layout_path)),
            0);
  fs::copy_file(png, fs::temp_directory_path() / "attnscope_gui_seq2seq_figure.png",
                fs::copy_options::overwrite_existing);
  const nlohmann::json layout = read_json(layout_path);
  EXPECT_NE(layout["title"].get<std::string>().find("Cross-attention"), std::string::npos);
  const nlohmann::json& cells = layout["heatmap"];
  const Matrix& w = t.decoder->cross_attention[2][1];
  ASSERT_EQ(cells["rows"], w.rows());
  ASSERT_EQ(cells["cols"], w.cols());
  const test::Image img = test::read_png(png);
  const double x0 = cells["x0"], y0 = cells["y0"], cell = cells["cell"], vmax = cells["vmax"];
  const double px = img.width / layout["width"].get<double>();  // PNG pixels per figure unit
  for (int i = 0; i < w.rows(); ++i)
    for (int j = 0; j < w.cols(); ++j) {
      const auto want = test::colormap_rgb(cells["colormap"], w(i, j) / vmax);
      const auto got = img.at(static_cast<int>((x0 + j * cell + 2) * px),
                              static_cast<int>((y0 + i * cell + 2) * px));
      EXPECT_LT(colour_error(got, want), 10.0) << "cell " << i << "," << j;
    }
  // A trace with no decoder, or a head the decoder lacks: exit 2 with the reason.
  const std::string err = dir + "/err.txt";
  EXPECT_EQ(run_app("render --trace " + shell_quote(file) + " --view cross --layer 3 -o " +
                        shell_quote(dir + "/x.png"),
                    err),
            2);
  std::ifstream in(err);
  const std::string message((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(message.find("the decoder has 3 layers"), std::string::npos) << message;
}

}  // namespace
}  // namespace attnscope
