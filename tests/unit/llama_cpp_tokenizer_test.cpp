// The tokenizer a GGUF file carries (core/text/llama_cpp_tokenizer, core/model/gguf/gguf_vocab)
// against llama.cpp itself: node-llama-cpp 3.21.1's prebuilt llama.cpp loads each vocab-only GGUF
// (tests/tools/llama_cpp/reference.mjs --vocab-only: model.tokenize(text, true) with the BOS/EOS
// llama.cpp's add_special adds) and attnscope must give the same ids for every text — the shared
// texts (tests/data/llama_cpp/tokenizer_texts.json), random texts over a mixed alphabet, and for
// the byte-level vocabularies every code point of the BMP and a third of the SMP in context.
// Vocabularies: the real ones gguf_fixtures writes (llama3, qwen3, gemma3, mistral, gpt2) and
// those tests/tools/llama_cpp/make_tokenizer_vocabs.py writes (GPT-2's under other pre names,
// stories260K). llama.cpp's answers are cached in the build tree by a hash of the GGUF, the texts
// and the script, so llama.cpp runs once per vocabulary, not once per test run.
// Then the pieces on their own: llama.cpp's word split, its UTF-8 decoding, the offsets contract,
// decode(), the metadata reader's checks, odd and huge texts.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/model/gguf/gguf_file.h"
#include "core/model/gguf/gguf_vocab.h"
#include "core/text/llama_cpp_split.h"
#include "core/text/llama_cpp_tokenizer.h"
#include "core/text/unicode.h"
#include "core/util/error.h"
#include "tests/tools/node_reference.h"

// Where the build writes gguf_fixtures' and llama_cpp_tokenizer_vocabs' files
// (tests/CMakeLists.txt; without the test data those targets do not exist and the comparisons fail,
// saying what is missing).
#ifndef ATTNSCOPE_FIXTURES
#define ATTNSCOPE_FIXTURES "fixtures-not-built"
#endif

namespace attnscope {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(ATTNSCOPE_FIXTURES);
const fs::path kTexts = fs::path(ATTNSCOPE_TEST_DATA) / "llama_cpp" / "tokenizer_texts.json";
const fs::path kScript = testing::kToolsDir / "llama_cpp" / "reference.mjs";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 1469598103934665603ull) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::shared_ptr<const Tokenizer> open_vocab(const fs::path& gguf) {
  const auto file = GgufFile::open(gguf);
  return make_llama_cpp_tokenizer(read_gguf_vocab(*file), gguf.string());
}

// llama.cpp's ids for each text (BOS/EOS as add_special adds them), cached by content.
std::vector<std::vector<int>> llama_cpp_ids(const fs::path& gguf,
                                            const std::vector<std::string>& texts) {
  const std::string texts_json = nlohmann::json(texts).dump();
  std::uint64_t key = fnv1a(read_file(gguf));
  key = fnv1a(texts_json, key);
  key = fnv1a(read_file(kScript), key);
  const fs::path cache_dir = kFixtures / "llama_cpp_tokens";
  fs::create_directories(cache_dir);
  std::ostringstream name;
  name << gguf.stem().string() << "-" << std::hex << key << ".json";
  const fs::path cached = cache_dir / name.str();
  nlohmann::json answer;
  if (fs::exists(cached)) {
    answer = nlohmann::json::parse(read_file(cached));
  } else {
    answer = testing::run_node_reference("llama_cpp/reference.mjs", {"--vocab-only", gguf.string()},
                                         texts);
    fs::remove(fs::temp_directory_path() /
               ("attnscope_ref_" + std::to_string(::getpid()) + "_llama_cpp"));
    if (answer.is_null()) return {};
    // Written under another name and renamed: tests of this file run in parallel processes.
    const fs::path partial = cached.string() + "." + std::to_string(::getpid());
    std::ofstream(partial) << answer.dump();
    fs::rename(partial, cached);
  }
  std::vector<std::vector<int>> ids;
  for (const auto& result : answer.at("results")) ids.push_back(result.at("ids"));
  return ids;
}

std::vector<std::string> shared_texts() {
  return nlohmann::json::parse(read_file(kTexts)).get<std::vector<std::string>>();
}

// Short texts over an alphabet of what splits words differently: letters, digits, contraction
// letters, ASCII punctuation and symbols, every kind of white space, marks, other numbers, CJK,
// Hangul, Arabic, Devanagari, Thai, emoji with joiners and modifiers, the SentencePiece and
// byte-level marker characters, private use, a 15.1 ideograph.
std::vector<std::string> random_texts(int count, unsigned seed) {
  std::vector<std::string> alphabet;
  for (const char c :
       std::string("abcXYZ019 \t\n\r'sStTmMdDlLrReEvV.,!?$+<=>^~|`-_()[]{}\"#%&*/:;@\\"))
    alphabet.emplace_back(1, c);
  for (const char32_t cp :
       {0xA0u,   0x85u,    0x2003u,  0x3000u,   0x2028u,  0x300u,  0x301u,  0x308u,
        0x663u,  0x2460u,  0xBDu,    0x4E00u,   0x65E5u,  0xAC00u, 0x627u,  0x915u,
        0x94Du,  0xE2Au,   0x1F600u, 0x1F44Du,  0x1F3FDu, 0x200Du, 0xFE0Fu, 0xFEFFu,
        0x200Bu, 0xFFFDu,  0x2581u,  0x120u,    0x100u,   0xFFu,   0x1C5u,  0x2B0u,
        0x2160u, 0x1D400u, 0x2EBF0u, 0x10FFFDu, 0xE000u})
    alphabet.push_back(unicode::to_utf8(cp));
  std::mt19937 rng(seed);
  std::vector<std::string> texts;
  for (int i = 0; i < count; ++i) {
    const int length = 1 + static_cast<int>(rng() % 40);
    std::string text;
    for (int k = 0; k < length; ++k) text += alphabet[rng() % alphabet.size()];
    texts.push_back(text);
  }
  return texts;
}

// Every code point of the BMP but surrogates and one in three of U+10000..U+2FFFF, each in the
// contexts the splitters tell apart, 64 to a text.
std::vector<std::string> code_point_sweep() {
  std::vector<std::string> texts;
  std::string text;
  int in_text = 0;
  for (char32_t cp = 0x20; cp < 0x30000; ++cp) {
    if ((cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x10000 && cp % 3 != 0)) continue;
    const std::string c = unicode::to_utf8(cp);
    if (in_text > 0) text += " ";
    text += "a" + c + "b " + c + c + " 1" + c + "2 '" + c + "s\n" + c;
    if (++in_text == 64) {
      texts.push_back(text);
      text.clear();
      in_text = 0;
    }
  }
  if (!text.empty()) texts.push_back(text);
  return texts;
}

struct VocabCase {
  const char* name;    // vocab-NAME.gguf
  const char* folder;  // under the fixtures folder
  bool sweep;          // gets the code point sweep: one vocabulary per word splitter
  const char* description;
};

const VocabCase kVocabs[] = {
    {"llama3", "gguf", true, "GGUF: BPE (llama-bpe)"},
    {"qwen3", "gguf", false, "GGUF: BPE (qwen2)"},
    {"gpt2", "gguf", true, "GGUF: BPE (gpt-2)"},
    {"gemma3", "gguf", false, "GGUF: SentencePiece (llama)"},
    {"mistral", "gguf", false, "GGUF: SentencePiece (llama)"},
    {"gpt2-smollm", "gguf_tokenizer", false, "GGUF: BPE (smollm)"},
    {"gpt2-default", "gguf_tokenizer", true, "GGUF: BPE (default)"},
    {"gpt2-falcon", "gguf_tokenizer", false, "GGUF: BPE (falcon)"},
    {"gpt2-starcoder", "gguf_tokenizer", false, "GGUF: BPE (starcoder)"},
    {"gpt2-llama-bpe", "gguf_tokenizer", false, "GGUF: BPE (llama-bpe)"},
    {"gpt2-stablelm2", "gguf_tokenizer", false, "GGUF: BPE (stablelm2)"},
    {"stories260K", "gguf_tokenizer", false, "GGUF: SentencePiece (llama)"},
    {"phi3", "gguf_tokenizer", false, "GGUF: SentencePiece (llama)"},
};

void PrintTo(const VocabCase& v, std::ostream* os) {
  *os << "vocab-" << v.name;
}

class LlamaCppIds : public ::testing::TestWithParam<VocabCase> {};

std::string shown(std::string_view text) {
  std::string s = unicode::printable_utf8(text.substr(0, 60));
  return std::string("\"") + s + (text.size() > 60 ? "…" : "") + "\"";
}

std::string ids_text(const std::vector<int>& ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size() && i < 40; ++i)
    s += std::string(i ? " " : "") + std::to_string(ids[i]);
  return s + (ids.size() > 40 ? " …" : "");
}

// decode() against the offsets: a token whose bytes are whole characters stands for exactly the
// text its span covers (SentencePiece's "▁" put in front of the text is the first token's
// leading space, at an empty span at the start).
void expect_spans_match_pieces(const Tokenizer& tok, const std::string& text, const Tokens& tokens,
                               const std::string& vocab) {
  int previous_start = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.special) {
      EXPECT_EQ(t.start, -1);
      continue;
    }
    ASSERT_GE(t.start, previous_start) << vocab << " " << shown(text) << " token " << i;
    ASSERT_LE(t.start, t.end);
    ASSERT_LE(t.end, static_cast<int>(text.size()));
    previous_start = t.start;
    std::string piece = tok.decode(t.id);
    if (!unicode::is_valid_utf8(piece)) continue;  // part of a character: its whole span
    const std::string covered =
        text.substr(static_cast<std::size_t>(t.start), static_cast<std::size_t>(t.end - t.start));
    // A "▁" typed in the text is a space to SentencePiece (decode gives " ").
    if (tok.piece_encoding() == PieceEncoding::kSentencePiece &&
        covered.find("\xe2\x96\x81") != std::string::npos) {
      continue;
    }
    if (piece != covered && tok.piece_encoding() == PieceEncoding::kSentencePiece &&
        !piece.empty() && piece[0] == ' ' && piece.substr(1) == covered) {
      continue;  // the space SentencePiece prepends
    }
    EXPECT_EQ(piece, covered) << vocab << " " << shown(text) << " token " << i << " id " << t.id;
  }
}

TEST_P(LlamaCppIds, SameIdsAsLlamaCpp) {
  const VocabCase& v = GetParam();
  const fs::path gguf = kFixtures / v.folder / (std::string("vocab-") + v.name + ".gguf");
  ASSERT_TRUE(fs::exists(gguf)) << gguf
                                << " is missing (the gguf_fixtures and "
                                   "llama_cpp_tokenizer_vocabs targets write it)";
  const auto tok = open_vocab(gguf);
  EXPECT_EQ(tok->description(), v.description);
  std::vector<std::string> texts = shared_texts();
  const std::vector<std::string> random = random_texts(400, 26);
  texts.insert(texts.end(), random.begin(), random.end());
#if !defined(__SANITIZE_ADDRESS__)  // ~4 MB of text per vocabulary: minutes under ASan
  if (v.sweep) {
    const std::vector<std::string> sweep = code_point_sweep();
    texts.insert(texts.end(), sweep.begin(), sweep.end());
  }
#endif
  const auto reference = llama_cpp_ids(gguf, texts);
  ASSERT_EQ(reference.size(), texts.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const Tokens tokens = tok->encode(texts[i], true);
    const std::vector<int> ids = token_ids(tokens);
    if (ids != reference[i] && ++mismatches <= 5) {
      ADD_FAILURE() << v.name << " text " << i << " " << shown(texts[i])
                    << "\n  llama.cpp: " << ids_text(reference[i])
                    << "\n  attnscope: " << ids_text(ids);
    }
    expect_spans_match_pieces(*tok, texts[i], tokens, v.name);
  }
  EXPECT_EQ(mismatches, 0) << "of " << texts.size() << " texts";
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, LlamaCppIds, ::testing::ValuesIn(kVocabs),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// Invalid UTF-8 cannot reach llama.cpp through JavaScript strings. llama.cpp's BPE decodes the
// text into code points first, each byte that begins no sequence becoming U+FFFD
// (unicode_cpts_from_utf8): so its ids for the raw bytes are its ids for the text with those bytes
// replaced, which node can pass. The replaced texts are written out here by hand.
TEST(LlamaCppInvalidUtf8, BytePairVocabulariesTokenizeInvalidBytesAsReplacementCharacters) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\xff", "\xef\xbf\xbd"},
      {"ab\x80"
       "cd",
       "ab\xef\xbf\xbd"
       "cd"},
      {"caf\xc3", "caf\xef\xbf\xbd"},
      {"\xe6\x97 x", "\xef\xbf\xbd\xef\xbf\xbd x"},
      {"emoji \xf0\x9f\x98 end", "emoji \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end"},
      {"\xfe\xfe 12\xc0", "\xef\xbf\xbd\xef\xbf\xbd 12\xef\xbf\xbd"},
      {"bank\xa0\xa0of", "bank\xef\xbf\xbd\xef\xbf\xbdof"},
  };
  std::vector<std::string> replaced;
  for (const auto& c : cases) replaced.push_back(c.second);
  for (const char* name : {"llama3", "qwen3", "gpt2"}) {
    const fs::path gguf = kFixtures / "gguf" / (std::string("vocab-") + name + ".gguf");
    const auto tok = open_vocab(gguf);
    const auto reference = llama_cpp_ids(gguf, replaced);
    ASSERT_EQ(reference.size(), cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Tokens tokens = tok->encode(cases[i].first, true);
      EXPECT_EQ(token_ids(tokens), reference[i]) << name << " " << shown(cases[i].first);
      // Every byte of the text is inside some token's span.
      std::vector<bool> covered(cases[i].first.size(), false);
      for (const Token& t : tokens) {
        for (int b = std::max(0, t.start); b < t.end; ++b)
          covered[static_cast<std::size_t>(b)] = true;
      }
      for (std::size_t b = 0; b < covered.size(); ++b)
        EXPECT_TRUE(covered[b]) << name << " byte " << b;
    }
  }
}

// ---- the pieces ---------------------------------------------------------------------------------

std::vector<std::string> words_of(std::string_view text, std::vector<llama_cpp::SplitKind> kinds) {
  const auto cps = llama_cpp::decode_like_llama_cpp(text);
  std::vector<llama_cpp::Word> words = {{0, cps.size()}};
  for (const auto kind : kinds) words = llama_cpp::split_words(cps, words, kind);
  std::vector<std::string> out;
  for (const auto& w : words) {
    const std::size_t begin = static_cast<std::size_t>(cps[w.begin].start);
    const std::size_t end = static_cast<std::size_t>(cps[w.end - 1].start + cps[w.end - 1].length);
    out.emplace_back(text.substr(begin, end - begin));
  }
  return out;
}

using V = std::vector<std::string>;
using llama_cpp::SplitKind;

TEST(LlamaCppSplit, Gpt2PatternAsLlamaCppMatchesIt) {
  EXPECT_EQ(words_of("Hello world's  123 ok", {SplitKind::kGpt2}),
            (V{"Hello", " world", "'s", " ", " 123", " ok"}));
  // Case-sensitive contractions; a space before punctuation joins it; trailing spaces stay whole.
  EXPECT_EQ(words_of("I'M here!! ", {SplitKind::kGpt2}), (V{"I", "'", "M", " here", "!!", " "}));
  EXPECT_EQ(words_of("a\n\n b", {SplitKind::kGpt2}), (V{"a", "\n\n", " b"}));
}

TEST(LlamaCppSplit, Llama3AndQwen2) {
  EXPECT_EQ(words_of("I'M 12345 x\n\n  y", {SplitKind::kLlama3}),
            (V{"I", "'M", " ", "123", "45", " x", "\n\n", " ", " y"}));
  EXPECT_EQ(words_of("I'M 12345", {SplitKind::kQwen2}),
            (V{"I", "'M", " ", "1", "2", "3", "4", "5"}));
  // A punctuation run takes the line breaks after it.
  EXPECT_EQ(words_of("ok...\n\nnext", {SplitKind::kLlama3}), (V{"ok", "...\n\n", "next"}));
  // Any one non-letter, non-number (not \r\n) joins the letters after it.
  EXPECT_EQ(words_of("$abc\tdef", {SplitKind::kLlama3}), (V{"$abc", "\tdef"}));
}

TEST(LlamaCppSplit, CollapsedRegexClasses) {
  EXPECT_EQ(words_of("ab12\xd9\xa3x", {SplitKind::kNumber}),  // U+0663 ARABIC-INDIC THREE is \p{N}
            (V{"ab", "1", "2", "\xd9\xa3", "x"}));
  EXPECT_EQ(words_of("a...$$b`c", {SplitKind::kPunctuationRun}), (V{"a", "...$$", "b`c"}));
  EXPECT_EQ(words_of("a`b", {SplitKind::kPunctuationRunBq}), (V{"a", "`", "b"}));
  EXPECT_EQ(words_of("1234567", {SplitKind::kThreeAsciiDigits}), (V{"123", "456", "7"}));
}

TEST(LlamaCppSplit, DecodesUtf8AsLlamaCppDoes) {
  // Overlong forms and encoded surrogates are taken as they are; a stray continuation byte, a
  // truncated sequence, 0xF8.. and anything above U+10FFFF are U+FFFD for their first byte.
  struct Case {
    std::string text;
    std::vector<char32_t> values;
  };
  const std::vector<Case> cases = {
      {"\xc0\x80", {0}},
      {"\xed\xa0\x80", {0xD800}},
      {"\x80"
       "a",
       {0xFFFD, 'a'}},
      {"\xe6\x97", {0xFFFD, 0xFFFD}},
      {"\xf8\x88\x80\x80\x80", {0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}},
      {"\xf4\x90\x80\x80", {0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}},
      {"\xf0\x9f\x98\x80", {0x1F600}},
  };
  for (const Case& c : cases) {
    std::vector<char32_t> values;
    for (const auto& cp : llama_cpp::decode_like_llama_cpp(c.text)) values.push_back(cp.value);
    EXPECT_EQ(values, c.values) << shown(c.text);
  }
}

TEST(LlamaCppSplit, CategoriesAreLlamaCppsUnicode15_1Table) {
  using namespace llama_cpp;
  EXPECT_EQ(code_point_flags(U'a'), kLetter);
  EXPECT_EQ(code_point_flags(0x2EBF0) & kCategoryMask, kLetter);  // CJK Extension I (15.1)
  EXPECT_EQ(code_point_flags(0x2FFC) & kCategoryMask, kSymbol);   // new in 15.1
  EXPECT_EQ(code_point_flags(0x85), kControl | kWhitespace);
  EXPECT_EQ(code_point_flags(0xA0), kSeparator | kWhitespace);
  EXPECT_EQ(code_point_flags(0xFEFF), kControl);
  EXPECT_EQ(code_point_flags(0x0378), kUndefined);  // unassigned
  EXPECT_EQ(code_point_flags(0x110000), kUndefined);
}

// A small vocabulary by hand.
LlamaCppVocab spm_vocab() {
  LlamaCppVocab v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>",           "</s>",           "\xe2\x96\x81", "h",
              "i",     "\xe2\x96\x81h", "\xe2\x96\x81hi", "<sep>",        "a"};
  v.scores = {0, 0, 0, -1, -2, -2, -3, -1, 0, -2};
  v.token_types = {2, 3, 3, 1, 1, 1, 1, 1, 4, 1};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    v.tokens.emplace_back(name);
    v.scores.push_back(0);
    v.token_types.push_back(6);
  }
  return v;
}

TEST(LlamaCppTokenizer, SentencePieceOffsetsBytesAndSpecials) {
  const auto tok = make_llama_cpp_tokenizer(spm_vocab(), "test");
  EXPECT_EQ(tok->description(), "GGUF: SentencePiece (llama)");
  EXPECT_EQ(tok->piece_encoding(), PieceEncoding::kSentencePiece);
  // BOS, then "▁hi" spanning "hi" from 0 (the prepended ▁ belongs to it).
  Tokens t = tok->encode("hi", true);
  ASSERT_EQ(token_ids(t), (std::vector<int>{1, 7}));
  EXPECT_TRUE(t[0].special);
  EXPECT_EQ(t[0].start, -1);
  EXPECT_EQ(t[1].start, 0);
  EXPECT_EQ(t[1].end, 2);
  // "é" has no piece: its two bytes, each with the character's span; a user-defined token typed
  // in the text is cut out first and the text after it gets the ▁ again.
  t = tok->encode("h\xc3\xa9<sep>a", false);
  ASSERT_EQ(token_ids(t), (std::vector<int>{6, 10 + 0xC3, 10 + 0xA9, 8, 3, 9}));
  EXPECT_EQ(t[1].start, 1);
  EXPECT_EQ(t[1].end, 3);
  EXPECT_EQ(t[2].start, 1);
  EXPECT_EQ(t[2].end, 3);
  EXPECT_EQ(t[3].start, 3);
  EXPECT_EQ(t[3].end, 8);
  EXPECT_FALSE(t[3].special);
  EXPECT_EQ(t[4].start, 8);  // the ▁ in front of "a": an empty span where the text resumes
  EXPECT_EQ(t[4].end, 8);
  EXPECT_EQ(tok->decode(7), " hi");
  EXPECT_EQ(tok->decode(10 + 0xC3), "\xc3");
  EXPECT_EQ(tok->decode(1), "<s>");
  // llama.cpp's SentencePiece splits by the lead byte: a stray lead byte swallows what follows.
  t = tok->encode(
      "\xe8"
      "ha",
      false);
  EXPECT_EQ(token_ids(t), (std::vector<int>{3, 10 + 0xE8, 10 + 'h', 10 + 'a'}));
}

TEST(LlamaCppTokenizer, AddSpacePrefixOffAndBosFromMetadata) {
  LlamaCppVocab v = spm_vocab();
  v.add_space_prefix = 0;
  v.add_bos = 0;
  v.add_eos = 1;
  const auto tok = make_llama_cpp_tokenizer(v, "test");
  const Tokens t = tok->encode("hi", true);
  EXPECT_EQ(token_ids(t), (std::vector<int>{4, 5, 2}));
  EXPECT_TRUE(t[2].special);
  EXPECT_EQ(token_ids(tok->encode("hi", false)), (std::vector<int>{4, 5}));
}

LlamaCppVocab bpe_vocab(const std::string& pre) {
  LlamaCppVocab v;
  v.model = "gpt2";
  v.pre = pre;
  // Byte-level pieces: "Ġ" is the space.
  v.tokens = {"a",
              "b",
              "\xc4\xa0",
              "ab",
              "\xc4\xa0"
              "ab",
              "<|eot|>",
              "\xc3\xa8",
              "\xc2\xbe",
              "\xc2\xa2",
              "1",
              "2"};
  v.merges = {"a b", "\xc4\xa0 ab"};
  v.token_types = {1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1};
  v.bos_id = 5;
  return v;
}

TEST(LlamaCppTokenizer, BytePairPiecesOffsetsAndDefaults) {
  auto tok = make_llama_cpp_tokenizer(bpe_vocab("gpt-2"), "test");
  EXPECT_EQ(tok->description(), "GGUF: BPE (gpt-2)");
  EXPECT_EQ(tok->piece_encoding(), PieceEncoding::kByteLevel);
  // gpt-2 adds no BOS; "<|eot|>" typed is a control token with its offsets.
  Tokens t = tok->encode("ab ab<|eot|>\xe8\xbe\xa2", true);
  ASSERT_EQ(token_ids(t), (std::vector<int>{3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(t[1].start, 2);
  EXPECT_EQ(t[1].end, 5);
  EXPECT_EQ(t[2].start, 5);
  EXPECT_EQ(t[2].end, 12);
  EXPECT_FALSE(t[2].special);
  for (int i = 3; i < 6; ++i) {  // the three bytes of 边, each with its span
    EXPECT_EQ(t[static_cast<std::size_t>(i)].start, 12);
    EXPECT_EQ(t[static_cast<std::size_t>(i)].end, 15);
  }
  EXPECT_EQ(tok->decode(4), " ab");
  EXPECT_EQ(tok->decode(6), "\xe8");
  EXPECT_EQ(tok->decode(5), "<|eot|>");
  // llama-bpe puts BOS in front.
  tok = make_llama_cpp_tokenizer(bpe_vocab("llama-bpe"), "test");
  EXPECT_EQ(token_ids(tok->encode("ab", true)), (std::vector<int>{5, 3}));
  EXPECT_EQ(tok->encode("ab", true)[0].start, -1);
}

TEST(LlamaCppTokenizer, RefusesWhatLlamaCppRefuses) {
  auto message = [](LlamaCppVocab v) {
    try {
      make_llama_cpp_tokenizer(std::move(v), "file.gguf");
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(bpe_vocab("no-such-pre")).find("file.gguf: tokenizer.ggml.pre 'no-such-pre'"),
            std::string::npos);
  LlamaCppVocab v = bpe_vocab("gpt-2");
  v.model = "t5";
  EXPECT_NE(message(v).find("tokenizer.ggml.model 't5'"), std::string::npos);
  v = spm_vocab();
  v.scores.resize(3);
  EXPECT_NE(message(v).find("tokenizer.ggml.scores has 3 entries"), std::string::npos);
}

TEST(LlamaCppTokenizer, OddTextNeverThrowsAndHugeTextIsQuick) {
  const auto spm = make_llama_cpp_tokenizer(spm_vocab(), "test");
  const auto bpe = make_llama_cpp_tokenizer(bpe_vocab("llama-bpe"), "test");
  const std::string odd[] = {std::string("a\0b", 3), "\xff\xfe", "\xc0\x80",       "\xed\xa0\x80",
                             "\xf7\xbf\xbf\xbf",     "",         "<|eot|><|eot|>", "<sep>"};
  for (const std::string& text : odd) {
    EXPECT_NO_THROW(spm->encode(text, true)) << shown(text);
    EXPECT_NO_THROW(bpe->encode(text, true)) << shown(text);
  }
  EXPECT_TRUE(spm->encode("", false).empty());
  std::string huge;
  for (int i = 0; huge.size() < (1u << 20); ++i) huge += (i % 7 ? "ab " : "hi\xe8<sep>  \n");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(spm->encode(huge, true).empty());
  EXPECT_FALSE(bpe->encode(huge, true).empty());
  EXPECT_FALSE(bpe->encode(std::string(1 << 20, 'a'), true).empty());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
}

// ---- read_gguf_vocab
// ------------------------------------------------------------------------------

// A GGUF v3 file with metadata only, written byte by byte (ggml's docs/gguf.md).
class GgufBytes {
 public:
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    bytes_ += s;
  }
  void key(const std::string& k, std::uint32_t type) {
    str(k);
    u32(type);
    ++count_;
  }
  void string_kv(const std::string& k, const std::string& v) {
    key(k, 8);
    str(v);
  }
  void strings_kv(const std::string& k, const std::vector<std::string>& v) {
    key(k, 9);
    u32(8);
    u64(v.size());
    for (const auto& s : v) str(s);
  }
  void u32_kv(const std::string& k, std::uint32_t v) {
    key(k, 4);
    u32(v);
  }
  void f32s_kv(const std::string& k, const std::vector<float>& v) {
    key(k, 9);
    u32(6);
    u64(v.size());
    for (float f : v) raw(&f, 4);
  }
  fs::path write(const std::string& name) const {
    std::string out = "GGUF";
    auto put = [&](const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); };
    const std::uint32_t version = 3;
    const std::uint64_t tensors = 0;
    put(&version, 4);
    put(&tensors, 8);
    put(&count_, 8);
    out += bytes_;
    while (out.size() % 32) out.push_back('\0');
    const fs::path path = fs::temp_directory_path() /
                          ("attnscope_vocab_" + std::to_string(::getpid()) + "_" + name + ".gguf");
    std::ofstream(path, std::ios::binary) << out;
    return path;
  }

 private:
  void raw(const void* p, std::size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
  std::uint64_t count_ = 0;
};

TEST(GgufVocab, ReadsTheTokenizerKeys) {
  GgufBytes g;
  g.string_kv("general.architecture", "llama");
  g.string_kv("tokenizer.ggml.model", "gpt2");
  g.string_kv("tokenizer.ggml.pre", "qwen2");
  g.strings_kv("tokenizer.ggml.tokens", {"a", "b", "ab"});
  g.strings_kv("tokenizer.ggml.merges", {"a b"});
  g.u32_kv("tokenizer.ggml.eos_token_id", 2);
  g.u32_kv("tokenizer.ggml.bos_token_id", 7);  // beyond the vocabulary: the default applies
  const fs::path path = g.write("good");
  const LlamaCppVocab v = read_gguf_vocab(*GgufFile::open(path));
  fs::remove(path);
  EXPECT_EQ(v.model, "gpt2");
  EXPECT_EQ(v.pre, "qwen2");
  EXPECT_EQ(v.tokens, (std::vector<std::string>{"a", "b", "ab"}));
  EXPECT_EQ(v.merges, (std::vector<std::string>{"a b"}));
  EXPECT_EQ(v.eos_id, 2);
  EXPECT_EQ(v.bos_id, -1);
  EXPECT_EQ(v.add_bos, -1);
  EXPECT_TRUE(v.scores.empty());
}

TEST(GgufVocab, OneLinePerProblem) {
  GgufBytes g;
  g.string_kv("general.architecture", "llama");
  g.string_kv("tokenizer.ggml.model", "llama");
  g.strings_kv("tokenizer.ggml.tokens", {"a", "b", "c"});
  g.f32s_kv("tokenizer.ggml.scores", {0.5f});
  g.string_kv("tokenizer.ggml.token_type", "normal");
  g.u32_kv("tokenizer.ggml.add_bos_token", 1);
  const fs::path path = g.write("bad");
  std::string message;
  try {
    read_gguf_vocab(*GgufFile::open(path));
  } catch (const ModelError& e) {
    message = e.what();
  }
  fs::remove(path);
  EXPECT_NE(message.find(path.string() + ": tokenizer.ggml.scores has 1 entries for 3 tokens"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(path.string() + ": tokenizer.ggml.token_type is string, not an array"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(path.string() + ": tokenizer.ggml.add_bos_token is uint32, not a bool"),
            std::string::npos)
      << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 2) << message;
}

}  // namespace
}  // namespace attnscope
