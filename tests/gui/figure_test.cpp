// `attnscope render` and `attnscope view`, checked with tools that share no code with ours:
// rsvg-convert renders the SVG, pdftoppm/pdftotext/pdffonts read the PDF, and every heatmap cell's
// pixel must be the colormap's colour of its weight, computed here from assets/colormaps/*.csv and
// the weights of `attnscope export`. The Figure.* cases need no display (run with DISPLAY unset);
// the View.* and AppMatch.* cases run the window under Xvfb.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gui_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::read_json;
using test::run_app;
using test::shell_quote;

const char* kText = "she sat on the bank of the river";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int sh(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool have(const char* tool) {
  return sh(std::string("command -v ") + tool + " >/dev/null 2>&1") == 0;
}

// attention[layer][head] of `text` from the JSON trace.
std::vector<std::vector<float>> weights_of(const std::string& dir, const std::string& args,
                                           int layer, int head) {
  const std::string path = dir + "/trace.json";
  EXPECT_EQ(run_app("export " + args + " -o " + shell_quote(path), dir + "/export.err"), 0);
  const nlohmann::json doc = read_json(path);
  return doc["attention"][layer][head].get<std::vector<std::vector<float>>>();
}

// Every cell's centre pixel against colormap(w / max w) (the app's default range).
void expect_cells_match(const test::Image& img, const nlohmann::json& cells,
                        const std::vector<std::vector<float>>& w, double scale,
                        const std::string& what) {
  float vmax = 0;
  for (const auto& row : w)
    for (float v : row) vmax = std::max(vmax, v);
  const double x0 = cells["x0"], y0 = cells["y0"], cell = cells["cell"];
  ASSERT_EQ(cells["rows"].get<size_t>(), w.size());
  int checked = 0;
  for (size_t i = 0; i < w.size(); ++i)
    for (size_t j = 0; j < w[i].size(); ++j) {
      // A point inside the cell away from the number printed at its centre.
      const int x = static_cast<int>((x0 + (j + 0.12) * cell) * scale);
      const int y = static_cast<int>((y0 + (i + 0.12) * cell) * scale);
      const auto want = test::colormap_rgb(cells["colormap"], w[i][j] / vmax);
      const auto got = img.at(x, y);
      for (int k = 0; k < 3; ++k)
        ASSERT_NEAR(got[k], want[k], 3.0) << what << " cell " << i << "," << j << " channel " << k;
      ++checked;
    }
  EXPECT_EQ(checked, static_cast<int>(w.size() * w.size()));
}

class Figure : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have("rsvg-convert") || !have("pdftoppm"))
      GTEST_SKIP() << "librsvg2-bin and poppler-utils are needed (scripts/setup.sh)";
    dir = test::temp_dir();
  }
  // Runs render with no display at all.
  int render(const std::string& args) {
    return test::run_app_with_env("env -u DISPLAY -u WAYLAND_DISPLAY",
                                  "render " + args + " 2>" + shell_quote(dir + "/render.err"));
  }
  std::string err() { return slurp(dir + "/render.err"); }
  std::string dir;
};

TEST_F(Figure, SvgIsVectorTextAndCellsHaveTheColormapsColours) {
  const std::string svg = dir + "/h.svg", layout = dir + "/h.json";
  ASSERT_EQ(render("--view heatmap --text " + shell_quote(kText) + " -o " + shell_quote(svg) +
                   " --layout " + shell_quote(layout)),
            0)
      << err();
  const std::string doc = slurp(svg);
  // Text stays text, in the app's font first (then fallbacks for other scripts); cells are
  // rectangles; the colorbar has ticks.
  EXPECT_NE(doc.find("font-family=\"DejaVu Sans, Noto Sans, Noto Sans CJK SC,"), std::string::npos);
  for (const char* word : {">she<", ">bank<", ">river<", ">0.00<"})
    EXPECT_NE(doc.find(word), std::string::npos) << word;
  EXPECT_EQ(doc.find("<image"), std::string::npos);
  size_t rects = 0;
  for (size_t p = doc.find("<rect"); p != std::string::npos; p = doc.find("<rect", p + 1)) ++rects;
  EXPECT_GE(rects, 64u);  // 8 x 8 cells
  const nlohmann::json lay = read_json(layout);
  const std::string png = dir + "/h.png";
  ASSERT_EQ(sh("rsvg-convert " + shell_quote(svg) + " -o " + shell_quote(png)), 0);
  const test::Image img = test::read_png(png);
  EXPECT_EQ(img.width, static_cast<int>(std::ceil(lay["width"].get<double>())));
  expect_cells_match(img, lay["heatmap"], weights_of(dir, "--text " + shell_quote(kText), 0, 0),
                     1.0, "svg");
  // The top of the colorbar is the colour of the largest weight.
  const auto& bar = lay["colorbar"];
  const auto top = img.at(static_cast<int>(bar["x"].get<double>() + 7),
                          static_cast<int>(bar["y"].get<double>() + 1));
  const auto want = test::colormap_rgb("viridis", 1.0);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(top[k], want[k], 6.0);
}

TEST_F(Figure, PdfIsReadByPopplerWithTextAndTheSameCells) {
  const std::string pdf = dir + "/h.pdf", layout = dir + "/h.json";
  const std::string model = "--model " + shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32") +
                            " --text " + shell_quote("The bank of the river flooded");
  ASSERT_EQ(render("--view heatmap --layer 1 --head 2 --colormap magma " + model + " -o " +
                   shell_quote(pdf) + " --layout " + shell_quote(layout)),
            0)
      << err();
  ASSERT_EQ(
      sh("pdftoppm -r 72 -png -singlefile " + shell_quote(pdf) + " " + shell_quote(dir + "/page")),
      0);
  const test::Image img = test::read_png(dir + "/page.png");
  const nlohmann::json lay = read_json(layout);
  expect_cells_match(img, lay["heatmap"], weights_of(dir, model, 1, 2), 1.0, "pdf");
  // The labels are text in the PDF, in an embedded DejaVu font.
  ASSERT_EQ(sh("pdftotext " + shell_quote(pdf) + " " + shell_quote(dir + "/page.txt")), 0);
  const std::string text = slurp(dir + "/page.txt");
  for (const char* word : {"bank", "river", "flooded"})
    EXPECT_NE(text.find(word), std::string::npos) << word << " in " << text;
  ASSERT_EQ(sh("pdffonts " + shell_quote(pdf) + " > " + shell_quote(dir + "/fonts.txt")), 0);
  const std::string fonts = slurp(dir + "/fonts.txt");
  EXPECT_NE(fonts.find("DejaVuSans"), std::string::npos) << fonts;
}

TEST_F(Figure, PngNeedsNoDisplayAndScales) {
  const std::string png = dir + "/h.png", layout = dir + "/h.json";
  ASSERT_EQ(render("--view heatmap --scale 2 --theme dark --text " + shell_quote(kText) + " -o " +
                   shell_quote(png) + " --layout " + shell_quote(layout)),
            0)
      << err();
  const test::Image img = test::read_png(png);
  const nlohmann::json lay = read_json(layout);
  EXPECT_EQ(img.width, static_cast<int>(std::ceil(lay["width"].get<double>() * 2)));
  expect_cells_match(img, lay["heatmap"], weights_of(dir, "--text " + shell_quote(kText), 0, 0),
                     2.0, "png");
}

// render --hide-first: the first key's column is 0 and each row is renormalised over the rest
// (recomputed here from the exported weights), and the title says so.
TEST_F(Figure, HidingTheFirstTokenRenormalisesAndIsStatedInTheTitle) {
  const std::string png = dir + "/s.png", svg = dir + "/s.svg", layout = dir + "/s.json";
  const std::string model = "--model " + shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32") +
                            " --text " + shell_quote("The bank of the river flooded");
  ASSERT_EQ(render("--view heatmap --layer 1 --head 0 --hide-first " + model + " -o " +
                   shell_quote(png) + " --layout " + shell_quote(layout)),
            0)
      << err();
  auto w = weights_of(dir, model, 1, 0);
  for (auto& row : w) {
    row[0] = 0;
    float sum = 0;
    for (float v : row) sum += v;
    for (float& v : row) v = sum > 0 ? v / sum : 0.0f;  // row 0 had only the first key: all 0
  }
  expect_cells_match(test::read_png(png), read_json(layout)["heatmap"], w, 2.0, "hidden sink");
  ASSERT_EQ(render("--view heatmap --layer 1 --hide-first --log-scale --log-floor 0.01 " + model +
                   " -o " + shell_quote(svg)),
            0)
      << err();
  const std::string text = slurp(svg);
  EXPECT_NE(text.find("first token hidden, rows renormalised"), std::string::npos);
  EXPECT_NE(text.find("log colours (floor 0.01)"), std::string::npos);
  EXPECT_EQ(render("--view heatmap --log-floor 2 " + model + " -o " + shell_quote(svg)), 2);
}

TEST_F(Figure, EveryViewRendersInEveryFormat) {
  const std::string model = "--model " + shell_quote(ATTNSCOPE_FIXTURES "/bert-tiny-uncased-f32") +
                            " --text " + shell_quote("the bank [SEP] the river");
  for (const char* view : {"heatmap", "lines", "arcs", "grid", "formula"})
    for (const char* ext : {"svg", "pdf", "png"}) {
      const std::string out = dir + "/" + view + "." + ext;
      ASSERT_EQ(render(std::string("--view ") + view + " " + model + " -o " + shell_quote(out)), 0)
          << view << "." << ext << ": " << err();
      ASSERT_GT(fs::file_size(out), 500u) << out;
    }
  for (const char* view : {"heatmap", "lines", "arcs", "grid", "formula"}) {
    EXPECT_EQ(sh(std::string("rsvg-convert ") + shell_quote(dir + "/" + view + ".svg") + " -o " +
                 shell_quote(dir + "/" + view + "-svg.png")),
              0)
        << view;
    EXPECT_EQ(sh(std::string("pdftoppm -r 50 -png ") + shell_quote(dir + "/" + view + ".pdf") +
                 " " + shell_quote(dir + "/" + view + "-pdf")),
              0)
        << view;
  }
  // Aggregates and a focus token.
  EXPECT_EQ(
      render("--view heatmap --aggregate mean " + model + " -o " + shell_quote(dir + "/m.svg")), 0)
      << err();
  EXPECT_EQ(render("--view arcs --aggregate max --focus 2 " + model + " -o " +
                   shell_quote(dir + "/a.svg")),
            0)
      << err();
}

// --width sets every view's width: the SVG's width and viewBox, the PDF page (points) and the PNG
// (pixels at --scale); the heatmap's cells shrink to fit and stay the colormap's colours; a width
// that leaves no room for the cells is a usage error, not an empty figure.
TEST_F(Figure, WidthSetsTheFigureWidthInEveryFormat) {
  const std::string text = "--text " + shell_quote(kText);
  for (const char* view : {"heatmap", "lines", "arcs", "grid", "formula"}) {
    const std::string svg = dir + "/" + view + ".svg", layout = dir + "/" + view + ".json";
    ASSERT_EQ(render(std::string("--view ") + view + " --width 700 " + text + " -o " +
                     shell_quote(svg) + " --layout " + shell_quote(layout)),
              0)
        << view << ": " << err();
    EXPECT_DOUBLE_EQ(read_json(layout)["width"].get<double>(), 700.0) << view;
    EXPECT_NE(slurp(svg).find("width=\"700\""), std::string::npos) << view;
    ASSERT_EQ(sh("rsvg-convert " + shell_quote(svg) + " -o " + shell_quote(dir + "/r.png")), 0);
    EXPECT_EQ(test::read_png(dir + "/r.png").width, 700) << view;
  }
  const std::string png = dir + "/w.png", pdf = dir + "/w.pdf", layout = dir + "/w.json";
  ASSERT_EQ(render("--view heatmap --width 420 --scale 1 " + text + " -o " + shell_quote(png) +
                   " --layout " + shell_quote(layout)),
            0)
      << err();
  const test::Image img = test::read_png(png);
  EXPECT_EQ(img.width, 420);
  expect_cells_match(img, read_json(layout)["heatmap"], weights_of(dir, text, 0, 0), 1.0,
                     "--width 420");
  ASSERT_EQ(render("--view heatmap --width 420 " + text + " -o " + shell_quote(pdf)), 0) << err();
  ASSERT_EQ(sh("pdfinfo " + shell_quote(pdf) + " > " + shell_quote(dir + "/info.txt")), 0);
  EXPECT_NE(slurp(dir + "/info.txt").find("420 x "), std::string::npos) << slurp(dir + "/info.txt");
  EXPECT_EQ(render("--view heatmap --width 100 " + text + " -o " + shell_quote(dir + "/n.svg")), 2);
  EXPECT_NE(err().find("--width 100 leaves no room"), std::string::npos) << err();
  EXPECT_FALSE(fs::exists(dir + "/n.svg"));
}

TEST_F(Figure, LongTextsEmbedARasterAndStayReadable) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "the river bank and the money bank are not the same ";
  const std::string svg = dir + "/long.svg";
  ASSERT_EQ(render("--view heatmap --text " + shell_quote(text) + " -o " + shell_quote(svg)), 0)
      << err();
  const std::string doc = slurp(svg);
  EXPECT_NE(doc.find("<image"), std::string::npos);
  EXPECT_NE(doc.find("data:image/png;base64,"), std::string::npos);
  EXPECT_LT(doc.size(), 2000000u);
  EXPECT_EQ(sh("rsvg-convert " + shell_quote(svg) + " -o " + shell_quote(dir + "/long.png")), 0);
}

TEST_F(Figure, BadRequestsAreOneLineUsageErrors) {
  EXPECT_EQ(render("--view heatmap --layer 9 -o " + shell_quote(dir + "/x.svg")), 2);
  EXPECT_NE(err().find("--layer 9 is out of range"), std::string::npos) << err();
  EXPECT_EQ(render("--view heatmap -o " + shell_quote(dir + "/x.bmp")), 2);
  EXPECT_NE(err().find(".svg"), std::string::npos) << err();
  EXPECT_EQ(render("--view nope -o " + shell_quote(dir + "/x.svg")), 2);
  EXPECT_EQ(render("--view heatmap --head 0 --aggregate mean -o " + shell_quote(dir + "/x.svg")),
            2);
  EXPECT_EQ(render("--view heatmap -o /no/such/folder/x.pdf"), 1);
  EXPECT_NE(err().find("/no/such/folder/x.pdf"), std::string::npos) << err();
}

// export --format from the command line: the files it writes, and its usage errors.
TEST_F(Figure, ExportFormatsFromTheCommandLine) {
  const std::string t = "--text " + shell_quote(kText);
  const std::string npy = dir + "/att.npy";
  ASSERT_EQ(run_app("export --format npy --layers 0 " + t + " -o " + shell_quote(npy)), 0);
  EXPECT_EQ(slurp(npy).substr(1, 5), "NUMPY");
  const nlohmann::json side = read_json(dir + "/att.tokens.json");
  EXPECT_EQ(side["shape"], nlohmann::json({1, 1, 8, 8}));
  EXPECT_EQ(side["text"], kText);
  const std::string csv = dir + "/att.csv";
  ASSERT_EQ(run_app("export --format csv --layers 0 --heads 0 " + t + " -o " + shell_quote(csv)),
            0);
  EXPECT_EQ(slurp(csv).rfind("\"query \\ key\",\"she\",\"sat\"", 0), 0u) << slurp(csv);
  // Usage errors: npy to stdout, a bad selection, csv of several heads.
  EXPECT_EQ(run_app("export --format npy " + t + " -o -", dir + "/e1"), 2);
  EXPECT_NE(slurp(dir + "/e1").find("-o FILE"), std::string::npos) << slurp(dir + "/e1");
  EXPECT_EQ(run_app("export --layers 3 " + t, dir + "/e2"), 2);
  EXPECT_NE(slurp(dir + "/e2").find("--layers: 3 is out of range"), std::string::npos);
  EXPECT_EQ(
      run_app("export --format csv --model " + shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32") +
                  " " + t + " -o " + shell_quote(dir + "/x.csv"),
              dir + "/e3"),
      2);
  EXPECT_NE(slurp(dir + "/e3").find("one layer and one head"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir + "/x.csv"));
}

// A stored trace (JSON or safetensors) draws every view, the aggregates and the sink options
// exactly as the model's own forward pass does: the same SVG, byte for byte.
TEST_F(Figure, StoredTracesDrawEveryViewAggregateAndSinkAsTheModelDoes) {
  const std::string model = "--model " + shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32") +
                            " --text " + shell_quote("The bank of the river flooded the town");
  const std::string json = dir + "/t.json", st = dir + "/t.safetensors";
  ASSERT_EQ(run_app("export " + model + " -o " + shell_quote(json)), 0);
  ASSERT_EQ(run_app("export --format safetensors " + model + " -o " + shell_quote(st)), 0);
  const char* requests[] = {
      "--view grid",
      "--view grid --hide-first --log-scale",
      "--view heatmap --layer 1 --head 3 --hide-first",
      "--view heatmap --layer 1 --aggregate rollout",
      "--view heatmap --layer 1 --aggregate layers-mean --hide-special --log-scale",
      "--view lines --layer 1 --aggregate max --focus 3",
      "--view arcs --layer 0 --aggregate mean --hide-first",
  };
  int k = 0;
  for (const char* request : requests) {
    const std::string want = dir + "/model" + std::to_string(k) + ".svg";
    ASSERT_EQ(render(std::string(request) + " " + model + " -o " + shell_quote(want)), 0)
        << request << ": " << err();
    for (const std::string& trace : {json, st}) {
      const std::string got = dir + "/trace" + std::to_string(k) + ".svg";
      ASSERT_EQ(render(std::string(request) + " --trace " + shell_quote(trace) + " -o " +
                       shell_quote(got)),
                0)
          << request << " " << trace << ": " << err();
      EXPECT_EQ(slurp(got), slurp(want)) << request << " from " << trace;
    }
    ++k;
  }
}

TEST_F(Figure, StoredTracesRenderAndTheFormulaSaysWhatItNeeds) {
  const std::string trace = dir + "/t.safetensors";
  ASSERT_EQ(run_app("export --format safetensors --text " + shell_quote(kText) + " -o " +
                    shell_quote(trace)),
            0);
  EXPECT_EQ(
      render("--view lines --trace " + shell_quote(trace) + " -o " + shell_quote(dir + "/l.svg")),
      0)
      << err();
  EXPECT_EQ(
      render("--view formula --trace " + shell_quote(trace) + " -o " + shell_quote(dir + "/f.svg")),
      2);
  EXPECT_NE(err().find("per-head steps"), std::string::npos) << err();
}

}  // namespace
}  // namespace attnscope

namespace attnscope {
namespace {

// The heatmap as the window drew it: for each cell the screenshot's pixel near its top-left.
std::vector<std::array<int, 3>> app_cells(const test::Image& shot, const nlohmann::json& hm) {
  std::vector<std::array<int, 3>> out;
  const double x0 = hm["x0"], y0 = hm["y0"], cw = hm["cell_w"], ch = hm["cell_h"];
  for (int i = 0; i < hm["rows"].get<int>(); ++i)
    for (int j = 0; j < hm["cols"].get<int>(); ++j)
      out.push_back(
          shot.at(static_cast<int>(x0 + (j + 0.15) * cw), static_cast<int>(y0 + (i + 0.15) * ch)));
  return out;
}

const nlohmann::json* find_view(const nlohmann::json& layout, const std::string& view, int slot) {
  for (const auto& v : layout["views"])
    if (v["view"] == view && v["slot"] == slot) return &v;
  return nullptr;
}

class View : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::getenv("DISPLAY")) GTEST_SKIP() << "needs a display (run under xvfb-run)";
    dir = test::temp_dir();
  }
  std::string dir;
};

// `view FILE` shows a stored trace without its model; File > Export view… of that window gives a
// figure whose cells have the very colours the window's heatmap has.
TEST_F(View, StoredTraceIsShownAndTheExportedViewMatchesTheWindow) {
  if (!have("rsvg-convert")) GTEST_SKIP() << "librsvg2-bin is needed";
  const std::string trace = dir + "/t.json";
  const std::string model = "--model " + shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32") +
                            " --text " + shell_quote("The bank of the river flooded the town");
  ASSERT_EQ(run_app("export " + model + " -o " + shell_quote(trace)), 0);
  const nlohmann::json doc = read_json(trace);
  const std::string shot = dir + "/view.png", layout = dir + "/layout.json",
                    svg = dir + "/export.svg";
  ASSERT_EQ(run_app("view " + shell_quote(trace) +
                        " --theme light --window 1280x720 --screenshot " + shell_quote(shot) +
                        " --layout " + shell_quote(layout) + " --export-view " + shell_quote(svg),
                    dir + "/view.err"),
            0)
      << slurp(dir + "/view.err");
  const nlohmann::json lay = read_json(layout);
  EXPECT_EQ(lay["model"], "gpt2-tiny-f32");
  const auto& t0 = lay["traces"][0];
  EXPECT_EQ(t0["trace_text"], doc["text"]);
  ASSERT_EQ(t0["tokens"].size(), doc["tokens"].size());
  const nlohmann::json* hm = find_view(lay, "heatmap", 0);
  ASSERT_NE(hm, nullptr);
  // The window shows the stored numbers (layer 0, head 0).
  const auto& w = (*hm)["weights"];
  for (size_t i = 0; i < w.size(); ++i)
    for (size_t j = 0; j < w[i].size(); ++j)
      EXPECT_FLOAT_EQ(w[i][j].get<float>(), doc["attention"][0][0][i][j].get<float>());
  // The exported figure, rendered by librsvg, has the window's colours cell for cell.
  ASSERT_EQ(sh("rsvg-convert " + shell_quote(svg) + " -o " + shell_quote(dir + "/export.png")), 0);
  const test::Image fig = test::read_png(dir + "/export.png");
  const auto window = app_cells(test::read_png(shot), *hm);
  const std::string fig_layout = dir + "/fig.json";
  ASSERT_EQ(run_app("render --view heatmap --trace " + shell_quote(trace) + " -o " +
                    shell_quote(dir + "/same.svg") + " --layout " + shell_quote(fig_layout)),
            0);
  const nlohmann::json cells = read_json(fig_layout)["heatmap"];
  const double x0 = cells["x0"], y0 = cells["y0"], cell = cells["cell"];
  const int n = cells["rows"];
  ASSERT_EQ(static_cast<int>(window.size()), n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const auto got = fig.at(static_cast<int>(x0 + (j + 0.15) * cell),
                              static_cast<int>(y0 + (i + 0.15) * cell));
      for (int k = 0; k < 3; ++k)
        EXPECT_NEAR(got[k], window[i * n + j][k], 3) << "cell " << i << "," << j;
    }
}

// The trace Python wrote from the PyTorch reference (tools/reference/attnscope_trace.py).
TEST_F(View, ThePythonWrittenTraceOpens) {
  const std::string shot = dir + "/py.png", layout = dir + "/py.json";
  ASSERT_EQ(run_app("view " + shell_quote(ATTNSCOPE_TEST_DATA "/python_trace/gpt2-tiny-f32.json") +
                        " --screenshot " + shell_quote(shot) + " --layout " + shell_quote(layout),
                    dir + "/py.err"),
            0)
      << slurp(dir + "/py.err");
  const nlohmann::json lay = read_json(layout);
  EXPECT_EQ(lay["traces"][0]["trace_text"], "The cat sat on the mat.");
  EXPECT_EQ(lay["traces"][0]["tokens"].size(), 7u);
  const nlohmann::json* hm = find_view(lay, "heatmap", 0);
  ASSERT_NE(hm, nullptr);
  EXPECT_EQ((*hm)["rows"], 7);
  EXPECT_GT(test::read_png(shot).width, 0);
}

// Dropping a trace on the window opens it; dropping a hostile one says why and keeps the model.
TEST_F(View, DroppedTracesOpenAndABadOneKeepsTheModel) {
  const std::string good = dir + "/t.safetensors";
  const std::string text = "The bank of the river flooded the town";
  ASSERT_EQ(run_app("export --format safetensors --model " +
                    shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32") + " --text " +
                    shell_quote(text) + " -o " + shell_quote(good)),
            0);
  ASSERT_EQ(run_app("--drop " + shell_quote(good) + " --screenshot " + shell_quote(dir + "/a.png") +
                        " --layout " + shell_quote(dir + "/a.json"),
                    dir + "/a.err"),
            0)
      << slurp(dir + "/a.err");
  const nlohmann::json a = read_json(dir + "/a.json");
  EXPECT_EQ(a["model"], "gpt2-tiny-f32");
  EXPECT_EQ(a["traces"][0]["trace_text"], text);

  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << R"({"format":"attnscope-trace/1","model":{"layers":1,"heads":1},)"
                     << R"("tokens":[{"text":"a"}],"attention":[[[[1,0],[0,1]]]]})";
  EXPECT_EQ(run_app("--drop " + shell_quote(bad) + " --screenshot " + shell_quote(dir + "/b.png") +
                        " --layout " + shell_quote(dir + "/b.json"),
                    dir + "/b.err"),
            1);
  const nlohmann::json b = read_json(dir + "/b.json");
  EXPECT_EQ(b["model"], "lesson");  // what it had
  const std::string why = b["model_error"];
  EXPECT_NE(why.find("bad.json"), std::string::npos) << why;
  EXPECT_NE(why.find("'tokens' has 1"), std::string::npos) << why;
  EXPECT_FALSE(b["traces"][0]["tokens"].empty());  // the lesson model's trace is still shown
}

TEST_F(View, AHostileTraceExitsOneNamingTheKey) {
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad)
      << R"({"format":"attnscope-trace/1","model":{"layers":1,"heads":1},)"
      << R"("tokens":[{"text":"a"},{"text":"b"}],"attention":[[[[1,0],[0.7,0.7]]]]})";
  EXPECT_EQ(run_app("view " + shell_quote(bad) + " --screenshot " + shell_quote(dir + "/x.png"),
                    dir + "/err.txt"),
            1);
  const std::string err = slurp(dir + "/err.txt");
  EXPECT_NE(err.find("bad.json"), std::string::npos) << err;
  EXPECT_NE(err.find("attention[0][0][1]"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir + "/x.png"));
}

}  // namespace
}  // namespace attnscope
