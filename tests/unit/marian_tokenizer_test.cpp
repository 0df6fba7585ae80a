// The Marian tokenizer (source.spm / target.spm + vocab.json, as Hugging Face's
// MarianTokenizer gives them) against Debian's python3-sentencepiece:
// tests/tools/marian_reference.py follows tokenization_marian.py over
// SentencePieceProcessor on the same files. The files are the ones the fixtures
// get (tools/make_fixture_models/spm_writer.cpp, from the Unigram
// tokenizer.json that tests/tools/make_unigram_tokenizers.py builds out of
// Mistral's pieces). Also: hostile .spm files, one ModelError line each, and
// the folder through load_tokenizer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/text/marian_tokenizer.h"
#include "core/text/sentencepiece_file.h"
#include "core/text/tokenizer.h"
#include "core/util/error.h"
#include "tests/tools/tokenizer_check.h"
#include "tools/make_fixture_models/spm_writer.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

const fs::path& temp_dir() {
  static const fs::path dir =
      fs::temp_directory_path() / ("attnscope_marian_" + std::to_string(::getpid()));
  return dir;
}

struct Cleanup : ::testing::Environment {
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(temp_dir(), ignored);
  }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new Cleanup);

// The Unigram tokenizer.json files of make_unigram_tokenizers.py, made once
// (about a second).
const fs::path& unigram_dir() {
  static const fs::path dir = [] {
    const fs::path out = temp_dir() / "unigram";
    const std::string command = "/usr/bin/python3 '" +
                                (testing::kToolsDir / "make_unigram_tokenizers.py").string() +
                                "' '" + testing::kNpmData.string() + "' '" + out.string() + "'";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return out;
  }();
  return dir;
}

// A Marian folder as the fixtures write it (with two language codes, as a
// multilingual one).
fs::path marian_folder(const std::string& name, fixture::MarianTokenizerOptions options) {
  const fs::path folder = temp_dir() / name;
  options.unigram_tokenizer_json = unigram_dir() / "t5_like" / "tokenizer.json";
  fixture::write_marian_tokenizer_files(folder, options);
  return folder;
}
const fs::path& default_folder() {
  static const fs::path folder = [] {
    fixture::MarianTokenizerOptions options;
    options.language_codes = {">>de<<", ">>fr<<"};
    return marian_folder("marian", options);
  }();
  return folder;
}

std::string to_hex(std::string_view bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 15];
  }
  return out;
}
std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

struct Reference {
  std::vector<std::string> pieces;
  std::vector<int> ids;  // with </s>
};

std::vector<Reference> python_reference(const fs::path& folder, const std::string& side,
                                        const std::vector<std::string>& texts) {
  fs::create_directories(temp_dir());
  const fs::path in = temp_dir() / ("in_" + side + ".json");
  const fs::path out = temp_dir() / ("out_" + side + ".json");
  std::vector<std::string> hex;
  for (const std::string& t : texts) hex.push_back(to_hex(t));
  std::ofstream(in) << nlohmann::json(hex).dump();
  const std::string command =
      "/usr/bin/python3 '" + (testing::kToolsDir / "marian_reference.py").string() + "' '" +
      folder.string() + "' " + side + " '" + in.string() + "' '" + out.string() + "'";
  std::vector<Reference> result;
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << "the reference failed (is python3-sentencepiece installed? "
                          "scripts/setup.sh): "
                       << command;
  if (status != 0) return result;
  std::ifstream stream(out);
  for (const nlohmann::json& item : nlohmann::json::parse(stream)) {
    Reference r;
    for (const nlohmann::json& p : item.at("pieces")) r.pieces.push_back(from_hex(p));
    r.ids = item.at("ids").get<std::vector<int>>();
    result.push_back(std::move(r));
  }
  return result;
}

// What the charsmap rewrites, what the vocabulary lacks, white space and
// language codes.
std::vector<std::string> texts() {
  std::vector<std::string> inputs = {
      "",
      " ",
      "   \t\n ",
      "Hello world",
      "  Hello   world  ",
      "I am a small frog.",
      "Tom asked his teacher for advice.",
      "Ich bin ein kleiner Frosch. Grüße aus München, Straße, Äpfel und Öl.",
      "accents: café naïve Ångström, decomposed cafe\u0301 nai\u0308ve "
      "A\u030angstro\u0308m",
      "ligatures ﬁne ﬂow eﬀort oﬃce, ™ … ½ ① ² Ⅻ ㎏ µ Ω Å",
      "full-width ＨＥＬＬＯ ｗｏｒｌｄ！ １２３",
      "zero\u200bwidth soft\u00adhyphen \ufeffbom \u200b\u200b",
      "\u200bstarts with a removed character",
      "line one\nline two\r\n\tthree\u00a0four\u3000five\u2003six",
      "ﬁ\u0301 e\u0301\u0302 \u1100\u1161 ᄀ가 \r\n\r\n",
      "CJK 中文字符 日本語 한국어, Arabic مرحبا, Devanagari नमस्ते",
      "emoji 🤗 👍🏽 👨‍👩‍👧 🇫🇷, symbols ∑ € © ß £ "
      "¥",
      "unknown run €€€ß£¥ and €5",
      ">>de<< Hello world",
      ">>fr<<Bonjour",
      ">>xx<< unknown code",
      ">>de<<",
      " >>de<< not at the start",
      ">> no end",
      ">>de<< a </s> >>fr<< b",
      "a</s>b <unk> c<pad>d </s></s>",
      "<s> <mask> <0x41> ▁ ▁▁a",
      "1234567890 3.14159 1,000,000 2023-11-29",
      "def f(x):\n    return x**2  # comment",
  };
  std::string long_text;
  for (int i = 0; i < 100; ++i)
    long_text += "Ｔｈｅ quick brown ﬁx café\u200b ™ 中文 🤗 ";
  inputs.push_back(long_text);
  std::vector<std::string> alphabet =
      testing::alphabet_with({"</s>", "<unk>", "<pad>", ">>de<<", ">>fr<<", ">>", "<<"});
  for (const char* s : {"Ｈ",      "ｅ",      "ﬁ",
                        "ﬀ",       "\u00a0",  "\u3000",
                        "\u200b",  "\u00ad",  "\ufeff",
                        "\r\n",    "\r",      "\t",
                        "\n",      "e\u0301", "a\u0308",
                        "A\u030a", "n\u0303", "ﬁ\u0301",
                        "™",       "…",       "½",
                        "①",       "Ⅻ",       "㎏",
                        "²",       "µ",       "Å",
                        "Ω",       "€",       "ß",
                        "🤗",    "👍",       "\u1100\u1161",
                        "가",      "  ",      "   ",
                        "ä",       "ö",       "ü",
                        "Straße",  "und",     "der",
                        "die",     "Haus",    "the",
                        "and",     "ing",     "\u0301",
                        "\u200d"}) {
    alphabet.push_back(s);
  }
  for (const std::string& s : testing::random_texts(alphabet, 300, 20, 20261203u)) {
    inputs.push_back(s);
  }
  for (char32_t cp = 0x20; cp <= 0x2FFFF; cp += 307) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string text = " ";
    text += testing::between_letters(cp);
    inputs.push_back(text);
  }
  return inputs;
}

// Invalid UTF-8: SentencePiece makes each malformed byte a U+FFFD.
std::vector<std::string> invalid_utf8_texts() {
  return {"ab\xff\xfe c",           "caf\xc3 ﬁ\x80",          "\xe2\x82 ＡＢ \xf0\x9f\xa4",
          "\xed\xa0\x80 surrogate", "\xc0\xaf overlong",      ">>de<<\xff",
          "\xff</s>\xfe",           "\xf4\x90\x80\x80 beyond"};
}

int compare(const Tokenizer& tokenizer, const fs::path& folder, const std::string& side,
            const std::vector<std::string>& inputs) {
  const std::vector<Reference> reference = python_reference(folder, side, inputs);
  if (reference.size() != inputs.size()) {
    ADD_FAILURE() << "the reference gave " << reference.size() << " answers for " << inputs.size()
                  << " texts";
    return -1;
  }
  int mismatches = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tokens with = tokenizer.encode(inputs[i], true);
    const Tokens without = tokenizer.encode(inputs[i], false);
    std::vector<int> ids = token_ids(with);
    std::vector<std::string> pieces = testing::pieces_of(without);
    const bool same = ids == reference[i].ids && pieces == reference[i].pieces &&
                      token_ids(without).size() + 1 == ids.size();
    if (!same && ++mismatches <= 6) {
      ADD_FAILURE() << side << " text \"" << inputs[i]
                    << "\"\n  pieces: " << ::testing::PrintToString(pieces)
                    << "\n  python: " << ::testing::PrintToString(reference[i].pieces)
                    << "\n  ids:    " << ::testing::PrintToString(ids)
                    << "\n  python: " << ::testing::PrintToString(reference[i].ids);
    }
    // Offsets: inside the text, in order; the appended </s> has none.
    int last = 0;
    for (std::size_t k = 0; k + 1 < with.size(); ++k) {
      EXPECT_LE(last, with[k].start) << inputs[i];
      EXPECT_LE(with[k].start, with[k].end) << inputs[i];
      EXPECT_LE(with[k].end, static_cast<int>(inputs[i].size())) << inputs[i];
      EXPECT_FALSE(with[k].special);
      last = with[k].start;
    }
    EXPECT_TRUE(with.back().special && with.back().start == -1 && with.back().text == "</s>");
  }
  return mismatches;
}

TEST(MarianTokenizer, SourceMatchesSentencePiece) {
  MarianTokenizers t;
  ASSERT_NO_THROW(t = load_marian_tokenizers(default_folder()));
  const std::vector<std::string> inputs = texts();
  ASSERT_GT(inputs.size(), 500u);
  EXPECT_EQ(compare(*t.source, default_folder(), "source", inputs), 0)
      << "of " << inputs.size() << " texts";
}

TEST(MarianTokenizer, TargetMatchesSentencePiece) {
  MarianTokenizers t;
  ASSERT_NO_THROW(t = load_marian_tokenizers(default_folder()));
  const std::vector<std::string> inputs = texts();
  EXPECT_EQ(compare(*t.target, default_folder(), "target", inputs), 0)
      << "of " << inputs.size() << " texts";
  // The two sides differ (their .spm files have different pieces).
  EXPECT_NE(token_ids(t.source->encode("Ich bin ein kleiner Frosch, the quick brown fox", true)),
            token_ids(t.target->encode("Ich bin ein kleiner Frosch, the quick brown fox", true)));
}

TEST(MarianTokenizer, InvalidUtf8MatchesSentencePiece) {
  MarianTokenizers t;
  ASSERT_NO_THROW(t = load_marian_tokenizers(default_folder()));
  EXPECT_EQ(compare(*t.source, default_folder(), "source", invalid_utf8_texts()), 0);
}

TEST(MarianTokenizer, OffsetsLanguageCodesAndSpecials) {
  const MarianTokenizers t = load_marian_tokenizers(default_folder());
  const std::string text = ">>de<< Hello  world</s>";
  const Tokens tokens = t.source->encode(text, true);
  ASSERT_GE(tokens.size(), 5u);
  EXPECT_EQ(tokens[0].text, ">>de<<");
  EXPECT_EQ(tokens[0].id, t.source->token_to_id(">>de<<"));
  EXPECT_EQ(tokens[0].start, 0);
  EXPECT_EQ(tokens[0].end, 6);
  // Every piece's offsets cover the text it came from ("▁" stands for the space
  // before it).
  for (std::size_t k = 1; k + 2 < tokens.size(); ++k) {
    std::string piece = tokens[k].text;
    std::string covered = text.substr(static_cast<std::size_t>(tokens[k].start),
                                      static_cast<std::size_t>(tokens[k].end - tokens[k].start));
    if (piece.starts_with("\u2581")) piece = piece.substr(3);
    EXPECT_EQ(piece, covered.substr(covered.size() - piece.size())) << k;
  }
  const Token& typed = tokens[tokens.size() - 2];
  EXPECT_EQ(typed.text, "</s>");
  EXPECT_EQ(typed.start, static_cast<int>(text.size()) - 4);
  EXPECT_FALSE(typed.special);
  EXPECT_TRUE(tokens.back().special);
  EXPECT_EQ(tokens.back().id, 0);  // </s> is 0 in Marian's vocab.json
  EXPECT_EQ(t.source->eos_id(), 0);
  EXPECT_EQ(t.source->bos_id(), -1);
  // An unknown character: its own text as the piece (as encode(out_type=str)),
  // <unk>'s id.
  const Tokens unknown = t.source->encode("€", false);
  ASSERT_EQ(unknown.size(), 2u);
  EXPECT_EQ(unknown[1].text, "€");
  EXPECT_EQ(unknown[1].id, 1);
  EXPECT_TRUE(unknown[1].unknown);
  EXPECT_EQ(unknown[1].start, 0);
  EXPECT_EQ(unknown[1].end, 3);
  EXPECT_EQ(t.source->piece_encoding(), PieceEncoding::kSentencePiece);
}

TEST(MarianTokenizer, DecodeAndVocabulary) {
  const MarianTokenizers t = load_marian_tokenizers(default_folder());
  const nlohmann::json vocab =
      nlohmann::json::parse(std::ifstream(default_folder() / "vocab.json"));
  EXPECT_EQ(t.target->vocab_size(), static_cast<int>(vocab.size()));
  EXPECT_EQ(t.target->token_to_id("<pad>"), t.target->vocab_size() - 1);
  const int world = t.target->token_to_id("\u2581world");
  ASSERT_GE(world, 0);
  EXPECT_EQ(t.target->decode(world), " world");
  EXPECT_EQ(t.target->id_to_token(world), "\u2581world");
  EXPECT_EQ(t.target->decode(0), "</s>");
  EXPECT_EQ(t.target->decode(t.target->token_to_id(">>fr<<")), ">>fr<<");
  EXPECT_EQ(t.target->id_to_token(-1), "");
  EXPECT_EQ(t.target->id_to_token(t.target->vocab_size()), "");
  // Pieces and decode of every id round-trip through the vocabulary.
  for (const auto& [piece, id] : vocab.items()) {
    EXPECT_EQ(t.target->id_to_token(id.get<int>()), piece);
  }
}

TEST(MarianTokenizer, LoadTokenizerOpensTheFolderAsSource) {
  ASSERT_TRUE(has_tokenizer_files(default_folder()));
  std::shared_ptr<const Tokenizer> tokenizer;
  ASSERT_NO_THROW(tokenizer = load_tokenizer(default_folder()));
  const MarianTokenizers t = load_marian_tokenizers(default_folder());
  const std::string text = ">>de<< Ich bin ein kleiner Frosch.";
  EXPECT_EQ(token_ids(tokenizer->encode(text, true)), token_ids(t.source->encode(text, true)));
  EXPECT_NE(tokenizer->description().find("source.spm"), std::string::npos);
}

TEST(MarianTokenizer, SeparateVocabularies) {
  const fs::path folder = temp_dir() / "separate";
  fs::create_directories(folder);
  for (const char* f : {"source.spm", "target.spm", "vocab.json"}) {
    fs::copy_file(default_folder() / f, folder / f, fs::copy_options::overwrite_existing);
  }
  // The target vocabulary: the same pieces, every id but </s> and <unk> moved
  // up by 7.
  nlohmann::ordered_json target =
      nlohmann::ordered_json::parse(std::ifstream(default_folder() / "vocab.json"));
  for (auto& [piece, id] : target.items()) {
    if (id.get<int>() > 1) id = id.get<int>() + 7;
  }
  std::ofstream(folder / "target_vocab.json") << target.dump();
  std::ofstream(folder / "tokenizer_config.json")
      << R"({"separate_vocabs": true, "source_lang": "en", "target_lang": "de"})";
  const MarianTokenizers t = load_marian_tokenizers(folder);
  const std::string text = "the quick brown fox";
  const std::vector<Reference> reference = python_reference(folder, "target", {text});
  ASSERT_EQ(reference.size(), 1u);
  EXPECT_EQ(token_ids(t.target->encode(text, true)), reference[0].ids);
  EXPECT_GT(reference[0].ids[0], 7);
  fs::remove(folder / "target_vocab.json");
  EXPECT_THROW(load_marian_tokenizers(folder), ModelError);
}

// The pieces and ids of the .spm at `path` alone against SentencePieceProcessor's.
int raw_mismatches(const fs::path& path, const std::vector<std::string>& inputs) {
  const SentencePieceEncoder encoder(read_sentencepiece_model(path), path.string());
  const std::vector<Reference> reference = python_reference(path, "raw", inputs);
  if (reference.size() != inputs.size()) return -1;
  int mismatches = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<std::string> pieces;
    std::vector<int> ids;
    for (const SentencePiecePiece& p : encoder.encode(inputs[i])) {
      pieces.push_back(p.piece);
      ids.push_back(p.id);
    }
    if ((pieces != reference[i].pieces || ids != reference[i].ids) && ++mismatches <= 4) {
      ADD_FAILURE() << "text \"" << inputs[i]
                    << "\"\n  pieces: " << ::testing::PrintToString(pieces)
                    << "\n  python: " << ::testing::PrintToString(reference[i].pieces);
    }
  }
  return mismatches;
}

// A model with byte fallback (as Llama's and Gemma's .model files; Marian's have none): unknown
// characters become their UTF-8 bytes' <0xXX> pieces, as SentencePiece gives them.
TEST(SentencePieceFile, ByteFallbackMatchesSentencePiece) {
  const SentencePieceModelFile source = read_sentencepiece_model(default_folder() / "source.spm");
  fixture::SpmModelSpec spec;
  spec.byte_fallback = true;
  spec.precompiled_charsmap = source.precompiled_charsmap;
  spec.pieces = {{"<unk>", 0.0f, fixture::SpmPieceType::kUnknown},
                 {"<s>", 0.0f, fixture::SpmPieceType::kControl},
                 {"</s>", 0.0f, fixture::SpmPieceType::kControl}};
  static const char* kHex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    spec.pieces.push_back({std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0.0f,
                           fixture::SpmPieceType::kByte});
  }
  for (std::size_t i = 3; i < source.pieces.size() && spec.pieces.size() < 2500; i += 2) {
    spec.pieces.push_back(
        {source.pieces[i].piece, source.pieces[i].score, fixture::SpmPieceType::kNormal});
  }
  const fs::path path = temp_dir() / "byte_fallback.spm";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << fixture::serialize_spm_model(spec);
  std::vector<std::string> inputs = texts();
  for (const std::string& s : invalid_utf8_texts()) inputs.push_back(s);
  EXPECT_EQ(raw_mismatches(path, inputs), 0) << "of " << inputs.size() << " texts";
  // Without all 256 byte pieces the file is refused, as SentencePiece refuses it.
  spec.pieces.erase(spec.pieces.begin() + 3 + 0x41);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << fixture::serialize_spm_model(spec);
  EXPECT_THROW(SentencePieceEncoder(read_sentencepiece_model(path), path.string()), ModelError);
}

// User-defined symbols (SentencePiece's --user_defined_symbols): matched before the charsmap
// rewrites them, and chosen over other segmentations, as SentencePiece does.
TEST(SentencePieceFile, UserDefinedSymbolsMatchSentencePiece) {
  const SentencePieceModelFile source = read_sentencepiece_model(default_folder() / "source.spm");
  fixture::SpmModelSpec spec;
  spec.precompiled_charsmap = source.precompiled_charsmap;
  for (const SentencePieceModelFile::Piece& p : source.pieces) {
    spec.pieces.push_back({p.piece, p.score, static_cast<fixture::SpmPieceType>(p.type)});
  }
  for (const char* symbol : {"<sep>", "\ufb01ne", "Hello World", "xx", "e\u0301t", "<mask>"}) {
    spec.pieces.push_back({symbol, 0.0f, fixture::SpmPieceType::kUserDefined});
  }
  const fs::path path = temp_dir() / "user_defined.spm";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << fixture::serialize_spm_model(spec);
  std::vector<std::string> inputs = {"a<sep>b xx yy xxx xxxxx",
                                     "\ufb01ne fine \ufb01nest",
                                     "Hello World Hello  World",
                                     "cafe\u0301t e\u0301t",
                                     "  <sep>  ",
                                     "<mask><mask> a<mask>"};
  for (const std::string& s : testing::random_texts(
           {"<sep>", "xx", "x", " ", "\ufb01", "ne", "e\u0301", "t", "<mask>", "a"}, 100, 12, 7u)) {
    inputs.push_back(s);
  }
  EXPECT_EQ(raw_mismatches(path, inputs), 0) << "of " << inputs.size() << " texts";
}

// Each malformed file: one ModelError line that names the file.
void expect_refused(const std::string& bytes, const std::string& what, const std::string& needle) {
  const fs::path path = temp_dir() / "hostile.spm";
  fs::create_directories(temp_dir());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  try {
    const SentencePieceModelFile file = read_sentencepiece_model(path);
    SentencePieceEncoder encoder(file, path.string());
    ADD_FAILURE() << what << ": accepted";
  } catch (const ModelError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << what << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << what << ": " << message;
    EXPECT_NE(message.find(needle), std::string::npos) << what << ": " << message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not a ModelError: " << e.what();
  }
}

std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string field(int number, const std::string& bytes) {
  return varint(static_cast<std::uint64_t>(number) << 3 | 2) + varint(bytes.size()) + bytes;
}
std::string piece(const std::string& text, int type = 1) {
  std::string p = field(1, text) + std::string("\x15\0\0\x80\xbf", 5);  // score -1.0
  if (type != 1) p += "\x18" + varint(static_cast<std::uint64_t>(type));
  return field(1, p);
}

TEST(SentencePieceFile, HostileFilesAreRefused) {
  fixture::SpmModelSpec spec;
  spec.pieces = {{"<unk>", 0.0f, fixture::SpmPieceType::kUnknown},
                 {"\u2581a", -1.0f, fixture::SpmPieceType::kNormal},
                 {"a", -2.0f, fixture::SpmPieceType::kNormal}};
  const std::string good = fixture::serialize_spm_model(spec);
  ASSERT_NO_THROW(parse_sentencepiece_model(good, "good"));
  expect_refused("", "empty", "empty");
  expect_refused(good.substr(0, good.size() - 3), "truncated", "remain");
  expect_refused(good.substr(0, 1), "truncated in a key", "varint");
  expect_refused(std::string("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12), "bad varint",
                 "varint");
  expect_refused("\x0a\x7f" + std::string(10, 'x'), "length beyond the file", "127 bytes");
  expect_refused(std::string("\x0a\xff\xff\xff\xff\x0f", 6) + "abc", "huge length", "remain");
  expect_refused(field(3, field(1, "nmt_nfkc")), "no pieces", "no pieces");
  expect_refused(piece("\u2581a"), "no unknown piece", "UNKNOWN");
  expect_refused(piece("<unk>", 2) + piece("x") + piece("x"), "repeated piece", "repeats");
  expect_refused(piece("<unk>", 2) + piece(""), "empty piece", "empty");
  expect_refused(piece("<unk>", 2) + piece("\xff"), "invalid UTF-8 piece", "UTF-8");
  expect_refused(piece("<unk>", 2) + piece("x", 9), "bad type", "type");
  expect_refused(piece("<unk>", 2) + piece(std::string(5000, 'a')), "huge piece", "5000 bytes");
  expect_refused(piece("<unk>", 2) + std::string("\x0b", 1), "group", "wire type");
  expect_refused(piece("<unk>", 2) + "\x08\x01", "pieces as a varint", "wire type");
  expect_refused(piece("<unk>", 2) + field(2, "\x18\x02"), "BPE", "BPE");
  expect_refused(piece("<unk>", 2) + field(3, field(2, std::string("\x10\0\0\0abc", 7))),
                 "bad charsmap", "charsmap");
  // Many tiny pieces: more than the bound, refused before their memory is
  // spent.
  std::string many;
  for (std::size_t i = 0; i <= kSentencePieceMaxPieces; ++i) many.append("\x0a\x00", 2);
  expect_refused(many, "huge count", "more than");
}

TEST(SentencePieceFile, MissingFilesAreNamed) {
  const fs::path folder = temp_dir() / "incomplete";
  fs::create_directories(folder);
  fs::copy_file(default_folder() / "source.spm", folder / "source.spm",
                fs::copy_options::overwrite_existing);
  std::ofstream(folder / "vocab.json") << R"({"</s>": 0, "a": 1})";
  try {
    load_marian_tokenizers(folder);
    ADD_FAILURE() << "accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("target.spm"), std::string::npos) << e.what();
  }
  fs::copy_file(default_folder() / "target.spm", folder / "target.spm",
                fs::copy_options::overwrite_existing);
  try {
    load_marian_tokenizers(folder);
    ADD_FAILURE() << "accepted without <unk>";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("<unk>"), std::string::npos) << e.what();
  }
}

// The fixture folder make_fixture_models writes, when it has been built.
TEST(MarianTokenizer, FixtureFolderMatchesSentencePiece) {
#ifdef ATTNSCOPE_FIXTURES
  const fs::path folder = fs::path(ATTNSCOPE_FIXTURES) / "marian-tiny";
  if (!fs::exists(folder / "source.spm")) GTEST_SKIP() << folder << " is not there";
  const MarianTokenizers t = load_marian_tokenizers(folder);
  const std::vector<std::string> inputs = texts();
  EXPECT_EQ(compare(*t.source, folder, "source", inputs), 0);
  EXPECT_EQ(compare(*t.target, folder, "target", inputs), 0);
#else
  GTEST_SKIP() << "no fixtures folder";
#endif
}

}  // namespace
}  // namespace attnscope
