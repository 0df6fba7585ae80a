// `attnscope render` and `attnscope view`, checked with tools that share no code with ours:
// rsvg-convert renders the SVG, pdftoppm/pdftotext/pdffonts read the PDF, and every heatmap cell's
// pixel must be the colormap's colour of its weight, computed here from assets/colormaps/*.csv and
// the weights of `attnscope export`. The Figure.* cases need no display (run with DISPLAY unset);
// the View.* and AppMatch.* cases run the window under Xvfb.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
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

// Issue 22: labels in every script. Each text is a trace of exactly these tokens (plain UTF-8
// "text" fields, written here), so the figures do not depend on any tokenizer.
struct ScriptText {
  const char* name;
  std::vector<std::string> tokens;
};
const std::vector<ScriptText>& script_texts() {
  static const std::vector<ScriptText> all = {
      {"chinese", {"银行", "在", "河边"}},
      {"arabic", {"بنك", "على", "ضفة", "النهر"}},
      {"hindi", {"नदी", "का", "किनारा", "क्षेत्र"}},
      {"russian", {"банк", "реки"}},
      {"emoji", {"🏦", "bank", "🌊"}},
      {"hebrew", {"שפת", "הנהר"}},
      {"greek", {"όχθη", "ποταμού"}},
      {"thai", {"ริม", "แม่น้ำ"}},
  };
  return all;
}

// An attnscope-trace/1 file of `tokens` (one layer, one head, causal uniform weights).
void write_trace(const std::string& path, const std::vector<std::string>& tokens) {
  nlohmann::json toks = nlohmann::json::array();
  std::string text;
  for (const std::string& t : tokens) {
    if (!text.empty()) text += ' ';
    toks.push_back({{"id", -1},
                    {"text", t},
                    {"start", text.size()},
                    {"end", text.size() + t.size()},
                    {"special", false}});
    text += t;
  }
  const size_t n = tokens.size();
  std::vector<std::vector<float>> w(n, std::vector<float>(n, 0.0f));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j) w[i][j] = 1.0f / static_cast<float>(i + 1);
  const nlohmann::json doc = {
      {"format", "attnscope-trace/1"},
      {"model", {{"name", "scripts"}, {"kind", "lesson"}, {"layers", 1}, {"heads", 1}}},
      {"backend", "cpu"},
      {"text", text},
      {"tokens", toks},
      {"attention", {{w}}}};
  std::ofstream(path) << doc.dump();
}

// `s` without white space and bidi controls (poppler wraps right-to-left words in U+202B…U+202C
// and may split a joined word where its glyphs leave a gap).
std::string letters_only(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    const std::string cp = s.substr(i, n);
    const bool bidi =
        cp.size() == 3 && static_cast<unsigned char>(cp[0]) == 0xE2 &&
        static_cast<unsigned char>(cp[1]) == 0x80 &&
        ((static_cast<unsigned char>(cp[2]) >= 0xAA && static_cast<unsigned char>(cp[2]) <= 0xAE) ||
         static_cast<unsigned char>(cp[2]) == 0x8E || static_cast<unsigned char>(cp[2]) == 0x8F);
    if (!std::isspace(c) && !bidi) out += cp;
    i += n;
  }
  return out;
}

// `s` with its code points in reverse order (what a renderer without bidi would give back).
std::string reversed(const std::string& s) {
  std::vector<std::string> cps;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    cps.push_back(s.substr(i, n));
    i += n;
  }
  std::string out;
  for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
  return out;
}

// The ink of heatmap row `row`'s label (left of the cells), as a mask over a window of `cols`
// pixels ending `pad` figure units before the cells, where every row label ends (anchor end).
struct LabelInk {
  int w = 0, h = 0, inked = 0, left = -1, right = -1;  // left/right: inked columns, -1 if none
  std::vector<bool> mask;                              // h rows of w
  bool at(int x, int y) const { return mask[static_cast<size_t>(y) * w + x]; }
};
LabelInk row_label_ink(const test::Image& img, const nlohmann::json& hm, int row, double scale) {
  const double x0 = hm["x0"], y0 = hm["y0"], cell = hm["cell"];
  LabelInk ink;
  const int x_end = static_cast<int>((x0 - 8.0) * scale) + 2;
  const int top = static_cast<int>(std::ceil((y0 + row * cell) * scale));
  ink.w = x_end;
  ink.h = static_cast<int>((cell - 1.0) * scale);
  ink.mask.assign(static_cast<size_t>(ink.w) * ink.h, false);
  const auto bg = img.at(0, top);
  for (int y = 0; y < ink.h; ++y)
    for (int x = 0; x < ink.w; ++x) {
      const auto p = img.at(x, top + y);
      int d = 0;
      for (int k = 0; k < 3; ++k) d = std::max(d, std::abs(p[k] - bg[k]));
      if (d > 96) {
        ink.mask[static_cast<size_t>(y) * ink.w + x] = true;
        ++ink.inked;
        if (ink.left < 0 || x < ink.left) ink.left = x;
        ink.right = std::max(ink.right, x);
      }
    }
  return ink;
}

// Pixels that differ between the rightmost `cols` columns of two labels' masks (right-aligned).
int right_part_mismatch(const LabelInk& a, const LabelInk& b, int cols) {
  int diff = 0;
  for (int y = 0; y < std::min(a.h, b.h); ++y)
    for (int k = 0; k < cols; ++k) diff += a.at(a.w - 1 - k, y) != b.at(b.w - 1 - k, y);
  return diff;
}

TEST_F(Figure, EveryScriptIsTextInThePdfInLogicalOrder) {
  if (!have("pdftotext") || !have("pdffonts")) GTEST_SKIP() << "poppler-utils is needed";
  for (const ScriptText& s : script_texts()) {
    const std::string trace = dir + "/" + s.name + ".json", pdf = dir + "/" + s.name + ".pdf",
                      layout = dir + "/" + s.name + ".layout.json";
    write_trace(trace, s.tokens);
    ASSERT_EQ(render("--view heatmap --trace " + shell_quote(trace) + " -o " + shell_quote(pdf) +
                     " --layout " + shell_quote(layout)),
              0)
        << s.name << ": " << err();
    EXPECT_EQ(read_json(layout).value("missing_glyphs", -1), 0) << s.name;
    ASSERT_EQ(sh("pdftotext " + shell_quote(pdf) + " " + shell_quote(dir + "/page.txt")), 0);
    const std::string text = letters_only(slurp(dir + "/page.txt"));
    for (const std::string& token : s.tokens) {
      // Emoji too: cairo paints them as pictures, under which the figure puts invisible text.
      EXPECT_NE(text.find(token), std::string::npos) << s.name << ": " << token << " in " << text;
      const bool rtl = s.name == std::string("hebrew") || s.name == std::string("arabic");
      if (rtl && reversed(token) != token) {  // not drawn backwards by a renderer without bidi
        EXPECT_EQ(text.find(reversed(token)), std::string::npos) << s.name << ": " << token;
      }
    }
    ASSERT_EQ(sh("pdffonts " + shell_quote(pdf) + " > " + shell_quote(dir + "/fonts.txt")), 0);
    const std::string fonts = slurp(dir + "/fonts.txt");
    EXPECT_NE(fonts.find("DejaVuSans"), std::string::npos) << s.name << ": " << fonts;
    if (s.name == std::string("emoji")) {
      EXPECT_NE(fonts.find("Symbola"), std::string::npos) << fonts;
    }
    if (s.name == std::string("chinese")) {
      EXPECT_NE(fonts.find("NotoSansCJK"), std::string::npos) << fonts;
    }
    if (s.name == std::string("hindi")) {
      EXPECT_NE(fonts.find("NotoSansDevanagari"), std::string::npos) << fonts;
    }
    if (s.name == std::string("thai")) {
      EXPECT_NE(fonts.find("NotoSansThai"), std::string::npos) << fonts;
    }
  }
}

// No tofu: every script's labels find a font (Pango's unknown-glyph count, in the layout file), a
// code point no font has is counted, and "河" draws ink that is not the hex box U+10FFFD gets.
TEST_F(Figure, PngLabelsHaveAGlyphForEveryScript) {
  for (const ScriptText& s : script_texts()) {
    const std::string trace = dir + "/" + s.name + ".json", png = dir + "/" + s.name + ".png",
                      layout = dir + "/" + s.name + ".layout.json";
    write_trace(trace, s.tokens);
    ASSERT_EQ(render("--view heatmap --scale 2 --trace " + shell_quote(trace) + " -o " +
                     shell_quote(png) + " --layout " + shell_quote(layout)),
              0)
        << s.name << ": " << err();
    const nlohmann::json lay = read_json(layout);
    EXPECT_EQ(lay.value("missing_glyphs", -1), 0) << s.name;
    // The builder measured the labels as they are drawn: each row label's ink starts no further
    // left than the 8-unit margin it left (a glyph may overhang its advance by a unit).
    const test::Image img = test::read_png(png);
    for (size_t row = 0; row < s.tokens.size(); ++row) {
      const LabelInk ink = row_label_ink(img, lay["heatmap"], static_cast<int>(row), 2.0);
      EXPECT_GT(ink.inked, 0) << s.name << " row " << row;
      EXPECT_GE(ink.left, 2 * (8 - 1)) << s.name << " row " << row << " is wider than measured";
    }
  }
  auto label = [&](const std::string& name, const std::string& token) {
    const std::string trace = dir + "/" + name + ".json", png = dir + "/" + name + ".png",
                      layout = dir + "/" + name + ".layout.json";
    write_trace(trace, {token, "a"});
    EXPECT_EQ(render("--view heatmap --no-title --scale 2 --trace " + shell_quote(trace) + " -o " +
                     shell_quote(png) + " --layout " + shell_quote(layout)),
              0)
        << err();
    const nlohmann::json lay = read_json(layout);
    return std::make_pair(row_label_ink(test::read_png(png), lay["heatmap"], 0, 2.0),
                          lay.value("missing_glyphs", -1));
  };
  const auto [river, river_missing] = label("river", "河");
  const auto [tofu, tofu_missing] = label("tofu", "\xF4\x8F\xBF\xBD");  // U+10FFFD
  EXPECT_EQ(river_missing, 0);
  EXPECT_GT(tofu_missing, 0);
  ASSERT_GT(river.inked, 20);
  ASSERT_GT(tofu.inked, 20);
  const int cols = std::max(river.right - river.left, tofu.right - tofu.left) + 1;
  EXPECT_GT(right_part_mismatch(river, tofu, std::min({cols, river.w, tofu.w})), river.inked / 3)
      << "河 is drawn like the hex box of a missing glyph";
}

// Shaping and direction in the PNG: Arabic letters join (the word is narrower than its letters
// kept apart by zero-width non-joiners), and a Hebrew word reads right to left (its first letter
// is its right end, where every row label ends).
TEST_F(Figure, ArabicJoinsAndHebrewReadsRightToLeft) {
  const std::string trace = dir + "/t.json", png = dir + "/t.png", layout = dir + "/t.json.lay";
  const std::string zwnj = "\xE2\x80\x8C";
  write_trace(trace, {"بنك", "ب" + zwnj + "ن" + zwnj + "ك", "אב", "א", "ב"});
  ASSERT_EQ(render("--view heatmap --no-title --scale 2 --trace " + shell_quote(trace) + " -o " +
                   shell_quote(png) + " --layout " + shell_quote(layout)),
            0)
      << err();
  const test::Image img = test::read_png(png);
  const nlohmann::json hm = read_json(layout)["heatmap"];
  const LabelInk joined = row_label_ink(img, hm, 0, 2.0), apart = row_label_ink(img, hm, 1, 2.0);
  ASSERT_GT(joined.inked, 0);
  ASSERT_GT(apart.inked, 0);
  EXPECT_LT(joined.right - joined.left, (apart.right - apart.left) * 0.9)
      << "the Arabic letters are not joined";
  const LabelInk word = row_label_ink(img, hm, 2, 2.0), alef = row_label_ink(img, hm, 3, 2.0),
                 bet = row_label_ink(img, hm, 4, 2.0);
  ASSERT_GT(alef.inked, 0);
  const int cols = alef.right - alef.left + 1;
  EXPECT_LT(right_part_mismatch(word, alef, cols), right_part_mismatch(word, bet, cols))
      << "אב does not end (on the right) with א";
}

// SVG keeps the text as text with the same fallbacks, and a right-to-left label says so with its
// anchor mirrored: librsvg draws the Hebrew row label left of the cells, not over them.
TEST_F(Figure, SvgNamesTheFallbackFontsAndRightToLeftLabels) {
  const std::string trace = dir + "/t.json", svg = dir + "/t.svg", layout = dir + "/t.lay.json";
  write_trace(trace, {"שפת", "הנהר", "银行"});
  ASSERT_EQ(render("--view heatmap --no-title --trace " + shell_quote(trace) + " -o " +
                   shell_quote(svg) + " --layout " + shell_quote(layout)),
            0)
      << err();
  const std::string doc = slurp(svg);
  EXPECT_NE(doc.find("Noto Sans CJK SC"), std::string::npos);
  EXPECT_NE(doc.find("Noto Sans Hebrew"), std::string::npos);
  EXPECT_NE(doc.find("direction=\"rtl\""), std::string::npos);
  EXPECT_NE(doc.find(">שפת<"), std::string::npos);  // logical order in the file
  ASSERT_EQ(sh("rsvg-convert " + shell_quote(svg) + " -o " + shell_quote(dir + "/t.png")), 0);
  const test::Image img = test::read_png(dir + "/t.png");
  const nlohmann::json hm = read_json(layout)["heatmap"];
  for (int row = 0; row < 3; ++row) {
    const LabelInk ink = row_label_ink(img, hm, row, 1.0);
    EXPECT_GT(ink.inked, 10) << "row " << row;
    EXPECT_GT(ink.right, ink.w - 12) << "row " << row << " does not end at the cells";
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
