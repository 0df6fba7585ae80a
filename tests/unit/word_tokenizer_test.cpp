#include "core/text/word_tokenizer.h"

#include <gtest/gtest.h>

#include <string>

namespace attnscope {
namespace {

std::vector<std::string> texts(const Tokens& tokens) {
  std::vector<std::string> out;
  for (const Token& t : tokens) out.push_back(t.text);
  return out;
}

TEST(WordTokenizer, LowercasesWordsAndSplitsPunctuationWithByteOffsets) {
  const std::string text = "She sat by the Bank, then left.";
  Tokens t = word_tokenize(text).tokens;
  EXPECT_EQ(texts(t), (std::vector<std::string>{"she", "sat", "by", "the", "bank", ",", "then",
                                                "left", "."}));
  EXPECT_EQ(t[4].start, 15);
  EXPECT_EQ(t[4].end, 19);
  EXPECT_EQ(text.substr(t[4].start, t[4].end - t[4].start), "Bank");
  EXPECT_EQ(t[5].start, 19);
  EXPECT_EQ(t[5].end, 20);
  for (const Token& tok : t) {
    EXPECT_EQ(tok.id, -1);
    EXPECT_FALSE(tok.special);
  }
}

TEST(WordTokenizer, KeepsInnerApostrophesAndNormalisesTheCurlyOne) {
  Tokens t = word_tokenize("don't stop 'em, the river’s edge'").tokens;
  EXPECT_EQ(texts(t), (std::vector<std::string>{"don't", "stop", "'", "em", ",", "the", "river's",
                                                "edge", "'"}));
  // ’ is three bytes in UTF-8: the token spans the original spelling.
  EXPECT_EQ(t[6].end - t[6].start, 9);
}

TEST(WordTokenizer, OffsetsAreBytesForMultibyteText) {
  const std::string text = "Ärger über Öl";
  Tokens t = word_tokenize(text).tokens;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].text, "ärger");
  EXPECT_EQ(t[0].start, 0);
  EXPECT_EQ(t[0].end, 6);  // Ä is 2 bytes
  EXPECT_EQ(t[1].start, 7);
  EXPECT_EQ(t[1].end, 12);
  EXPECT_EQ(t[2].text, "öl");
  EXPECT_EQ(t[2].end, static_cast<int>(text.size()));
}

TEST(WordTokenizer, EmptyAndWhitespaceGiveNoTokens) {
  EXPECT_TRUE(word_tokenize("").tokens.empty());
  EXPECT_TRUE(word_tokenize(" \t\n\r  ").tokens.empty());
  EXPECT_EQ(word_tokenize("").truncated_at_byte, -1);
}

TEST(WordTokenizer, PunctuationOnlyIsOneTokenPerMark) {
  Tokens t = word_tokenize("?!…").tokens;
  EXPECT_EQ(texts(t), (std::vector<std::string>{"?", "!", "…"}));
  EXPECT_EQ(t[2].start, 2);
  EXPECT_EQ(t[2].end, 5);
}

TEST(WordTokenizer, InvalidUtf8BytesBecomeReplacementTokens) {
  const std::string text = std::string("ok ") + '\xff' + '\xc3' + " go";  // 0xC3 lacks its tail
  Tokens t = word_tokenize(text).tokens;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[1].text, "\xEF\xBF\xBD");
  EXPECT_EQ(t[1].start, 3);
  EXPECT_EQ(t[1].end, 4);
  EXPECT_EQ(t[2].text, "\xEF\xBF\xBD");
  EXPECT_EQ(t[2].start, 4);
  EXPECT_EQ(t[3].text, "go");
}

TEST(WordTokenizer, StopsAtTheTokenLimitAndSaysWhere) {
  WordTokenization r = word_tokenize("one two three four", 2);
  EXPECT_EQ(texts(r.tokens), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(r.truncated_at_byte, 8);  // where "three" starts
  EXPECT_EQ(word_tokenize("one two", 2).truncated_at_byte, -1);
  EXPECT_EQ(word_tokenize("one two   ", 2).truncated_at_byte, -1);  // trailing space is no token
}

TEST(WordTokenizer, DigitsAreWordCharacters) {
  EXPECT_EQ(texts(word_tokenize("route 66, 3.5").tokens),
            (std::vector<std::string>{"route", "66", ",", "3", ".", "5"}));
}

}  // namespace
}  // namespace attnscope
