// The Unicode helpers: strict UTF-8 decoding with U+FFFD per invalid byte, and properties from
// utf8proc checked against values from the Unicode Character Database (UnicodeData.txt,
// PropList.txt).
#include <gtest/gtest.h>

#include "core/text/unicode.h"

namespace attnscope::unicode {
namespace {

std::vector<char32_t> values(std::string_view text) {
  std::vector<char32_t> out;
  for (const CodePoint& cp : decode_utf8(text)) out.push_back(cp.value);
  return out;
}

TEST(Utf8, DecodesWellFormedSequencesWithByteRanges) {
  const auto cps = decode_utf8("aé中🤗");
  ASSERT_EQ(cps.size(), 4u);
  EXPECT_EQ(cps[0].value, U'a');
  EXPECT_EQ(cps[1].value, U'é');
  EXPECT_EQ(cps[2].value, U'中');
  EXPECT_EQ(cps[3].value, U'🤗');
  EXPECT_EQ(cps[1].start, 1);
  EXPECT_EQ(cps[1].length, 2);
  EXPECT_EQ(cps[2].start, 3);
  EXPECT_EQ(cps[2].length, 3);
  EXPECT_EQ(cps[3].start, 6);
  EXPECT_EQ(cps[3].length, 4);
  for (const auto& cp : cps) EXPECT_TRUE(cp.valid);
}

TEST(Utf8, EveryInvalidByteBecomesOneReplacementCharacter) {
  const char32_t R = kReplacementCharacter;
  EXPECT_EQ(values("\x80"), (std::vector<char32_t>{R}));                       // stray continuation
  EXPECT_EQ(values("a\xe2\x82"), (std::vector<char32_t>{U'a', R, R}));         // truncated
  EXPECT_EQ(values("\xc0\xaf"), (std::vector<char32_t>{R, R}));                // overlong '/'
  EXPECT_EQ(values("\xe0\x80\xaf"), (std::vector<char32_t>{R, R, R}));         // overlong
  EXPECT_EQ(values("\xed\xa0\x80"), (std::vector<char32_t>{R, R, R}));         // surrogate D800
  EXPECT_EQ(values("\xf4\x90\x80\x80"), (std::vector<char32_t>{R, R, R, R}));  // > U+10FFFF
  EXPECT_EQ(values("\xf5\xff"), (std::vector<char32_t>{R, R}));
  EXPECT_EQ(values("\xc3x"), (std::vector<char32_t>{R, U'x'}));  // lead without tail
  const auto cps = decode_utf8("a\xffz");
  ASSERT_EQ(cps.size(), 3u);
  EXPECT_FALSE(cps[1].valid);
  EXPECT_EQ(cps[1].start, 1);
  EXPECT_EQ(cps[1].length, 1);
  EXPECT_FALSE(is_valid_utf8("a\xffz"));
  EXPECT_TRUE(is_valid_utf8("aé中🤗"));
  // A real U+FFFD in the text is valid.
  EXPECT_TRUE(decode_utf8("\xef\xbf\xbd")[0].valid);
}

TEST(Utf8, EncodeDecodeRoundTripsEveryScalarValue) {
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string bytes = to_utf8(cp);
    const CodePoint decoded = decode_at(bytes, 0);
    ASSERT_TRUE(decoded.valid) << std::hex << static_cast<unsigned>(cp);
    ASSERT_EQ(decoded.value, cp);
    ASSERT_EQ(static_cast<std::size_t>(decoded.length), bytes.size());
  }
  EXPECT_EQ(to_utf8(0xD800), "\xef\xbf\xbd");
}

TEST(Properties, WhiteSpaceIsExactlyThePropListSet) {
  // PropList.txt, White_Space (stable since Unicode 6.3 removed U+180E).
  auto in_proplist = [](char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
  };
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    ASSERT_EQ(is_white_space(cp), in_proplist(cp)) << std::hex << static_cast<unsigned>(cp);
  }
  EXPECT_TRUE(is_white_space(0x85));
  EXPECT_FALSE(is_white_space(0xFEFF));
  EXPECT_FALSE(is_white_space(0x180E));
  EXPECT_FALSE(is_white_space(0x200B));
}

TEST(Properties, GeneralCategoriesFromUnicodeData) {
  const std::vector<std::pair<char32_t, std::string_view>> expected = {
      {U'A', "Lu"},    {U'é', "Ll"},    {U'ǅ', "Lt"},   {0x02B0, "Lm"}, {U'中', "Lo"},
      {0x20000, "Lo"}, {U'한', "Lo"},   {0x0301, "Mn"}, {0x0903, "Mc"}, {0x20DD, "Me"},
      {U'5', "Nd"},    {0x0663, "Nd"},  {U'Ⅻ', "Nl"},   {U'½', "No"},   {U'_', "Pc"},
      {U'-', "Pd"},    {U'(', "Ps"},    {U')', "Pe"},   {U'«', "Pi"},   {U'»', "Pf"},
      {U'!', "Po"},    {U'+', "Sm"},    {U'€', "Sc"},   {U'^', "Sk"},   {U'©', "So"},
      {0x1F917, "So"}, {0x1FAE8, "So"}, {U' ', "Zs"},   {0x2028, "Zl"}, {0x2029, "Zp"},
      {0x0085, "Cc"},  {0x200B, "Cf"},  {0xFEFF, "Cf"}, {0xE000, "Co"}, {0xF0000, "Co"},
      {0x0378, "Cn"},  {0x110000, "Cn"}};
  for (const auto& [cp, category] : expected) {
    EXPECT_EQ(general_category(cp), category) << std::hex << static_cast<unsigned>(cp);
  }
}

TEST(Properties, ClassPredicatesAgreeWithTheCategoryEverywhere) {
  // Checks the ASCII fast paths and the category ranges against the category names.
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    const std::string_view c = general_category(cp);
    ASSERT_EQ(is_letter(cp), c[0] == 'L') << std::hex << static_cast<unsigned>(cp);
    ASSERT_EQ(is_number(cp), c[0] == 'N') << std::hex << static_cast<unsigned>(cp);
    ASSERT_EQ(is_punctuation(cp), c[0] == 'P') << std::hex << static_cast<unsigned>(cp);
    ASSERT_EQ(is_nonspacing_mark(cp), c == "Mn") << std::hex << static_cast<unsigned>(cp);
    ASSERT_EQ(is_control_format_private(cp), c == "Cc" || c == "Cf" || c == "Co")
        << std::hex << static_cast<unsigned>(cp);
  }
}

TEST(Properties, LowercaseMapping) {
  EXPECT_EQ(to_lower_simple(U'A'), U'a');
  EXPECT_EQ(to_lower_simple(U'z'), U'z');
  EXPECT_EQ(to_lower_simple(U'É'), U'é');
  EXPECT_EQ(to_lower_simple(U'Σ'), U'σ');  // no final-sigma rule, as Rust's char::to_lowercase
  EXPECT_EQ(to_lower_simple(U'Ж'), U'ж');
  EXPECT_EQ(to_lower_simple(U'ǅ'), U'ǆ');
  EXPECT_EQ(to_lower_simple(0x1E9E), U'ß');  // capital sharp s
  EXPECT_EQ(to_lower_simple(U'中'), U'中');
  EXPECT_EQ(to_lower_full(0x130), U"i\u0307");
  EXPECT_EQ(to_lower_full(U'Q'), U"q");
  for (char32_t c = 0; c < 0x80; ++c) {
    const char32_t expected = (c >= 'A' && c <= 'Z') ? c + 32 : c;
    EXPECT_EQ(to_lower_simple(c), expected);
  }
}

TEST(Properties, CanonicalDecomposition) {
  EXPECT_EQ(canonical_decomposition(U'é'), U"e\u0301");
  EXPECT_EQ(canonical_decomposition(0x01D6), U"u\u0308\u0304");      // ǖ, recursively
  EXPECT_EQ(canonical_decomposition(U'한'), U"\u1112\u1161\u11AB");  // Hangul, algorithmic
  EXPECT_EQ(canonical_decomposition(0x212B), U"A\u030A");            // Angstrom sign
  EXPECT_EQ(canonical_decomposition(U'ﬁ'), U"ﬁ");                    // compatibility only
  EXPECT_EQ(canonical_decomposition(U'a'), U"a");
  EXPECT_EQ(combining_class(0x0301), 230);
  EXPECT_EQ(combining_class(0x0323), 220);
  EXPECT_EQ(combining_class(U'a'), 0);
}

}  // namespace
}  // namespace attnscope::unicode
