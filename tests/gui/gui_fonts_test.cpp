// Every script in the ImGui side of the app (issue 22 items 1 and 4): each code point of the text
// resolves to a font that really has it (checked here with FreeType), the text box shows ink, and
// emoji survive typing and editing (ImGui 1.86's 16-bit ImWchar would turn them into U+FFFD).
#include <ft2build.h>
#include FT_FREETYPE_H

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/text/unicode.h"
#include "gui_test_util.h"

namespace attnscope {
namespace {

using test::read_json;
using test::read_png;
using test::run_app;
using test::shell_quote;

const std::map<std::string, std::string>& script_texts() {
  static const std::map<std::string, std::string> texts = {
      {"zh", "银行在河边"},
      {"ja", "銀行は川のそばにある"},
      {"ko", "은행은 강 옆에 있다"},
      {"ar", "بنك على ضفة النهر"},
      {"he", "שפת הנהר"},
      {"hi", "नदी का किनारा"},
      {"ru", "банк реки"},
      {"el", "τράπεζα του ποταμού"},
      {"emoji", "🏦 bank 🌊"},
      {"mixed", "the bank 银行 은행 بنك בנק बैंक ธนาคาร банк 🏦"}};
  return texts;
}

std::string key_of(unsigned cp) {
  char key[16];
  std::snprintf(key, sizeof key, "U+%04X", cp);
  return key;
}

// FreeType's own answer: does face `index` of `file` have a glyph for `cp`?
bool face_has(const std::string& file, int index, unsigned cp) {
  static FT_Library lib = [] {
    FT_Library l = nullptr;
    FT_Init_FreeType(&l);
    return l;
  }();
  FT_Face face = nullptr;
  if (FT_New_Face(lib, file.c_str(), index, &face) != 0) return false;
  const bool has = FT_Get_Char_Index(face, cp) != 0;
  FT_Done_Face(face);
  return has;
}

class Script : public ::testing::TestWithParam<std::string> {};

// The app shows the text: every code point (spaces aside) resolved to a font file whose face
// has it, and the text box holds ink (colour ink for emoji, which are colour bitmaps).
TEST_P(Script, EveryCodePointHasAFontAndTheTextBoxShowsIt) {
  const std::string text = script_texts().at(GetParam());
  const std::string dir = test::temp_dir();
  const std::string png = dir + "/shot.png", layout_path = dir + "/layout.json";
  ASSERT_EQ(run_app("--text " + shell_quote(text) + " --layout " + shell_quote(layout_path) +
                    " --screenshot " + shell_quote(png)),
            0);
  const nlohmann::json layout = read_json(layout_path);
  ASSERT_TRUE(layout.contains("glyphs")) << "the layout file reports no font coverage";
  const auto& glyphs = layout["glyphs"];
  int shown = 0;
  for (const unicode::CodePoint& c : unicode::decode_utf8(text)) {
    const unsigned cp = c.value;
    if (cp <= 0x20) continue;
    ++shown;
    const std::string key = key_of(cp);
    ASSERT_TRUE(glyphs.contains(key)) << key << " was not wanted by the app";
    const std::string file = glyphs[key];
    ASSERT_NE(file, "missing") << key;
    const int index = layout["glyph_face_index"].value(key, 0);
    EXPECT_TRUE(face_has(file, index, cp)) << key << " is not in " << file << " face " << index;
  }
  EXPECT_EQ(layout["traces"][0]["box_text"], text);
  // One build at start-up, not one a frame: the text was known before the first frame.
  EXPECT_LE(layout["font_atlas"]["builds"].get<int>(), 2);

  ASSERT_TRUE(layout.contains("text_boxes")) << "no text boxes in the layout";
  const nlohmann::json* box = &layout["text_boxes"][0];
  ASSERT_GT((*box)["w"].get<double>(), 20);
  const test::Image img = read_png(png);
  const int x0 = static_cast<int>((*box)["x"].get<double>()) + 3,
            y0 = static_cast<int>((*box)["y"].get<double>()) + 2,
            x1 = x0 + static_cast<int>((*box)["w"].get<double>()) - 6,
            y1 = y0 + static_cast<int>((*box)["h"].get<double>()) - 4;
  const auto bg = img.at(x1 - 2, (y0 + y1) / 2);  // the box's right end holds no text
  int ink = 0, colour = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const auto c = img.at(x, y);
      ink += std::abs(c[0] - bg[0]) + std::abs(c[1] - bg[1]) + std::abs(c[2] - bg[2]) > 120;
      const int hi = std::max({c[0], c[1], c[2]}), lo = std::min({c[0], c[1], c[2]});
      colour += hi - lo > 80;
    }
  EXPECT_GT(ink, 6 * shown) << "the text box looks empty";
  if (GetParam() == "emoji") {
    EXPECT_GT(colour, 40) << "the emoji are not drawn in colour";
  }
}

std::vector<std::string> script_names() {
  return {"zh", "ja", "ko", "ar", "he", "hi", "ru", "el", "emoji", "mixed"};
}
INSTANTIATE_TEST_SUITE_P(Fonts, Script, ::testing::ValuesIn(script_names()),
                         [](const auto& info) { return info.param; });

// Typing through the real window: X key events -> GLFW -> attnscope's char callback -> ImGui.
std::string type_into_box(const std::string& text, const std::string& typed,
                          const std::string& keys_before, const std::string& clipboard = "") {
  if (std::system("command -v xdotool >/dev/null && command -v xkbcomp >/dev/null") != 0)
    return "skip";
  if (!clipboard.empty() && std::system("command -v xclip >/dev/null") != 0) return "skip";
  const std::string dir = test::temp_dir();
  const std::string cmd = shell_quote(ATTNSCOPE_TYPE_SCRIPT) + " " +
                          shell_quote(std::getenv("ATTNSCOPE_BIN")) + " " + shell_quote(dir) + " " +
                          shell_quote(text) + " " + shell_quote(typed) + " " +
                          shell_quote(keys_before) + " " + shell_quote(clipboard);
  if (std::system(cmd.c_str()) != 0) return "the typing script failed";
  return read_json(dir + "/layout.json")["traces"][0]["box_text"];
}

TEST(TypedText, EmojiAndCjkThroughTheCharCallbackReachTheText) {
  const std::string got = type_into_box("", "银🏦a🌊", "");
  if (got == "skip") GTEST_SKIP() << "xdotool or xkbcomp missing";
  EXPECT_EQ(got, "银🏦a🌊");
}

TEST(TypedText, TypingIntoATextWithAnEmojiKeepsIt) {
  const std::string got = type_into_box("🏦 bank", "x", "End");
  if (got == "skip") GTEST_SKIP() << "xdotool or xkbcomp missing";
  EXPECT_EQ(got, "🏦 bankx");
}

// Issue 22: a pasted emoji reached the box as U+FFFD (ImGui's paste drops the proxies); now it
// goes the typed characters' way, in order with the text around it.
TEST(PastedText, EmojiAndCjkPastedReachTheText) {
  const std::string got =
      type_into_box("", "", "ctrl+v", "\xE9\x93\xB6\xF0\x9F\x8F\xA6 bank \xF0\x9F\x8C\x8A");
  if (got == "skip") GTEST_SKIP() << "xdotool, xkbcomp or xclip missing";
  EXPECT_EQ(got, "\xE9\x93\xB6\xF0\x9F\x8F\xA6 bank \xF0\x9F\x8C\x8A");
}

TEST(PastedText, PlainTextPastesIntoATextWithAnEmoji) {
  const std::string got = type_into_box("\xF0\x9F\x8F\xA6 bank", "", "End ctrl+v", " of the river");
  if (got == "skip") GTEST_SKIP() << "xdotool, xkbcomp or xclip missing";
  EXPECT_EQ(got, "\xF0\x9F\x8F\xA6 bank of the river");
}

// Issue 22: ImGui's InputText draws code points one by one in logical order (Arabic unjoined and
// left to right); the sentence box stays shaped while it has the keyboard (app/ui/sentence_box).
const char* const kArabic =
    "\xD8\xA8\xD9\x86\xD9\x83 \xD8\xB9\xD9\x84\xD9\x89 \xD8\xB6\xD9\x81\xD8\xA9 "
    "\xD8\xA7\xD9\x84\xD9\x86\xD9\x87\xD8\xB1";  // "bank on the bank of the river", 17 code points

nlohmann::json text_box_of(const std::string& extra) {
  const std::string dir = test::temp_dir();
  const std::string layout = dir + "/layout.json";
  EXPECT_EQ(
      run_app("--window 1280x720 --text " + shell_quote(kArabic) + " --layout " +
              shell_quote(layout) + " --screenshot " + shell_quote(dir + "/shot.png") + extra),
      0);
  return read_json(layout)["text_boxes"][0];
}

TEST(EditedText, ArabicStaysJoinedWhileEditedWithItsEndOnTheLeft) {
  const nlohmann::json idle = text_box_of("");
  // --ready-file gives the box the keyboard before the capture; ImGui puts the caret at the end.
  const nlohmann::json edited =
      text_box_of(" --ready-file " + shell_quote(test::temp_dir() + "/r"));
  EXPECT_FALSE(idle["editing"].get<bool>());
  EXPECT_TRUE(idle["shaped"].get<bool>());
  ASSERT_TRUE(edited["editing"].get<bool>()) << edited.dump();
  EXPECT_TRUE(edited["shaped"].get<bool>()) << "ImGui's unshaped glyphs show while editing";
  EXPECT_EQ(edited["caret"].get<int>(), 17);
  const double x0 = edited["text_x0"], x1 = edited["text_x1"], caret = edited["caret_x"];
  // The same shaped line as when idle (joined letters: about 104 px at 100%, not ImGui's ~130)...
  EXPECT_NEAR(x1 - x0, idle["text_x1"].get<double>() - idle["text_x0"].get<double>(), 1.0);
  EXPECT_GT(x1 - x0, 60);
  // ...and the end of a right-to-left text is on its left.
  EXPECT_NEAR(caret, x0, 1.5);
}

// A click on a letter of the shaped line puts the caret there, not where ImGui's unshaped
// left-to-right glyphs would have been: at the left end of an Arabic text is its logical end, at
// the right end its start. Real X events (xdotool) through GLFW; then "x" is typed.
std::string click_and_type(double x, double y) {
  if (std::system("command -v xdotool >/dev/null") != 0) return "skip";
  const std::string dir = test::temp_dir();
  const std::string cmd =
      shell_quote(ATTNSCOPE_CLICK_SCRIPT) + " " + shell_quote(std::getenv("ATTNSCOPE_BIN")) + " " +
      shell_quote(dir) + " " + std::to_string(static_cast<int>(std::lround(x))) + " " +
      std::to_string(static_cast<int>(std::lround(y))) + " x --window 1280x720 --text " +
      shell_quote(kArabic) + " --ready-file " + shell_quote(dir + "/ready");
  if (std::system(cmd.c_str()) != 0) return "the click script failed";
  return read_json(dir + "/layout.json")["traces"][0]["box_text"];
}

TEST(EditedText, AClickOnTheShapedLinePutsTheCaretWhereTheLetterIs) {
  const nlohmann::json box = text_box_of("");
  const double y = box["y"].get<double>() + box["h"].get<double>() / 2;
  const std::string left = click_and_type(box["text_x0"].get<double>() + 2, y);
  if (left == "skip") GTEST_SKIP() << "xdotool missing";
  EXPECT_EQ(left, std::string(kArabic) + "x");
  std::string start = "x";  // typed before the first letter (appended: GCC 12's -Wrestrict)
  start += kArabic;
  EXPECT_EQ(click_and_type(box["text_x1"].get<double>() - 2, y), start);
}

}  // namespace
}  // namespace attnscope
