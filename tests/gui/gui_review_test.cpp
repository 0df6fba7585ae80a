// Issue 21's review findings (items 5, 6 and the status bar of 7), run for real under Xvfb:
// - a figure exported from the window (File → Export view, via the hidden --export-view) names the
//   head, aggregate and title the window shows and draws the window's top-k arcs and lines;
// - layers, heads and tokens count from 0 in the window as in the figures ("layer 0 · head 0");
// - colorbar ticks sit at round weights, in the window and in figures;
// - the model view's grid fills the pane, names its summaries whole, gives the enlarged thumbnail
//   token axes and keeps its popup off the status bar;
// - the status bar shows a long message whole and keeps an error until it is dismissed.
// Expected numbers come from `attnscope export` (the core's trace) and are recomputed here.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gui_test_util.h"

namespace attnscope {
namespace {

using test::read_json;
using test::run_app;
using test::shell_quote;

const std::string kGpt2 = ATTNSCOPE_FIXTURES "/gpt2-tiny-f32";
const std::string kText = "the cat sat on the mat and the dog sat on the log";
const std::string kDot = " \xC2\xB7 ";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Review : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::getenv("DISPLAY")) GTEST_SKIP() << "needs a display (run under xvfb-run)";
    dir = test::temp_dir();
  }
  // Runs the app headless on `session` (a session document, format added), `extra` options
  // after; returns its exit status and reads its layout file.
  int run_session(nlohmann::json session, const std::string& extra, nlohmann::json& layout,
                  const std::string& name = "run") {
    session["format"] = "attnscope-session/1";
    const std::string file = dir + "/" + name + ".attnscope";
    { std::ofstream(file) << session.dump(); }
    const std::string lay = dir + "/" + name + ".layout.json";
    const int rc = run_app("--session " + shell_quote(file) + " --theme light --screenshot " +
                               shell_quote(dir + "/" + name + ".png") + " --layout " +
                               shell_quote(lay) + " " + extra,
                           dir + "/" + name + ".err");
    layout = read_json(lay);
    return rc;
  }
  // The core's trace of kText on the fixture GPT-2 (attnscope export: the CLI's own path).
  nlohmann::json core_trace() {
    const std::string path = dir + "/trace.json";
    EXPECT_EQ(run_app("export --model " + shell_quote(kGpt2) + " --text " + shell_quote(kText) +
                      " -o " + shell_quote(path)),
              0);
    return read_json(path);
  }
  std::string dir;
};

const nlohmann::json* find_view(const nlohmann::json& layout, const std::string& view,
                                int slot = 0) {
  for (const auto& v : layout["views"])
    if (v["view"] == view && v.value("slot", 0) == slot) return &v;
  return nullptr;
}

// The k largest weights of `row` (ties at the k-th kept, as a top-k view keeps them).
std::set<int> top_k_keys(const std::vector<double>& row, int k, double* threshold) {
  std::vector<double> sorted = row;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  *threshold = sorted[static_cast<size_t>(std::min<int>(k, static_cast<int>(row.size())) - 1)];
  std::set<int> keys;
  for (size_t j = 0; j < row.size(); ++j)
    if (row[j] >= *threshold) keys.insert(static_cast<int>(j));
  return keys;
}

// A tick label is a multiple of a round step (1, 2, 2.5 or 5 × 10^n), the same step for all.
void expect_round_linear_ticks(const std::vector<double>& values) {
  ASSERT_GE(values.size(), 2u);
  const double step = values[1] - values[0];
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6e", step);
  const double mantissa = std::atof(std::string(buf).substr(0, std::string(buf).find('e')).c_str());
  EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-4 || std::fabs(mantissa - 2) < 1e-4 ||
              std::fabs(mantissa - 2.5) < 1e-4 || std::fabs(mantissa - 5) < 1e-4)
      << "step " << step;
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_NEAR(values[i] / step, std::round(values[i] / step), 1e-4) << values[i];
    if (i > 0) {
      EXPECT_NEAR(values[i] - values[i - 1], step, 1e-6) << values[i];
    }
  }
}

// The window's layer 1, head 2 with token 10 focused: the exported arcs draw that query's 5
// strongest keys from the same threshold the window states, under the window's own title; the
// exported heatmap carries the same title; `render` draws the same arcs and the same top-k lines.
TEST_F(Review, ParityTheExportedFigureIsWhatTheWindowShows) {
  const nlohmann::json trace = core_trace();
  const auto& w = trace["attention"][1][2];
  // A query late in the causal sentence: it sees more keys than k.
  const int n = static_cast<int>(w.size()), focus = 10;
  std::vector<double> row;
  for (const auto& v : w[focus]) row.push_back(v.get<double>());
  double threshold = 0, vmax = 0;
  for (const auto& r : w)
    for (const auto& v : r) vmax = std::max(vmax, v.get<double>());
  std::set<int> expected;  // the top-5 keys, as strong as an arc is drawn for (≥ 0.5% of max)
  for (int j : top_k_keys(row, 5, &threshold))
    if (row[j] / vmax >= 0.005) expected.insert(j);
  int seen = 0;  // keys the query gives weight to: more than k, or top-k would change nothing
  for (double v : row) seen += v / vmax >= 0.005;
  ASSERT_GT(seen, 5) << "the query must attend to more keys than k";

  const nlohmann::json session = {{"model", kGpt2},
                                  {"texts", {{{"text", kText}, {"selected_token", focus}}}},
                                  {"show_second", false},
                                  {"view", {{"layer", 1}, {"head", 2}}}};
  nlohmann::json layout, heat_layout;
  const std::string arcs_svg = dir + "/arcs.svg", heat_svg = dir + "/heat.svg";
  ASSERT_EQ(
      run_session(session, "--export-view " + shell_quote(arcs_svg) + " --export-view-as arcs",
                  layout, "arcs"),
      0)
      << slurp(dir + "/arcs.err");
  ASSERT_EQ(run_session(session, "--export-view " + shell_quote(heat_svg), heat_layout, "heat"), 0)
      << slurp(dir + "/heat.err");
  const nlohmann::json* hm = find_view(layout, "heatmap");
  const nlohmann::json* arcs = find_view(layout, "arcs");
  ASSERT_NE(hm, nullptr);
  ASSERT_NE(arcs, nullptr);
  const std::string title = (*hm)["title"];
  EXPECT_EQ(title, "layer 1" + kDot + "head 2");
  EXPECT_EQ((*arcs)["query"], focus);
  EXPECT_EQ((*arcs)["top_k"], 5);
  EXPECT_NEAR((*arcs)["threshold"].get<double>(), threshold, 1e-6);

  // The exported SVGs: the window's title, the window's header, one curve per top-k key.
  const std::string arcs_doc = slurp(arcs_svg), heat_doc = slurp(heat_svg);
  EXPECT_NE(arcs_doc.find(kDot + title + "</text>"), std::string::npos) << "title " << title;
  EXPECT_NE(heat_doc.find(kDot + title + "</text>"), std::string::npos) << "title " << title;
  char header[96];
  std::snprintf(header, sizeof header, "its 5 strongest keys (weight \xE2\x89\xA5 %.3f)",
                threshold);
  EXPECT_NE(arcs_doc.find(header), std::string::npos) << header;
  const int curves = static_cast<int>(expected.size());
  int drawn_curves = 0;  // the SVG's cubic paths: the arcs (and loops) the figure drew
  std::istringstream svg_lines(arcs_doc);
  for (std::string line; std::getline(svg_lines, line);)
    drawn_curves += line.rfind("<path d=\"M", 0) == 0 && line.find(" C") != std::string::npos;
  EXPECT_EQ(drawn_curves, curves) << "curves in the exported arcs";

  // `render` with the window's choice: the same arcs, named in its layout, and the same title.
  const std::string model = "--model " + shell_quote(kGpt2) + " --text " + shell_quote(kText);
  const std::string fig = dir + "/fig.json";
  ASSERT_EQ(run_app("render --view arcs --layer 1 --head 2 --focus 10 " + model + " -o " +
                    shell_quote(dir + "/r.svg") + " --layout " + shell_quote(fig)),
            0);
  const nlohmann::json f = read_json(fig);
  EXPECT_EQ(f["shown_title"], title);
  EXPECT_EQ(f["layer"], 1);
  EXPECT_EQ(f["head"], 2);
  EXPECT_EQ(f["arcs"]["top_k"], 5);
  EXPECT_EQ(f["arcs"]["query"], focus);
  EXPECT_NEAR(f["arcs"]["threshold"].get<double>(), threshold, 1e-6);
  std::set<int> drawn;
  for (const auto& a : f["arcs"]["drawn"]) {
    EXPECT_EQ(a["from"], focus);
    drawn.insert(a["to"].get<int>());
  }
  EXPECT_EQ(drawn, expected);
  // --top-k 3: three arcs; the lines figure keeps each query's top 3 keys.
  ASSERT_EQ(run_app("render --view lines --top-k 3 --layer 1 --head 2 " + model + " -o " +
                    shell_quote(dir + "/l.svg") + " --layout " + shell_quote(fig)),
            0);
  const nlohmann::json lines = read_json(fig)["lines"];
  EXPECT_EQ(lines["top_k"], 3);
  std::set<std::pair<int, int>> want_lines, got_lines;
  for (int i = 0; i < n; ++i) {
    std::vector<double> r;
    for (const auto& v : w[i]) r.push_back(v.get<double>());
    double t = 0;
    for (int j : top_k_keys(r, 3, &t))
      if (r[j] / vmax >= 0.01) want_lines.insert({i, j});
  }
  for (const auto& l : lines["drawn"])
    got_lines.insert({l["query"].get<int>(), l["key"].get<int>()});
  EXPECT_EQ(got_lines, want_lines);
}

// An aggregate with the first token hidden and log colours: the export says and draws the same.
TEST_F(Review, ParityAnAggregateWithSinksAndLogColoursExportsTheSame) {
  const nlohmann::json session = {
      {"model", kGpt2},
      {"texts", {{{"text", kText}}}},
      {"show_second", false},
      {"view", {{"layer", 0}, {"aggregate", "mean"}, {"hide_first", true}}},
      {"display", {{"log_scale", true}, {"log_floor", 0.01}}}};
  nlohmann::json layout;
  const std::string svg = dir + "/agg.svg";
  ASSERT_EQ(run_session(session, "--export-view " + shell_quote(svg), layout, "agg"), 0)
      << slurp(dir + "/agg.err");
  const nlohmann::json* hm = find_view(layout, "heatmap");
  ASSERT_NE(hm, nullptr);
  const std::string title = (*hm)["title"];
  EXPECT_EQ(title.rfind("layer 0" + kDot + "mean of 4 heads", 0), 0u) << title;
  EXPECT_NE(title.find("first token hidden"), std::string::npos) << title;
  EXPECT_NE(title.find("log colours"), std::string::npos) << title;
  EXPECT_NE(slurp(svg).find(kDot + title + "</text>"), std::string::npos) << title;
}

// Layer 0, head 0 is called so, in the window's title, sliders' layout and model view.
TEST_F(Review, IndicesLayerZeroHeadZeroIsCalledSo) {
  nlohmann::json layout;
  ASSERT_EQ(run_session({{"model", kGpt2},
                         {"texts", {{{"text", kText}}}},
                         {"show_second", false},
                         {"view", {{"layer", 0}, {"head", 0}}}},
                        "", layout),
            0);
  const nlohmann::json* hm = find_view(layout, "heatmap");
  ASSERT_NE(hm, nullptr);
  EXPECT_EQ((*hm)["title"], "layer 0" + kDot + "head 0");
}

// The window's heatmap colorbar and the figures' (linear and log) tick at round weights, each
// where its weight falls on the bar. The lesson model's example peaks at 0.43: evenly spaced
// ticks read 0.11, 0.22, 0.32 (the review's finding); the range comes from the core's trace.
TEST_F(Review, ColorbarTicksSitAtRoundWeights) {
  const std::string text = "she sat on the bank of the river and watched the water";
  const std::string trace_file = dir + "/lesson.json";
  ASSERT_EQ(run_app("export --text " + shell_quote(text) + " -o " + shell_quote(trace_file)), 0);
  const nlohmann::json trace = read_json(trace_file);
  double vmax = 0;
  for (const auto& r : trace["attention"][0][0])
    for (const auto& v : r) vmax = std::max(vmax, v.get<double>());
  ASSERT_GT(std::fabs(vmax / 4 / 0.1 - std::round(vmax / 4 / 0.1)), 0.05)
      << "a quarter of the range is itself round: the test would not tell the ticks apart";
  nlohmann::json layout;
  ASSERT_EQ(run_session({{"model", "lesson"},
                         {"texts", {{{"text", text}}}},
                         {"show_second", false},
                         {"view", {{"layer", 0}, {"head", 0}}}},
                        "--window 800x600", layout),
            0);
  const nlohmann::json* hm = find_view(layout, "heatmap");
  ASSERT_NE(hm, nullptr);
  EXPECT_NEAR((*hm)["vmax"].get<double>(), vmax, 1e-6);
  const auto& bar = (*hm)["colorbar"];
  std::vector<double> values;
  for (const auto& t : (*hm)["colorbar_ticks"]) {
    const double v = std::atof(t["text"].get<std::string>().c_str());
    values.push_back(v);
    EXPECT_LE(v, vmax + 1e-9);
    const double y = bar["y"].get<double>() + bar["h"].get<double>() * (1 - v / vmax);
    EXPECT_NEAR(t["tick_y"].get<double>(), y, 1.5) << t["text"];
  }
  expect_round_linear_ticks(values);

  const std::string fig = dir + "/fig.json";
  ASSERT_EQ(run_app("render --view heatmap --text " + shell_quote(text) + " -o " +
                    shell_quote(dir + "/h.svg") + " --layout " + shell_quote(fig)),
            0);
  values.clear();
  const nlohmann::json cb = read_json(fig)["colorbar"];
  for (const auto& t : cb["ticks"]) {
    const double v = std::atof(t["label"].get<std::string>().c_str());
    values.push_back(v);
    const double y = cb["y"].get<double>() + cb["h"].get<double>() * (1 - v / vmax);
    EXPECT_NEAR(t["y"].get<double>(), y, 0.5) << t["label"];
  }
  expect_round_linear_ticks(values);
  // Log colours: ticks at 1, 2 or 5 × 10^n between the floor and the largest weight.
  ASSERT_EQ(
      run_app("render --view heatmap --log-scale --log-floor 0.001 --text " + shell_quote(text) +
              " -o " + shell_quote(dir + "/g.svg") + " --layout " + shell_quote(fig)),
      0);
  const nlohmann::json lb = read_json(fig)["colorbar"];
  ASSERT_GE(lb["ticks"].size(), 2u);
  for (const auto& t : lb["ticks"]) {
    const double v = std::atof(t["label"].get<std::string>().c_str());
    EXPECT_GE(v, 0.001 - 1e-12);
    EXPECT_LE(v, vmax + 1e-9);
    const double m = v / std::pow(10.0, std::floor(std::log10(v) + 1e-9));
    EXPECT_TRUE(std::fabs(m - 1) < 1e-6 || std::fabs(m - 2) < 1e-6 || std::fabs(m - 5) < 1e-6)
        << t["label"];
  }
}

// At 1600×1000 and 800×600: the grid spans the pane, the summaries under the thumbnails are
// named whole, the enlarged thumbnail of a bottom-row head has token labels on both axes, and its
// popup stays off the status bar.
TEST_F(Review, ModelViewGridFillsThePaneWithReadableNamesAndAxes) {
  const nlohmann::json trace = core_trace();
  std::vector<std::string> tokens;
  for (const auto& t : trace["tokens"]) tokens.push_back(t["text"]);
  const nlohmann::json session = {{"model", kGpt2},
                                  {"texts", {{{"text", kText}}}},
                                  {"show_second", false},
                                  {"view", {{"panel", "model"}}}};
  for (const std::string window : {"1600x1000", "800x600"}) {
    SCOPED_TRACE(window);
    nlohmann::json layout;
    ASSERT_EQ(run_session(session, "--window " + window, layout, "grid"), 0);
    const nlohmann::json* view = find_view(layout, "model");
    ASSERT_NE(view, nullptr);
    const auto& panel = (*view)["panel"];
    double right = 0, bottom_y = 0, hx = 0, hy = 0;
    int full_lines = 0;
    std::set<std::string> keys;
    for (const auto& k : (*view)["summary_keys"]) keys.insert(k.get<std::string>());
    for (const auto& cell : (*view)["cells"]) {
      right = std::max(right, cell["x"].get<double>() + cell["w"].get<double>());
      if (cell["y"].get<double>() >= bottom_y)  // a cell of the last row: hover it below
        bottom_y = cell["y"], hx = cell["x"].get<double>() + cell["w"].get<double>() / 2,
        hy = cell["y"].get<double>() + cell["h"].get<double>() * 0.9;
      const auto& lines = cell["summary_lines"];
      for (size_t i = 1; i < lines.size(); ++i) {  // "first      0.52": a whole key name
        const std::string line = lines[i];
        EXPECT_EQ(keys.count(line.substr(0, line.find(' '))), 1u) << line;
        ++full_lines;
      }
    }
    EXPECT_GE((right - panel["x"].get<double>()) / panel["w"].get<double>(), 0.9)
        << "the grid spans " << right - panel["x"].get<double>() << " of "
        << panel["w"].get<double>();
    if (window == "1600x1000") {
      EXPECT_GT(full_lines, 0) << "no summary named under a thumbnail";
    }

    nlohmann::json hovered;
    ASSERT_EQ(
        run_session(session,
                    "--window " + window + " --hover " + std::to_string(static_cast<int>(hx)) +
                        "," + std::to_string(static_cast<int>(hy)),
                    hovered, "hover"),
        0);
    const nlohmann::json* hv = find_view(hovered, "model");
    ASSERT_NE(hv, nullptr);
    const auto& big = (*hv)["hovered"];
    ASSERT_FALSE(big.is_null()) << "nothing enlarged";
    const double mx = big["x"], my = big["y"], mw = big["w"], mh = big["h"];
    for (const char* axis : {"row_labels", "col_labels"}) {
      ASSERT_GE(big[axis].size(), 2u) << axis;
      for (const auto& l : big[axis]) {
        const std::string text = l["text"];
        const std::string token = tokens.at(l["index"].get<size_t>());
        // The label is the token (spaces shown as the app shows them), at most cut with "…".
        EXPECT_FALSE(text.empty());
        if (std::string(axis) == "row_labels") {
          EXPECT_LE(l["x"].get<double>() + l["w"].get<double>(), mx + 1) << text;
          EXPECT_GE(l["y"].get<double>() + l["h"].get<double>() / 2, my - 1) << text;
          EXPECT_LE(l["y"].get<double>() + l["h"].get<double>() / 2, my + mh + 1) << text;
        } else {
          EXPECT_LE(l["y"].get<double>() + l["h"].get<double>(), my + 1) << text;
          EXPECT_GE(l["x"].get<double>() + l["w"].get<double>() / 2, mx - 1) << text;
          EXPECT_LE(l["x"].get<double>() + l["w"].get<double>() / 2, mx + mw + 1) << text;
        }
      }
    }
    const auto& box = big["popup"];
    const auto& bar = hovered["status_bar"];
    ASSERT_TRUE(bar.is_object()) << "no status bar in the layout";
    const double pb = box["y"].get<double>() + box["h"].get<double>();
    EXPECT_LE(pb, bar["y"].get<double>() + 0.5)
        << "the popup (bottom " << pb << ") covers the status bar (top " << bar["y"] << ")";
    EXPECT_GE(box["y"].get<double>(), 0.0);
  }
}

// A long error (a session in a folder with a long name) is shown whole inside the window at
// 800×600, and stays when a notice follows (a dropped trace), with a × to dismiss it.
TEST_F(Review, StatusBarShowsALongMessageWholeAndKeepsTheError) {
  const std::string folder = dir + "/" + std::string(90, 'f') + "_a_folder_with_a_long_name";
  std::filesystem::create_directories(folder);
  const std::string bad = folder + "/broken.attnscope", good = folder + "/trace.json";
  { std::ofstream(bad) << R"({"format": "attnscope-session/1", "view": {"layer": "x"}})"; }
  ASSERT_EQ(run_app("export --model " + shell_quote(kGpt2) + " --text " + shell_quote(kText) +
                    " -o " + shell_quote(good)),
            0);
  const std::string lay = dir + "/s.json", err = dir + "/s.err";
  EXPECT_EQ(run_app("--session " + shell_quote(bad) + " --drop " + shell_quote(good) +
                        " --window 800x600 --theme light --screenshot " +
                        shell_quote(dir + "/s.png") + " --layout " + shell_quote(lay),
                    err),
            1);
  // The error as the app printed it (stderr: "attnscope: MESSAGE", the line naming the file).
  std::string message;
  std::istringstream err_lines(slurp(err));
  for (std::string line; std::getline(err_lines, line);)
    if (line.rfind("attnscope: ", 0) == 0 && line.find(bad) != std::string::npos)
      message = line.substr(11);
  ASSERT_FALSE(message.empty()) << slurp(err);
  const nlohmann::json layout = read_json(lay);
  const test::Image shot = test::read_png(dir + "/s.png");
  const nlohmann::json& bar = layout["status_bar"];
  ASSERT_TRUE(bar.is_object()) << "no status bar in the layout";
  const double width = layout["width"], height = layout["height"];
  const std::string notice = layout["message"];  // the drop's notice came after the error
  EXPECT_NE(notice.find(good), std::string::npos) << notice;
  bool error_shown = false, notice_shown = false;
  for (const auto& item : bar["items"]) {
    const double x = item["x"], y = item["y"], w = item["w"], h = item["h"];
    EXPECT_GE(x, 0.0) << item["kind"];
    EXPECT_LE(x + w, width + 0.5) << item["kind"] << " runs past the window's edge";
    EXPECT_GE(y, 0.0) << item["kind"];
    EXPECT_LE(y + h, height + 0.5) << item["kind"];
    if (item["kind"] == "error") {
      error_shown = true;
      EXPECT_EQ(item["text"], message);
      const int rows = item["rows"];
      EXPECT_GT(rows, 1) << "a message wider than the window wraps";
      // Each of its lines is inked in the light theme's error red (190, 0, 0) in the
      // screenshot: drawn on top, not under a panel.
      for (int r = 0; r < rows; ++r) {
        int red = 0;
        for (int py = static_cast<int>(y + h * r / rows); py < y + h * (r + 1) / rows; ++py)
          for (int px = static_cast<int>(x); px < x + w && px < shot.width; ++px) {
            const auto c = shot.at(px, py);
            red += c[0] > 120 && c[1] < 90 && c[2] < 90;
          }
        EXPECT_GT(red, 30) << "line " << r << " of the error is not visible";
      }
    }
    if (item["kind"] == "notice") notice_shown = item["text"] == notice;
  }
  EXPECT_TRUE(error_shown) << "the error went away when the notice came";
  EXPECT_TRUE(notice_shown);
  ASSERT_TRUE(bar["dismiss"].is_object()) << "no × to dismiss the error";
  EXPECT_LE(bar["dismiss"]["x"].get<double>() + bar["dismiss"]["w"].get<double>(), width + 0.5);
  EXPECT_GE(bar["y"].get<double>(), 0.0);
  EXPECT_NEAR(bar["y"].get<double>() + bar["h"].get<double>(), height, 0.5);
}

}  // namespace
}  // namespace attnscope
