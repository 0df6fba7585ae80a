// Issue 22, "shaping and direction": token labels in every script a teacher may type. Each case
// runs the app on one sentence (the lesson model, whose tokens are the words) and checks that the
// heatmap's two axes and the sentence chips label each word with exactly its text, that no glyph
// is missing (Pango's unknown-glyph count) and that every label's box has ink in the screenshot.
// The Shaping cases check the layout itself: an Arabic word is joined and runs right to left.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app/render/text_shape.h"
#include "gui_test_util.h"

namespace attnscope {
namespace {

using test::read_json;
using test::read_png;
using test::run_app;
using test::shell_quote;
using test::temp_dir;

struct Script {
  const char* name;
  const char* text;
  int scale;  // screenshot scale: labels must have ink at 2× too
};
const Script kScripts[] = {
    {"zh", "\xE9\x93\xB6\xE8\xA1\x8C\xE5\x9C\xA8\xE6\xB2\xB3\xE8\xBE\xB9", 1},  // 银行在河边
    {"ja",
     "\xE9\x8A\x80\xE8\xA1\x8C\xE3\x81\xAF\xE5\xB7\x9D\xE3\x81\xAE\xE3\x81\x9D\xE3\x81\xB0"
     "\xE3\x81\xAB\xE3\x81\x82\xE3\x82\x8B",
     1},  // 銀行は川のそばにある
    {"ko",
     "\xEC\x9D\x80\xED\x96\x89\xEC\x9D\x80 \xEA\xB0\x95 \xEC\x98\x86\xEC\x97\x90 "
     "\xEC\x9E\x88\xEB\x8B\xA4",
     1},  // 은행은 강 옆에 있다
    {"ar",
     "\xD8\xA8\xD9\x86\xD9\x83 \xD8\xB9\xD9\x84\xD9\x89 \xD8\xB6\xD9\x81\xD8\xA9 "
     "\xD8\xA7\xD9\x84\xD9\x86\xD9\x87\xD8\xB1",
     1},  // بنك على ضفة النهر
    {"he", "\xD7\xA9\xD7\xA4\xD7\xAA \xD7\x94\xD7\xA0\xD7\x94\xD7\xA8", 1},  // שפת הנהר
    {"hi",
     "\xE0\xA4\xA8\xE0\xA4\xA6\xE0\xA5\x80 \xE0\xA4\x95\xE0\xA4\xBE "
     "\xE0\xA4\x95\xE0\xA4\xBF\xE0\xA4\xA8\xE0\xA4\xBE\xE0\xA4\xB0\xE0\xA4\xBE",
     1},  // नदी का किनारा
    {"ru", "\xD0\xB1\xD0\xB0\xD0\xBD\xD0\xBA \xD1\x80\xD0\xB5\xD0\xBA\xD0\xB8", 1},  // банк реки
    {"el",
     "\xCF\x84\xCF\x81\xCE\xAC\xCF\x80\xCE\xB5\xCE\xB6\xCE\xB1 \xCF\x84\xCE\xBF\xCF\x85 "
     "\xCF\x80\xCE\xBF\xCF\x84\xCE\xB1\xCE\xBC\xCE\xBF\xCF\x8D",
     1},                                                     // τράπεζα του ποταμού
    {"emoji", "\xF0\x9F\x8F\xA6 bank \xF0\x9F\x8C\x8A", 1},  // 🏦 bank 🌊
    // the bank بنك 银行 נהר नदी 🌊, at 2×
    {"mixed",
     "the bank \xD8\xA8\xD9\x86\xD9\x83 \xE9\x93\xB6\xE8\xA1\x8C \xD7\xA0\xD7\x94\xD7\xA8 "
     "\xE0\xA4\xA8\xE0\xA4\xA6\xE0\xA5\x80 \xF0\x9F\x8C\x8A",
     2},
};

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Pixels in the box [x, y, w, h] (screenshot pixels) that differ clearly from the box's most
// common colour (its background).
int ink_pixels(const test::Image& image, const nlohmann::json& box) {
  const int x0 = std::max(0, static_cast<int>(box[0].get<double>()));
  const int y0 = std::max(0, static_cast<int>(box[1].get<double>()));
  const int x1 =
      std::min(image.width, static_cast<int>(box[0].get<double>() + box[2].get<double>()));
  const int y1 =
      std::min(image.height, static_cast<int>(box[1].get<double>() + box[3].get<double>()));
  std::vector<std::array<int, 3>> pixels;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) pixels.push_back(image.at(x, y));
  if (pixels.empty()) return 0;
  std::sort(pixels.begin(), pixels.end());
  std::array<int, 3> background = pixels[0];
  std::size_t best = 0;
  for (std::size_t i = 0; i < pixels.size();) {
    std::size_t j = i;
    while (j < pixels.size() && pixels[j] == pixels[i]) ++j;
    if (j - i > best) best = j - i, background = pixels[i];
    i = j;
  }
  int ink = 0;
  for (const auto& p : pixels)
    if (std::abs(p[0] - background[0]) + std::abs(p[1] - background[1]) +
            std::abs(p[2] - background[2]) >
        90)
      ++ink;
  return ink;
}

const nlohmann::json* find_view(const nlohmann::json& layout, const char* name) {
  for (const auto& v : layout["views"])
    if (v.value("view", "") == name && v.value("slot", -1) == 0) return &v;
  return nullptr;
}

// Cheap, name-only parameters (TOOLCHAIN.md): the work happens inside the test.
class ScriptLabels : public ::testing::TestWithParam<int> {};

TEST_P(ScriptLabels, EachWordIsLabelledWholeWithEveryGlyphAndInk) {
  const Script& script = kScripts[GetParam()];
  const std::vector<std::string> expected = words(script.text);
  const std::string dir = temp_dir();
  const std::string png = dir + "/shot.png", json = dir + "/layout.json";
  ASSERT_EQ(
      run_app("--text " + shell_quote(script.text) + " --scale " + std::to_string(script.scale) +
              " --screenshot " + shell_quote(png) + " --layout " + shell_quote(json)),
      0);
  const nlohmann::json layout = read_json(json);
  const test::Image image = read_png(png);

  const nlohmann::json* heatmap = find_view(layout, "heatmap");
  ASSERT_NE(heatmap, nullptr);
  ASSERT_TRUE(heatmap->contains("labels")) << "the heatmap records no shaped labels";
  std::vector<nlohmann::json> labels;  // each axis's labels in token order, then the chips'
  for (const char* axis : {"row", "col"}) {
    std::vector<std::string> texts;
    for (const auto& l : (*heatmap)["labels"])
      if (l["axis"] == axis) texts.push_back(l["text"]), labels.push_back(l);
    EXPECT_EQ(texts, expected) << script.name << ": heatmap " << axis << " labels";
  }
  const nlohmann::json* sentence = find_view(layout, "sentence");
  ASSERT_NE(sentence, nullptr);
  std::vector<std::string> chips;
  for (const auto& t : (*sentence)["tokens"]) {
    ASSERT_TRUE(t.contains("label")) << "a chip records no shaped label";
    chips.push_back(t["label"]["text"]), labels.push_back(t["label"]);
  }
  EXPECT_EQ(chips, expected) << script.name << ": sentence chips";

  for (const auto& l : labels) {
    const std::string what = std::string(script.name) + " label '" + l["text"].get<std::string>() +
                             "' at " + l["box"].dump();
    EXPECT_EQ(l["unknown"], 0) << what << ": glyphs no font could draw";
    EXPECT_TRUE(l["ink"].get<bool>()) << what << ": its raster is empty";
    // A word of a few letters leaves more than a handful of pixels at 1× (more at 2×).
    EXPECT_GT(ink_pixels(image, l["box"]), 6 * script.scale * script.scale)
        << what << ": no ink in the screenshot";
  }
  if (std::string(script.name) == "ar" || std::string(script.name) == "he") {
    for (const auto& l : labels) EXPECT_TRUE(l["rtl"].get<bool>()) << l.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Scripts, ScriptLabels,
                         ::testing::Range(0, static_cast<int>(std::size(kScripts))),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(kScripts[info.param].name);
                         });

// The layout Pango makes of one Arabic word: its letters join (the word is narrower than its
// letters set apart in their isolated forms) and the paragraph runs right to left.
TEST(Shaping, ArabicWordIsJoinedAndRunsRightToLeft) {
  const std::string word = "\xD8\xA8\xD9\x86\xD9\x83";  // بنك: ب ن ك
  const ShapedText joined = shape_text({word, 30}, true);
  EXPECT_TRUE(joined.rtl);
  EXPECT_EQ(joined.unknown, 0);
  int apart = 0;
  for (std::size_t i = 0; i < word.size(); i += 2)
    apart += shape_text({word.substr(i, 2), 30}, false).width;
  EXPECT_LT(joined.width, apart * 0.9) << "joined " << joined.width << " px, apart " << apart;
  // Right to left: the first letter, ب (its dot below), is at the right end. The raster's ink
  // below the baseline (the dot) lies in the right half.
  ASSERT_TRUE(joined.ink);
  double dot_x = 0, dot_n = 0;
  const int baseline = static_cast<int>(std::lround(30 * 1901.0 / 2384.0)) - joined.image_y;
  for (int y = baseline + 2; y < joined.image_h; ++y)
    for (int x = 0; x < joined.image_w; ++x)
      if (joined.rgba[(static_cast<std::size_t>(y) * joined.image_w + x) * 4 + 3] > 128)
        dot_x += x, ++dot_n;
  ASSERT_GT(dot_n, 0);
  EXPECT_GT(dot_x / dot_n, joined.image_w / 2.0);
}

TEST(Shaping, LatinRunsLeftToRightAndDevanagariCombines) {
  EXPECT_FALSE(shape_text({"bank", 20}, false).rtl);
  // किनारा: six code points (क ि न ा र ा); the vowel sign ि is drawn before क, still 6 glyphs or
  // fewer, never a dotted circle: nothing unknown.
  const ShapedText hi = shape_text(
      {"\xE0\xA4\x95\xE0\xA4\xBF\xE0\xA4\xA8\xE0\xA4\xBE\xE0\xA4\xB0\xE0\xA4\xBE", 20}, false);
  EXPECT_EQ(hi.unknown, 0);
  EXPECT_LE(hi.glyphs, 6);
  // A conjunct: न्द (na + virama + da) becomes fewer glyphs than its three code points.
  const ShapedText conjunct = shape_text({"\xE0\xA4\xA8\xE0\xA5\x8D\xE0\xA4\xA6", 20}, false);
  EXPECT_LT(conjunct.glyphs, 3);
}

// Digits, spaces and "=" are drawn by the text font, not Noto Color Emoji (which has glyphs for
// the keycap bases 0-9, # and *): named in the family list, it drew "0.21" grey and spaced out.
// Drawn in white, every inked pixel of a text-font label is white; the emoji font's are grey.
// An emoji still comes through fontconfig's fallback, in colour.
TEST(Shaping, DigitsAreDrawnByTheTextFontAndEmojiStillInColour) {
  const ShapedText digits = shape_text({"0.21 = 11.3 \xE2\x88\x9A"
                                        "128",
                                        30},
                                       true, 0xFFFFFF);
  ASSERT_TRUE(digits.ink);
  int inked = 0, off_white = 0;
  for (size_t i = 0; i + 3 < digits.rgba.size(); i += 4) {
    if (digits.rgba[i + 3] < 128) continue;
    ++inked;
    off_white += digits.rgba[i] < 240 || digits.rgba[i + 1] < 240 || digits.rgba[i + 2] < 240;
  }
  ASSERT_GT(inked, 50);
  EXPECT_EQ(off_white, 0) << "digits drawn in another colour than asked: the emoji font drew them";
  const ShapedText emoji = shape_text({"\xF0\x9F\x8F\xA6", 30}, true, 0xFFFFFF);
  EXPECT_EQ(emoji.unknown, 0);
  int coloured = 0;
  for (size_t i = 0; i + 3 < emoji.rgba.size(); i += 4)
    coloured += emoji.rgba[i + 3] > 128 &&
                (emoji.rgba[i] != emoji.rgba[i + 1] || emoji.rgba[i + 1] != emoji.rgba[i + 2]);
  EXPECT_GT(coloured, 20) << "the bank emoji is drawn in colour";
}

}  // namespace
}  // namespace attnscope
