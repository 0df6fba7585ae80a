// Issue 12's views, run for real under Xvfb and checked by their pixels: the model view's
// thumbnails carry the colormap colour of each head's weights (max-pooled in a long trace, so a
// single hot cell stays visible), the head overlay draws each head in its palette colour, hiding
// the first token renormalises the rows that are drawn, rollout as drawn matches an independent
// double-precision reference, and several selected queries tint the sentence by their mean row.
// The app is driven by a session file (the same keys a user's saved session carries).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "app/ui/head_palette.h"
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

const std::string kGpt2 = ATTNSCOPE_FIXTURES "/gpt2-tiny-f32";
const std::string kText = "the cat sat on the mat and the dog sat on the log";

struct AppRun {
  nlohmann::json layout;
  test::Image img;
  std::string dir;
};

// Writes `session` to a file, runs the app on it headless, reads the screenshot and the layout.
AppRun run_session(nlohmann::json session, const std::string& extra = "",
                   const std::string& keep_as = "") {
  AppRun r;
  r.dir = test::temp_dir();
  session["format"] = "attnscope-session/1";
  { std::ofstream(r.dir + "/s.attnscope") << session.dump(); }
  const std::string png = r.dir + "/shot.png", layout = r.dir + "/layout.json";
  const int rc = run_app("--session " + shell_quote(r.dir + "/s.attnscope") + " --screenshot " +
                         shell_quote(png) + " --layout " + shell_quote(layout) + " " + extra);
  EXPECT_EQ(rc, 0);
  r.layout = read_json(layout);
  r.img = read_png(png);
  if (!keep_as.empty())  // for a person to look at
    std::filesystem::copy_file(png, std::filesystem::temp_directory_path() / keep_as,
                               std::filesystem::copy_options::overwrite_existing);
  return r;
}

const nlohmann::json& find_view(const nlohmann::json& layout, const std::string& name) {
  for (const auto& v : layout["views"])
    if (v["view"] == name && v.value("slot", 0) == 0) return v;
  static const nlohmann::json none;
  ADD_FAILURE() << "no '" << name << "' view in the layout";
  return none;
}

AttentionTrace core_trace(const std::string& model, const std::string& text) {
  auto backend = make_cpu_backend();
  return open_model(model)->run(text, *backend);
}

double pixel_error(const test::Image& img, double x, double y, const std::array<double, 3>& want) {
  auto got = img.at(static_cast<int>(x), static_cast<int>(y));
  double err = 0;
  for (int k = 0; k < 3; ++k) err = std::max(err, std::fabs(got[k] - want[k]));
  return err;
}

using MatrixD = Eigen::MatrixXd;

MatrixD to_double(const Matrix& m) {
  return m.cast<double>();
}

// Every cell of a heatmap view drawn over [vmin, vmax] linearly has the colormap colour of `want`.
void expect_heatmap_pixels(const nlohmann::json& view, const test::Image& img,
                           const MatrixD& want) {
  const double x0 = view["x0"], y0 = view["y0"], cw = view["cell_w"], ch = view["cell_h"];
  const double vmin = view["vmin"], vmax = view["vmax"];
  const bool numbers = view["numbers"];
  int bad = 0;
  for (int i = 0; i < want.rows(); ++i)
    for (int j = 0; j < want.cols(); ++j) {
      const double x = x0 + (j + 0.5) * cw, y = y0 + (i + (numbers ? 0.12 : 0.5)) * ch;
      const auto expected = colormap_rgb(view["colormap"], (want(i, j) - vmin) / (vmax - vmin));
      if (pixel_error(img, x, y, expected) > 4.0 && ++bad <= 5)
        ADD_FAILURE() << "cell (" << i << ", " << j << ") weight " << want(i, j);
    }
}

TEST(ModelView, ThumbnailsShowEachHeadsWeights) {
  AppRun r = run_session({{"model", kGpt2},
                          {"texts", {{{"text", kText}}}},
                          {"show_second", false},
                          {"view", {{"panel", "model"}, {"layer", 1}, {"head", 2}}}},
                         "", "attnscope_model_view.png");
  const auto& view = find_view(r.layout, "model");
  const AttentionTrace core = core_trace(kGpt2, kText);
  const int n = static_cast<int>(core.tokens.size());
  ASSERT_EQ(view["layers"], core.layers());
  ASSERT_EQ(view["heads"], core.heads());
  ASSERT_EQ(view["texel_rows"], n) << "a short trace is not pooled";
  ASSERT_EQ(view["cells"].size(), static_cast<size_t>(core.layers() * core.heads()));
  int checked = 0, bad = 0;
  for (const auto& cell : view["cells"]) {
    const int l = cell["layer"], h = cell["head"];
    const Matrix& w = core.attention[l][h];
    const double x = cell["x"], y = cell["y"], side = cell["w"];
    ASSERT_GE(side / n, 3.0) << "texels too small to sample";
    EXPECT_NEAR(cell["vmax"].get<double>(), w.maxCoeff(), 1e-6);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j, ++checked) {
        const auto want = colormap_rgb("viridis", w(i, j) / w.maxCoeff());
        if (pixel_error(r.img, x + (j + 0.5) * side / n, y + (i + 0.5) * side / n, want) > 4.0 &&
            ++bad <= 5)
          ADD_FAILURE() << "layer " << l << " head " << h << " cell (" << i << ", " << j << ")";
      }
  }
  EXPECT_EQ(checked, core.layers() * core.heads() * n * n);
  // The summaries under the thumbnails, against direct sums over the core's weights.
  const auto& keys = view["summary_keys"];
  const auto key_index = [&](const std::string& name) {
    return static_cast<int>(std::find(keys.begin(), keys.end(), name) - keys.begin());
  };
  const int first = key_index("first"), previous = key_index("previous");
  ASSERT_LT(first, static_cast<int>(keys.size()));
  ASSERT_LT(previous, static_cast<int>(keys.size()));
  for (int l = 0; l < core.layers(); ++l)
    for (int h = 0; h < core.heads(); ++h) {
      const Matrix& w = core.attention[l][h];
      double first_mass = 0, prev = 0;
      for (int i = 0; i < n; ++i) first_mass += w(i, 0) / n;
      for (int i = 1; i < n; ++i) prev += w(i, i - 1) / (n - 1);
      const size_t base = (static_cast<size_t>(l) * core.heads() + h) * keys.size();
      EXPECT_NEAR(view["summaries"][base + first].get<double>(), first_mass, 1e-4);
      EXPECT_NEAR(view["summaries"][base + previous].get<double>(), prev, 1e-4);
    }
  // The focused head (layer 1, head 2 in the session) is outlined: the pixel just left of its
  // thumbnail differs from the same pixel of an unfocused one.
  EXPECT_EQ(view["focus_layer"], 1);
  EXPECT_EQ(view["focus_head"], 2);
  double fx = 0, fy = 0, ox = 0, oy = 0;
  for (const auto& cell : view["cells"]) {
    if (cell["layer"] == 1 && cell["head"] == 2) fx = cell["x"], fy = cell["y"];
    if (cell["layer"] == 0 && cell["head"] == 2) ox = cell["x"], oy = cell["y"];
  }
  const double half = view["cells"][0]["h"].get<double>() / 2;
  EXPECT_NE(r.img.at(static_cast<int>(fx) - 2, static_cast<int>(fy + half)),
            r.img.at(static_cast<int>(ox) - 2, static_cast<int>(oy + half)));
}

// Hovering a thumbnail enlarges it: the tooltip's map carries the same head's colours, larger;
// the arrow keys move the outlined focus (layer with ←/→, head with ↑/↓).
TEST(ModelView, HoverEnlargesAndKeysMoveTheFocus) {
  const nlohmann::json session = {{"model", kGpt2},
                                  {"texts", {{{"text", kText}}}},
                                  {"show_second", false},
                                  {"view", {{"panel", "model"}}}};
  AppRun first = run_session(session, "--keys right,down");
  const auto& moved = find_view(first.layout, "model");
  EXPECT_EQ(moved["focus_layer"], 1);
  EXPECT_EQ(moved["focus_head"], 1);
  EXPECT_TRUE(moved["hovered"].is_null());
  double cx = 0, cy = 0;
  for (const auto& cell : moved["cells"])
    if (cell["layer"] == 1 && cell["head"] == 2)
      cx = cell["x"].get<double>() + cell["w"].get<double>() / 2,
      cy = cell["y"].get<double>() + cell["h"].get<double>() / 2;
  AppRun hovered = run_session(session,
                               "--hover " + std::to_string(static_cast<int>(cx)) + "," +
                                   std::to_string(static_cast<int>(cy)),
                               "attnscope_model_view_hover.png");
  const auto& big = find_view(hovered.layout, "model")["hovered"];
  ASSERT_FALSE(big.is_null()) << "no enlarged thumbnail";
  EXPECT_EQ(big["layer"], 1);
  EXPECT_EQ(big["head"], 2);
  const AttentionTrace core = core_trace(kGpt2, kText);  // kept: w refers into it
  const Matrix& w = core.attention[1][2];
  const int n = static_cast<int>(w.rows());
  const double x = big["x"], y = big["y"], side = big["w"];
  EXPECT_GT(side, moved["cells"][0]["w"].get<double>() * 1.5) << "not enlarged";
  int bad = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (pixel_error(hovered.img, x + (j + 0.5) * side / n, y + (i + 0.5) * side / n,
                      colormap_rgb("viridis", w(i, j) / w.maxCoeff())) > 4.0 &&
          ++bad <= 5)
        ADD_FAILURE() << "enlarged cell (" << i << ", " << j << ")";
}

// A session's sort and filter (head summary keys) order each layer's thumbnails by that summary,
// largest first, and dim the heads below the threshold.
TEST(ModelView, SortAndFilterComeFromTheSession) {
  AppRun r = run_session({{"model", kGpt2},
                          {"texts", {{{"text", kText}}}},
                          {"show_second", false},
                          {"view",
                           {{"panel", "model"},
                            {"model_sort", "previous"},
                            {"model_filter", "first"},
                            {"model_filter_min", 0.2}}}});
  const auto& view = find_view(r.layout, "model");
  EXPECT_EQ(view["sort"], "previous");
  EXPECT_EQ(view["filter"], "first");
  const auto& keys = view["summary_keys"];
  const auto key_index = [&](const std::string& name) {
    return static_cast<int>(std::find(keys.begin(), keys.end(), name) - keys.begin());
  };
  const int previous = key_index("previous"), first = key_index("first");
  ASSERT_LT(previous, static_cast<int>(keys.size()));
  ASSERT_LT(first, static_cast<int>(keys.size()));
  const int heads = view["heads"];
  const auto summary = [&](int l, int h, int k) {
    return view["summaries"][(static_cast<size_t>(l) * heads + h) * keys.size() + k].get<double>();
  };
  int bright = 0, dim = 0;
  for (int l = 0; l < view["layers"].get<int>(); ++l) {
    std::vector<std::pair<double, int>> by_x;  // (x, head) of this layer's cells
    for (const auto& cell : view["cells"])
      if (cell["layer"] == l) by_x.emplace_back(cell["x"].get<double>(), cell["head"].get<int>());
    std::sort(by_x.begin(), by_x.end());
    for (size_t i = 1; i < by_x.size(); ++i)
      EXPECT_GE(summary(l, by_x[i - 1].second, previous), summary(l, by_x[i].second, previous))
          << "layer " << l << ": head " << by_x[i - 1].second << " before head " << by_x[i].second;
  }
  for (const auto& cell : view["cells"]) {
    const bool passes = summary(cell["layer"], cell["head"], first) >= 0.2;
    EXPECT_EQ(cell["bright"].get<bool>(), passes);
    (passes ? bright : dim)++;
  }
  EXPECT_GT(bright, 0);
  EXPECT_GT(dim, 0) << "the threshold should split this model's heads";
}

// A stored trace of 150 tokens: every thumbnail is max-pooled to 64 texels a side, and the one hot
// weight of head 2 (0.9 at query 100, key 37) is the brightest texel of its block.
TEST(ModelView, MaxPoolingKeepsASingleHotCellVisible) {
  const int n = 150;
  nlohmann::json tokens = nlohmann::json::array();
  std::string text;
  for (int i = 0; i < n; ++i) {
    std::string t = "t";
    t += std::to_string(i);  // not "t" + …: GCC 12 gives a false -Wrestrict
    if (i) text += " ";
    tokens.push_back({{"id", i},
                      {"text", t},
                      {"start", static_cast<int>(text.size())},
                      {"end", static_cast<int>(text.size() + t.size())},
                      {"special", false}});
    text += t;
  }
  nlohmann::json heads = nlohmann::json::array();
  for (int h = 0; h < 2; ++h) {
    nlohmann::json rows = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
      std::vector<double> row(n, 0.0);
      for (int j = 0; j <= i; ++j) row[j] = 1.0 / (i + 1);  // causal and uniform
      if (h == 1 && i == 100) {  // 0.9 on key 37, the other 100 keys share 0.1
        for (int j = 0; j <= i; ++j) row[j] = 0.1 / i;
        row[37] = 0.9;
      }
      rows.push_back(row);
    }
    heads.push_back(rows);
  }
  nlohmann::json trace = {
      {"format", "attnscope-trace/1"},
      {"model", {{"name", "pooled"}, {"kind", "llama"}, {"layers", 1}, {"heads", 2}}},
      {"backend", "cpu"},
      {"text", text},
      {"tokens", tokens},
      {"attention", {heads}}};
  const std::string dir = test::temp_dir();
  std::ofstream(dir + "/t.json") << trace.dump();
  std::ofstream(dir + "/s.attnscope") << nlohmann::json({{"format", "attnscope-session/1"},
                                                         {"model", "trace:" + dir + "/t.json"},
                                                         {"view", {{"panel", "model"}}}})
                                             .dump();
  ASSERT_EQ(run_app("--session " + shell_quote(dir + "/s.attnscope") + " --screenshot " +
                    shell_quote(dir + "/p.png") + " --layout " + shell_quote(dir + "/p.json")),
            0);
  const auto layout = read_json(dir + "/p.json");
  const auto img = read_png(dir + "/p.png");
  const auto& view = find_view(layout, "model");
  ASSERT_EQ(view["texel_rows"], 64);
  ASSERT_EQ(view["texel_cols"], 64);
  // The block of texel o when n cells shrink to 64: [floor(o·n/64), floor((o+1)·n/64)).
  const auto block_begin = [&](int o) { return o * n / 64; };
  const auto texel_of = [&](int index) {
    int o = 0;
    while (block_begin(o + 1) <= index) ++o;
    return o;
  };
  int checked = 0;
  for (const auto& cell : view["cells"]) {
    const int h = cell["head"];
    const double x = cell["x"], y = cell["y"], side = cell["w"];
    const auto& rows = heads[h];
    double vmax = 0;
    for (const auto& row : rows)
      for (double v : row) vmax = std::max(vmax, v);
    int bad = 0;
    for (int oi = 0; oi < 64; ++oi)
      for (int oj = 0; oj < 64; ++oj) {
        double block_max = 0;
        for (int i = block_begin(oi); i < block_begin(oi + 1); ++i)
          for (int j = block_begin(oj); j < block_begin(oj + 1); ++j)
            block_max = std::max(block_max, rows[i][j].get<double>());
        const auto want = colormap_rgb("viridis", block_max / vmax);
        ++checked;
        if (pixel_error(img, x + (oj + 0.5) * side / 64, y + (oi + 0.5) * side / 64, want) > 4.0 &&
            ++bad <= 5)
          ADD_FAILURE() << "head " << h << " texel (" << oi << ", " << oj << ")";
      }
    if (h == 1) {  // the hot weight's texel shows 0.9 of the scale, its neighbours stay dim
      const int ti = texel_of(100), tj = texel_of(37);
      EXPECT_LE(pixel_error(img, x + (tj + 0.5) * side / 64, y + (ti + 0.5) * side / 64,
                            colormap_rgb("viridis", 0.9)),
                4.0)
          << "the hot cell is lost in the thumbnail";
    }
  }
  EXPECT_EQ(checked, 2 * 64 * 64);
}

TEST(Overlay, EachHeadIsDrawnInItsPaletteColour) {
  AppRun r =
      run_session({{"model", kGpt2},
                   {"texts", {{{"text", kText}, {"selected_token", 6}}}},
                   {"show_second", false},
                   {"view", {{"layer", 1}, {"overlay", true}, {"overlay_heads", {0, 1, 2, 3}}}}},
                  "", "attnscope_overlay.png");
  const auto& view = find_view(r.layout, "columns");
  ASSERT_TRUE(view["overlay"].get<bool>());
  const AttentionTrace core = core_trace(kGpt2, kText);
  const auto& lines = view["overlay_lines"];
  ASSERT_EQ(lines.size(), 4u) << "one strongest line per head for the focused query";
  for (size_t k = 0; k < lines.size(); ++k) {
    const auto& line = lines[k];
    const int h = line["head"], q = line["query"], key = line["key"];
    SCOPED_TRACE("head " + std::to_string(h));
    EXPECT_EQ(q, 6);
    Eigen::Index best = 0;
    core.attention[1][h].row(q).maxCoeff(&best);
    EXPECT_EQ(key, best) << "the line goes to the head's strongest key";
    const Rgb8 c = head_color(h);
    EXPECT_EQ(line["color"], nlohmann::json({c.r, c.g, c.b}));
    // A later head drawn over the same line hides it; check the lines still visible.
    bool covered = false;
    for (size_t later = k + 1; later < lines.size(); ++later) covered |= lines[later]["key"] == key;
    if (covered) continue;
    const double x0 = line["x0"], y0 = line["y0"], x1 = line["x1"], y1 = line["y1"];
    int matches = 0;
    for (double t = 0.1; t <= 0.9; t += 0.02)
      matches += pixel_error(r.img, x0 + (x1 - x0) * t, y0 + (y1 - y0) * t,
                             {double(c.r), double(c.g), double(c.b)}) <= 24.0;
    EXPECT_GE(matches, 5) << "head " << h << "'s line is not in its colour";
  }
}

// The first token hidden as a key: the drawn matrix is the core's with column 0 set to 0 and each
// row divided by what is left (computed here in double), cell by cell and pixel by pixel; the
// title, the screenshot and the exported figure say so.
TEST(Sinks, HidingTheFirstTokenRenormalisesTheRowsAsDrawn) {
  const std::string svg = test::temp_dir() + "/fig.svg";
  AppRun r = run_session({{"model", kGpt2},
                          {"texts", {{{"text", kText}}}},
                          {"show_second", false},
                          {"view", {{"layer", 1}, {"head", 1}, {"hide_first", true}}}},
                         "--export-view " + shell_quote(svg), "attnscope_sinks.png");
  const auto& view = find_view(r.layout, "heatmap");
  const AttentionTrace core = core_trace(kGpt2, kText);
  MatrixD want = to_double(core.attention[1][1]);
  want.col(0).setZero();
  for (int i = 0; i < want.rows(); ++i)
    if (want.row(i).sum() > 0) want.row(i) /= want.row(i).sum();
  ASSERT_EQ(view["rows"], want.rows());
  for (int i = 0; i < want.rows(); ++i)
    for (int j = 0; j < want.cols(); ++j)
      EXPECT_NEAR(view["weights"][i][j].get<double>(), want(i, j), 1e-5) << i << ", " << j;
  EXPECT_EQ(view["hidden_keys"][0], 1);
  EXPECT_NEAR(view["vmax"].get<double>(), want.maxCoeff(), 1e-5);
  expect_heatmap_pixels(view, r.img, want);
  EXPECT_NE(view["title"].get<std::string>().find("first token hidden"), std::string::npos);
  std::ifstream in(svg);
  std::string figure((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(figure.find("first token hidden"), std::string::npos) << "the export's title";
}

// Log colours: each cell's colour sits at log(w / floor) / log(vmax / floor) on the colormap.
TEST(Sinks, LogColoursFollowTheLogOfTheWeight) {
  AppRun r = run_session({{"model", kGpt2},
                          {"texts", {{{"text", "the cat sat on the mat"}}}},
                          {"show_second", false},
                          {"view", {{"layer", 0}, {"head", 0}}},
                          {"display", {{"log_scale", true}, {"log_floor", 0.01}}}});
  const auto& view = find_view(r.layout, "heatmap");
  ASSERT_TRUE(view["log_scale"].get<bool>());
  const MatrixD w = to_double(core_trace(kGpt2, "the cat sat on the mat").attention[0][0]);
  const double floor = 0.01, vmax = w.maxCoeff();
  const double x0 = view["x0"], y0 = view["y0"], cw = view["cell_w"];
  int bad = 0;
  for (int i = 0; i < w.rows(); ++i)
    for (int j = 0; j < w.cols(); ++j) {
      const double t =
          std::clamp(std::log(std::max(w(i, j), floor) / floor) / std::log(vmax / floor), 0.0, 1.0);
      if (pixel_error(r.img, x0 + (j + 0.5) * cw, y0 + (i + 0.12) * cw,
                      colormap_rgb("viridis", t)) > 4.0 &&
          ++bad <= 5)
        ADD_FAILURE() << "cell (" << i << ", " << j << ") weight " << w(i, j);
    }
  EXPECT_NE(view["title"].get<std::string>().find("log colours"), std::string::npos);
}

// Rollout (Abnar & Zuidema 2020) recomputed here in double: Â_l = rownorm(0.5·mean_l + 0.5·I),
// R = Â_1·Â_0; the heatmap shows R as numbers and as colours.
TEST(Rollout, NumbersAsDrawnMatchAnIndependentReference) {
  AppRun r = run_session({{"model", kGpt2},
                          {"texts", {{{"text", kText}}}},
                          {"show_second", false},
                          {"view", {{"layer", 1}, {"aggregate", "rollout"}}}},
                         "", "attnscope_rollout.png");
  const auto& view = find_view(r.layout, "heatmap");
  const AttentionTrace core = core_trace(kGpt2, kText);
  const int n = static_cast<int>(core.tokens.size());
  MatrixD rollout = MatrixD::Identity(n, n);
  for (int l = 0; l <= 1; ++l) {
    MatrixD mean = MatrixD::Zero(n, n);
    for (int h = 0; h < core.heads(); ++h) mean += to_double(core.attention[l][h]);
    mean /= core.heads();
    MatrixD a = 0.5 * mean + 0.5 * MatrixD::Identity(n, n);
    for (int i = 0; i < n; ++i) a.row(i) /= a.row(i).sum();
    rollout = a * rollout;
  }
  EXPECT_EQ(view["aggregate"], "rollout");
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(rollout.row(i).sum(), 1.0, 1e-9);
    for (int j = 0; j < n; ++j)
      EXPECT_NEAR(view["weights"][i][j].get<double>(), rollout(i, j), 1e-5) << i << ", " << j;
  }
  // Causal: nothing flows from a later token.
  EXPECT_NEAR(view["weights"][0][1].get<double>(), 0.0, 1e-12);
  expect_heatmap_pixels(view, r.img, rollout);
  EXPECT_NE(view["title"].get<std::string>().find("rollout of layers 0\xE2\x80\x93"
                                                  "1"),
            std::string::npos)
      << view["title"];
}

// Three selected queries: the views show the mean of their rows; the sentence's other tokens are
// tinted by it, and the selection is listed by the sentence and the heatmap.
TEST(Queries, SeveralSelectedQueriesShowTheMeanOfTheirRows) {
  const std::string text = "the cat sat on the mat";
  AppRun r = run_session(
      {{"model", kGpt2},
       {"texts", {{{"text", text}, {"selected_token", 3}, {"selected_queries", {2, 3, 4}}}}},
       {"show_second", false},
       {"view", {{"layer", 0}, {"head", 1}}}},
      "", "attnscope_queries.png");
  const auto& heatmap = find_view(r.layout, "heatmap");
  const auto& sentence = find_view(r.layout, "sentence");
  EXPECT_EQ(sentence["selected_queries"], nlohmann::json({2, 3, 4}));
  EXPECT_EQ(heatmap["selected_queries"], nlohmann::json({2, 3, 4}));
  const MatrixD w = to_double(core_trace(kGpt2, text).attention[0][1]);
  const Eigen::RowVectorXd mean = (w.row(2) + w.row(3) + w.row(4)) / 3.0;
  const double vmax = heatmap["vmax"];
  EXPECT_NEAR(vmax, w.maxCoeff(), 1e-5);
  for (int j = 0; j < w.cols(); ++j)
    EXPECT_NEAR(heatmap["combined_row"][j].get<double>(), mean(j), 1e-5);
  for (const auto& token : sentence["tokens"]) {
    const int j = token["index"];
    if (j >= 2 && j <= 4) continue;  // outlined: sample the others' background
    const double x = token["x"], y = token["y"], h = token["h"];
    EXPECT_LE(pixel_error(r.img, x + 1.5, y + h / 2, colormap_rgb("viridis", mean(j) / vmax)), 4.0)
        << "token " << j;
  }
  EXPECT_NE(heatmap["title"].get<std::string>().find("mean of 3 queries"), std::string::npos);
}

// A long trace held compactly (each head recomputed from Q and K when asked for): switching the
// head builds the new matrix off the UI thread, and once it is done the heatmap shows exactly
// that head's weights under that head's title.
TEST(LongTrace, SwitchingTheHeadOfACompactTraceShowsTheNewHead) {
  const std::string model = ATTNSCOPE_FIXTURES "/llama-tiny";
  std::string text;
  for (int i = 0; i < 8; ++i) text += (i ? " " : "") + kText;
  const AttentionTrace core = core_trace(model, text);  // held in full (the default budget)
  const int n = static_cast<int>(core.tokens.size());
  ASSERT_GE(n, 100) << "the text is meant to be long enough for the off-thread build";
  const std::string dir = test::temp_dir();
  nlohmann::json session = {{"format", "attnscope-session/1"},
                            {"model", model},
                            {"texts", {{{"text", text}}}},
                            {"show_second", false},
                            {"view", {{"layer", 0}, {"head", 0}}}};
  { std::ofstream(dir + "/s.attnscope") << session.dump(); }
  const std::string png = dir + "/shot.png", layout_path = dir + "/layout.json";
  // A budget of 0 MB: every trace keeps Q and K instead of the weights.
  ASSERT_EQ(
      test::run_app_with_env("ATTNSCOPE_ATTENTION_BUDGET_MB=0",
                             "--session " + shell_quote(dir + "/s.attnscope") + " --screenshot " +
                                 shell_quote(png) + " --layout " + shell_quote(layout_path) +
                                 " --keys right,down,down --window 1600x1000"),
      0);
  const nlohmann::json layout = read_json(layout_path);
  ASSERT_TRUE(layout["traces"][0]["compact"].get<bool>()) << "the trace was expected compact";
  const auto& view = find_view(layout, "heatmap");
  ASSERT_EQ(view["rows"], n);
  EXPECT_NE(view["title"].get<std::string>().find("layer 1 \xC2\xB7 head 2"), std::string::npos)
      << view["title"];
  expect_heatmap_pixels(view, read_png(png), to_double(core.attention[1][2]));
}

}  // namespace
}  // namespace attnscope
