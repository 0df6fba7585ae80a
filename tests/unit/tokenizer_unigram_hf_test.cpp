// The Unigram model and the Precompiled normalizer (T5, XLM-RoBERTa, Marian) against Hugging
// Face's own library. No real T5 or XLM-R tokenizer.json is on npm, so
// tests/tools/make_unigram_tokenizers.py builds them from a real vocabulary (Mistral 7B's
// SentencePiece pieces, with scores) and a precompiled_charsmap it encodes itself in
// SentencePiece's format; both libraries load the same files and must agree on ids, pieces and
// byte offsets, without and with the post-processor's special tokens.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/text/tokenizer.h"
#include "core/text/unicode.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

// The generated files, made once per test program (about a second). ATTNSCOPE_CHARSMAP names a
// real SentencePiece charsmap file to use instead of the generated one (README, "Tokenizers").
const fs::path& generated_dir() {
  static const fs::path dir = [] {
    const fs::path out =
        fs::temp_directory_path() / ("attnscope_unigram_" + std::to_string(::getpid()));
    std::string command = "python3 '" +
                          (testing::kToolsDir / "make_unigram_tokenizers.py").string() + "' '" +
                          testing::kNpmData.string() + "' '" + out.string() + "'";
    if (const char* charsmap = std::getenv("ATTNSCOPE_CHARSMAP")) {
      command += " '";
      command += charsmap;
      command += "'";
    }
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return out;
  }();
  return dir;
}

struct Cleanup : ::testing::Environment {
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(fs::temp_directory_path() / ("attnscope_unigram_" + std::to_string(::getpid())),
                   ignored);
  }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new Cleanup);

// What the charsmap rewrites, and what the vocabulary lacks, for the random texts.
std::vector<std::string> normalizer_alphabet() {
  return {"Ｈ", "ｅ", "ｌ", "ｏ", "１", "！", "ﬁ", "ﬀ", "ﬃ", "\u00a0", "\u2003", "\u3000", "\u202f",
          "\u200b", "\u00ad", "\ufeff", "\r\n", "\r", "\t", "\n", "e\u0301", "a\u0308", "A\u030a",
          "n\u0303", "ﬁ\u0301", "™", "…", "½", "①", "Ⅻ", "㎏", "²", "µ", "Å", "Ω", "€", "ß", "£",
          "¥", "🤗", "👍", "👨‍👩‍👧", "\u1100\u1161", "가", "e\u0301\u0302", "  ",
          "   ", "<0x41>", "▁", "<unk>", "<mask>",
          // Grapheme cluster material: marks, joiners, selectors, Hangul jamo, regional
          // indicators, emoji modifiers, prepend and spacing marks, Thai, Devanagari.
          "\u0301", "\u0308", "\u200d", "\u200c", "\ufe0f", "\u1100", "\u1161", "\u11a8",
          "\U0001F1EB", "\U0001F1F7", "\U0001F3FD", "\u0600", "\u0903", "\u093e", "\u094d", "क",
          "ष", "ก", "\u0e33", "\u0e48", "ड़", "\u3099", "か", "ｶ", "\uff9e", "𝔾", "𝕠"};
}

std::vector<std::string> inputs_for(const std::string& name) {
  std::vector<std::string> inputs = {
      "",
      " ",
      "Hello world",
      "  Hello   world  ",
      "I'm sure you'll see they've done it. ISN'T IT?",
      "1234567890 3.14159 1,000,000 2023-11-29 x2y",
      "line one\nline two\r\n\tthree\u00a0four\u3000five\u2003six",
      "accents: café naïve Ångström, decomposed cafe\u0301 nai\u0308ve A\u030angstro\u0308m",
      "ligatures ﬁne ﬂow eﬀort oﬃce, ™ … ½ ① ² Ⅻ ㎏ µ Ω Å",
      "full-width ＨＥＬＬＯ ｗｏｒｌｄ！ １２３",
      "zero\u200bwidth soft\u00adhyphen \ufeffbom \u200b\u200b",
      "\u200bstarts with a removed character",
      "ﬁ\u0301 e\u0301\u0302 \u1100\u1161 ᄀ가",
      "CJK 中文字符 日本語 한국어, Arabic مرحبا, Devanagari नमस्ते",
      "emoji 🤗 👍🏽 👨‍👩‍👧 🇫🇷, symbols ∑ € © ß £ ¥",
      "unknown run €€€ß£¥ and €5",
      "def f(x):\n    return x**2  # comment",
      "a<0x41>b <0xFF> <unk> <mask> a <mask>b <s> </s> <pad>",
  };
  std::string long_text;
  for (int i = 0; i < 300; ++i)
    long_text += "Ｔｈｅ quick brown ﬁx café\u200b ™ 中文 🤗 ";
  inputs.push_back(long_text);
  inputs.push_back(std::string(5000, 'a') + "ﬁ" + std::string(3000, 'b'));
  std::vector<std::string> alphabet = testing::alphabet_with({"<s>", "</s>", "<pad>", "<mask>"});
  for (const std::string& s : normalizer_alphabet()) alphabet.push_back(s);
  for (const std::string& s :
       testing::random_texts(alphabet, 200, 24, static_cast<unsigned>(name.size() * 7919)))
    inputs.push_back(s);
  for (char32_t cp = 0x20; cp <= 0x2FFFF; cp += 211) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string text = " ";  // built in steps: GCC 12 warns falsely (-Wrestrict) on " " + s
    text += testing::between_letters(cp);
    text += ' ';
    inputs.push_back(text);
  }
  return inputs;
}

class UnigramVariant : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path file() const { return generated_dir() / GetParam() / "tokenizer.json"; }
};

TEST_P(UnigramVariant, MatchesHuggingFace) {
  ASSERT_TRUE(fs::exists(file())) << "tests/tools/make_unigram_tokenizers.py wrote nothing";
  std::shared_ptr<const Tokenizer> tokenizer;
  ASSERT_NO_THROW(tokenizer = load_tokenizer(file().parent_path()));
  const Tokenizer& t = *tokenizer;
  const std::vector<std::string> inputs = inputs_for(GetParam());
  EXPECT_EQ(testing::hf_mismatches(
                file().string(), inputs, [&](const std::string& s) { return t.encode(s, false); },
                [&](const std::string& s) { return t.encode(s, true); }, 6),
            0)
      << "of " << inputs.size() << " strings";
}

// Invalid UTF-8 goes through as the rest of the pipeline takes it: each bad byte is a U+FFFD
// of that one byte, so the ids are those of the text with U+FFFD there (whose agreement with
// Hugging Face the test above checks), and offsets stay inside the text.
TEST_P(UnigramVariant, InvalidUtf8IsReplacementCharacters) {
  std::shared_ptr<const Tokenizer> tokenizer;
  ASSERT_NO_THROW(tokenizer = load_tokenizer(file().parent_path()));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ab\xff\xfe c", "ab\uFFFD\uFFFD c"},
      {"caf\xc3 ﬁ\x80", "caf\uFFFD ﬁ\uFFFD"},
      {"\xe2\x82 ＡＢ \xf0\x9f\xa4", "\uFFFD\uFFFD ＡＢ \uFFFD\uFFFD\uFFFD"},
  };
  for (const auto& [bad, replaced] : cases) {
    Tokens tokens;
    ASSERT_NO_THROW(tokens = tokenizer->encode(bad, true));
    EXPECT_EQ(token_ids(tokens), token_ids(tokenizer->encode(replaced, true))) << replaced;
    for (const Token& token : tokens) {
      if (token.special) continue;
      EXPECT_LE(0, token.start);
      EXPECT_LE(token.start, token.end);
      EXPECT_LE(token.end, static_cast<int>(bad.size()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Generated, UnigramVariant,
                         ::testing::Values("t5_like", "xlmr_like", "byte_fallback", "unigram_only",
                                           "precompiled_mistral_bpe"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace attnscope
