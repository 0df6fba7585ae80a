// Long inputs in the window, checked on its screenshot and layout file: a single hot cell among
// 4096 x 4096 stays visible zoomed out (max-pooling), the heatmap fills its pane with every label
// at 23 tokens, the arc labels never overlap, and the formula view shows the selected query's row
// at 40 tokens with the core's numbers.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"
#include "core/trace/trace_writer.h"
#include "gui_test_util.h"

namespace attnscope {
namespace {

using test::read_json;
using test::run_app;
using test::shell_quote;

using test::expect_disjoint;
using test::find_view;
using test::words;

TEST(LongView, ZoomedOutMaxPoolingKeepsASingleHotCellVisible) {
  // A 4096-token trace: every row uniform except one, which puts all its weight on one key.
  const int n = 4096, hot_row = 1234, hot_col = 2345;
  AttentionTrace trace;
  trace.model.name = "hot-cell";
  trace.model.kind = "gpt2";
  trace.backend = "cpu";
  for (int i = 0; i < n; ++i) {
    std::string w = std::to_string(i);
    w.insert(w.begin(), 'w');  // not "w" + …: GCC 12's false -Wrestrict (bug 105329)
    Token t;
    t.id = i;
    t.text = w;
    t.start = static_cast<int>(trace.text.size()) + (i ? 1 : 0);
    if (i) trace.text += ' ';
    trace.text += w;
    t.end = static_cast<int>(trace.text.size());
    trace.tokens.push_back(t);
  }
  Matrix a = Matrix::Constant(n, n, 1.0f / n);
  a.row(hot_row).setZero();
  a(hot_row, hot_col) = 1.0f;
  trace.attention = {{std::move(a)}};
  const std::string dir = test::temp_dir();
  const std::string file = dir + "/hot.safetensors";
  {
    std::ofstream out(file, std::ios::binary);
    ExportTarget target{out, nullptr};
    trace_writer("safetensors").write(whole_trace(trace), target);
  }
  const std::string png = dir + "/shot.png", layout_path = dir + "/layout.json";
  ASSERT_EQ(run_app("view " + shell_quote(file) + " --screenshot " + shell_quote(png) +
                    " --layout " + shell_quote(layout_path)),
            0);
  const nlohmann::json layout = read_json(layout_path);
  const nlohmann::json* view = find_view(layout, "heatmap", 0);
  ASSERT_NE(view, nullptr);
  ASSERT_EQ((*view)["rows"], n);
  EXPECT_DOUBLE_EQ((*view)["zoom"].get<double>(), 1.0);
  EXPECT_GT((*view)["pool_level"].get<int>(), 0) << "4096 cells cannot each get a pixel";
  const double x0 = (*view)["x0"], y0 = (*view)["y0"], cell = (*view)["cell_w"];
  ASSERT_LT(cell, 0.5) << "the heatmap is expected zoomed out";
  // The hot cell's colour (the top of the colormap) within two pixels of where it belongs.
  const test::Image img = test::read_png(png);
  const auto hot = test::colormap_rgb((*view)["colormap"], 1.0);
  const int cx = static_cast<int>(x0 + (hot_col + 0.5) * cell),
            cy = static_cast<int>(y0 + (hot_row + 0.5) * cell);
  double best = 1e9;
  int hits = 0;
  for (int y = cy - 3; y <= cy + 3; ++y)
    for (int x = cx - 3; x <= cx + 3; ++x) {
      const auto c = img.at(x, y);
      double err = 0;
      for (int k = 0; k < 3; ++k) err = std::max(err, std::fabs(c[k] - hot[k]));
      best = std::min(best, err);
      hits += err < 12;
    }
  EXPECT_GE(hits, 2) << "the hot cell is not visible near (" << cx << ", " << cy
                     << "); closest colour is off by " << best;
  // Everywhere else the grid shows the dim uniform weight: the hot colour appears nowhere far off.
  const double gx = (*view)["grid"]["x"], gy = (*view)["grid"]["y"], gw = (*view)["grid"]["w"];
  int far_hits = 0;
  for (int y = static_cast<int>(gy) + 1; y < gy + gw - 1; y += 2)
    for (int x = static_cast<int>(gx) + 1; x < gx + gw - 1; x += 2) {
      if (std::abs(x - cx) < 8 && std::abs(y - cy) < 8) continue;
      const auto c = img.at(x, y);
      double err = 0;
      for (int k = 0; k < 3; ++k) err = std::max(err, std::fabs(c[k] - hot[k]));
      far_hits += err < 12;
    }
  EXPECT_EQ(far_hits, 0);
}

TEST(LongView, HeatmapFillsItsPaneWithEveryLabelAt23Tokens) {
  const std::string dir = test::temp_dir(), layout_path = dir + "/layout.json";
  ASSERT_EQ(run_app("--text " + shell_quote(words(23)) + " --screenshot " +
                    shell_quote(dir + "/s.png") + " --layout " + shell_quote(layout_path)),
            0);
  const nlohmann::json layout = read_json(layout_path);
  const nlohmann::json* view = find_view(layout, "heatmap", 0);
  ASSERT_NE(view, nullptr);
  const int rows = (*view)["rows"];
  ASSERT_EQ(rows, 23);
  // Every row and column label, none overlapping, in type large enough to read.
  EXPECT_EQ((*view)["row_labels"].size(), 23u);
  EXPECT_EQ((*view)["col_labels"].size(), 23u);
  expect_disjoint((*view)["row_labels"], "row labels");
  expect_disjoint((*view)["col_labels"], "column labels");
  EXPECT_GE((*view)["label_size"].get<double>(), 10.0);
  // The grid fills the pane in one direction: its width or height takes most of the pane's.
  const double gw = (*view)["grid"]["w"], gh = (*view)["grid"]["h"];
  const double pw = (*view)["pane"]["w"], ph = (*view)["pane"]["h"];
  EXPECT_GT(std::max(gw / pw, gh / ph), 0.7)
      << "grid " << gw << "x" << gh << " in a pane of " << pw << "x" << ph;
}

TEST(LongView, ArcLabelsNeverOverlap) {
  const std::string dir = test::temp_dir();
  const std::string text = words(23);
  // Default (nothing hovered), then with the pointer on each of a few tokens of the arc diagram.
  ASSERT_EQ(run_app("--text " + shell_quote(text) + " --screenshot " + shell_quote(dir + "/a.png") +
                    " --layout " + shell_quote(dir + "/a.json")),
            0);
  const nlohmann::json first = read_json(dir + "/a.json");
  const nlohmann::json* arcs = find_view(first, "arcs", 0);
  ASSERT_NE(arcs, nullptr);
  EXPECT_EQ((*arcs)["mode"], "strongest") << "an encoder shows every query's strongest key";
  EXPECT_GT((*arcs)["labels"].size(), 5u);
  expect_disjoint((*arcs)["labels"], "arc labels (default)");
  int runs = 0;
  for (const auto& label : (*arcs)["labels"]) {
    if (label["kind"] != "token" || runs == 3) continue;
    const double x = label["x"].get<double>() + label["w"].get<double>() / 2,
                 y = label["y"].get<double>() + label["h"].get<double>() / 2;
    const std::string json = dir + "/h" + std::to_string(runs) + ".json";
    ASSERT_EQ(run_app("--text " + shell_quote(text) + " --screenshot " +
                      shell_quote(dir + "/h.png") + " --layout " + shell_quote(json) + " --hover " +
                      std::to_string(x) + "," + std::to_string(y)),
              0);
    const nlohmann::json hovered = read_json(json);
    const nlohmann::json* h = find_view(hovered, "arcs", 0);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ((*h)["mode"], "query");
    EXPECT_GT((*h)["threshold"].get<double>(), 0.0);
    expect_disjoint((*h)["labels"],
                    "arc labels, pointer on '" + label["text"].get<std::string>() + "'");
    ++runs;
  }
  EXPECT_EQ(runs, 3);
}

TEST(LongView, FormulaShowsTheSelectedRowAt40Tokens) {
  const std::string dir = test::temp_dir();
  const std::string text = words(40);
  ASSERT_EQ(run_app("--text " + shell_quote(text) + " --screenshot " + shell_quote(dir + "/f.png") +
                    " --layout " + shell_quote(dir + "/f.json")),
            0);
  // Point at the last token of the strip's first line (the strip scrolls; that line is in view).
  const nlohmann::json first = read_json(dir + "/f.json");
  const nlohmann::json* sentence = find_view(first, "sentence", 0);
  ASSERT_NE(sentence, nullptr);
  ASSERT_FALSE((*sentence)["tokens"].empty());
  const double line_y = (*sentence)["tokens"][0]["y"];
  int query = -1;
  double x = -1, y = -1;
  for (const auto& box : (*sentence)["tokens"])
    if (box["y"].get<double>() == line_y && box["index"].get<int>() > query) {
      query = box["index"];
      x = box["x"].get<double>() + 4, y = box["y"].get<double>() + box["h"].get<double>() / 2;
    }
  ASSERT_GT(query, 0);
  ASSERT_EQ(
      run_app("--text " + shell_quote(text) + " --screenshot " + shell_quote(dir + "/g.png") +
              " --layout " + shell_quote(dir + "/g.json") + " --tabs formula --frames 12 --hover " +
              std::to_string(x) + "," + std::to_string(y)),
      0);
  const nlohmann::json layout = read_json(dir + "/g.json");
  const nlohmann::json* formula = find_view(layout, "formula", 0);
  ASSERT_NE(formula, nullptr);
  EXPECT_EQ((*formula)["mode"], "row_table");
  EXPECT_EQ((*formula)["query"], query);
  EXPECT_EQ((*formula)["keys"], 40);
  ASSERT_GT((*formula)["cells"].size(), 3u);
  // The numbers are the core's: the weights row, and softmax of the scaled row reproduces it.
  auto model = open_model("lesson");
  auto backend = make_cpu_backend();
  const AttentionTrace core = model->run(layout["traces"][0]["text"], *backend);
  const Matrix& w = core.attention.at(0).at(0);
  ASSERT_EQ(w.rows(), 40);
  double denominator = 0, row_max = -1e30;
  for (int j = 0; j < 40; ++j) row_max = std::max<double>(row_max, core.steps[0].scaled(query, j));
  for (int j = 0; j < 40; ++j) denominator += std::exp(core.steps[0].scaled(query, j) - row_max);
  for (const auto& cell : (*formula)["cells"]) {
    const int j = cell["key"];
    EXPECT_NEAR(cell["weight"].get<double>(), w(query, j), 1e-6) << "key " << j;
    if (cell["scaled"].is_number()) {
      EXPECT_NEAR(std::exp(cell["scaled"].get<double>() - row_max) / denominator, w(query, j), 1e-4)
          << "key " << j;
    }
  }
}

}  // namespace
}  // namespace attnscope
