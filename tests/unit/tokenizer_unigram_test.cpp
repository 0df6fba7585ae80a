// The Unigram model and the Precompiled normalizer on their own: the segmentation rules of
// tokenizers' unigram/model.rs on small vocabularies, SentencePiece charsmaps built here, and
// hostile files (each a clear ModelError at load, never a read out of bounds or a hang).
// tokenizer_unigram_hf_test holds them against Hugging Face's library.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/text/pipeline/models.h"
#include "core/text/pipeline/normalizers.h"
#include "core/util/error.h"

namespace attnscope::text {
namespace {

using nlohmann::json;

json unigram(const std::vector<std::pair<std::string, double>>& vocab, json unk_id,
             bool byte_fallback = false) {
  json list = json::array();
  for (const auto& [piece, score] : vocab) list.push_back({piece, score});
  return {
      {"type", "Unigram"}, {"unk_id", unk_id}, {"vocab", list}, {"byte_fallback", byte_fallback}};
}

struct Piece {
  int id;
  int start;
  int end;
  bool operator==(const Piece&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Piece& p) {
  return os << p.id << "@" << p.start << "-" << p.end;
}

std::vector<Piece> tokenize(const Model& model, std::string_view text) {
  std::vector<ModelToken> tokens;
  model.tokenize(text, tokens);
  std::vector<Piece> pieces;
  for (const ModelToken& t : tokens) pieces.push_back({t.id, t.start, t.end});
  return pieces;
}

std::string load_error(const json& model) {
  try {
    make_model(model, "tokenizer.json", 0);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(Unigram, BestSegmentationAsTokenizersDocumentsIt) {
  // tokenizers' own example: "abcdacdxx" -> abcd, a, cd, xx (the unknown x's fused).
  const auto model = make_model(unigram({{"<unk>", 0},
                                         {"a", 0},
                                         {"b", 0},
                                         {"c", 0},
                                         {"d", 0},
                                         {"cd", 1},
                                         {"ab", 2},
                                         {"abc", 5},
                                         {"abcd", 10}},
                                        0),
                                "t", 0);
  EXPECT_EQ(tokenize(*model, "abcdacdxx"),
            (std::vector<Piece>{{8, 0, 4}, {1, 4, 5}, {5, 5, 7}, {0, 7, 9}}));
  EXPECT_EQ(model->size(), 9);
  EXPECT_EQ(model->unk_id(), 0);
  EXPECT_TRUE(model->unknown_shows_text());
  EXPECT_EQ(model->description(), "Unigram");
}

TEST(Unigram, ScoresDecideAndUnknownsCostTheMinimumLessTen) {
  const std::vector<std::pair<std::string, double>> vocab = {
      {"<unk>", 0}, {"a", -1}, {"b", -1}, {"ab", -3}, {"é", -20}};
  const auto model = make_model(unigram(vocab, 0), "t", 0);
  // a + b (-2) beats ab (-3).
  EXPECT_EQ(tokenize(*model, "ab"), (std::vector<Piece>{{1, 0, 1}, {2, 1, 2}}));
  // "x" costs min (-20) - 10 = -30; two unknowns are one token; é (2 bytes) is known.
  EXPECT_EQ(tokenize(*model, "xxéy"), (std::vector<Piece>{{0, 0, 2}, {4, 2, 4}, {0, 4, 5}}));
  // The unknown path loses to a known piece of any score.
  EXPECT_EQ(tokenize(*model, "é"), (std::vector<Piece>{{4, 0, 2}}));
  // xy + z (-21) against unk(x) + yz (-20 - 10 + 0): the penalty of 10 decides.
  const auto penalty =
      make_model(unigram({{"<unk>", 0}, {"xy", -20}, {"z", -1}, {"yz", 0}, {"y", -1}}, 0), "t", 0);
  EXPECT_EQ(tokenize(*penalty, "xyz"), (std::vector<Piece>{{1, 0, 2}, {2, 2, 3}}));
}

TEST(Unigram, ByteFallbackTokensCoverTheWholeUnknownRun) {
  std::vector<std::pair<std::string, double>> vocab = {{"<unk>", 0}, {"a", -1}};
  for (const char* b : {"<0xE2>", "<0x82>", "<0xAC>", "<0x78>"}) vocab.emplace_back(b, 0);
  const auto model = make_model(unigram(vocab, 0, true), "t", 0);
  // "€x" is one fused run: its four bytes' tokens, each with the run's offsets.
  EXPECT_EQ(tokenize(*model, "a€x"),
            (std::vector<Piece>{{1, 0, 1}, {2, 1, 5}, {3, 1, 5}, {4, 1, 5}, {5, 1, 5}}));
  // A byte without its piece: the whole run is unk.
  EXPECT_EQ(tokenize(*model, "€y"), (std::vector<Piece>{{0, 0, 4}}));
  EXPECT_EQ(model->description(), "Unigram with byte fallback");
}

TEST(Unigram, DuplicatePiecesAreLookedUpAsTheirLastId) {
  const auto model = make_model(unigram({{"<unk>", 0}, {"a", -1}, {"a", -2}}, 0), "t", 0);
  EXPECT_EQ(tokenize(*model, "a"), (std::vector<Piece>{{2, 0, 1}}));
  EXPECT_EQ(model->token_to_id("a"), 2);
  ASSERT_NE(model->id_to_token(1), nullptr);
  EXPECT_EQ(*model->id_to_token(1), "a");
  EXPECT_EQ(model->id_to_token(3), nullptr);
}

TEST(Unigram, WithoutUnkIdAnUnknownCharacterIsAnErrorAsInTokenizers) {
  const auto model = make_model(unigram({{"a", -1}}, nullptr), "t", 0);
  EXPECT_EQ(tokenize(*model, "aa"), (std::vector<Piece>{{0, 0, 1}, {0, 1, 2}}));
  EXPECT_EQ(model->unk_id(), -1);
  EXPECT_THROW(tokenize(*model, "ab"), ModelError);
}

TEST(Unigram, HostileVocabulariesAreClearErrors) {
  EXPECT_NE(load_error(unigram({{"a", 0}}, 1)).find("unk_id 1 is not in the vocabulary of 1"),
            std::string::npos);
  EXPECT_NE(load_error(unigram({}, 0)).find("unk_id 0"), std::string::npos);
  EXPECT_NE(load_error(unigram({{"a", 0}}, 4000000000LL)).find("unk_id"), std::string::npos);
  EXPECT_NE(load_error(unigram({{"a", 0}}, -1)).find("unk_id"), std::string::npos);
  EXPECT_NE(load_error(unigram({{"a", 0}}, "0")).find("unk_id"), std::string::npos);
  for (double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    EXPECT_NE(
        load_error(unigram({{"<unk>", 0}, {"a", bad}}, 0)).find("vocab[1] (\"a\") has the score"),
        std::string::npos)
        << bad;
  }
  json null_score = unigram({{"<unk>", 0}}, 0);
  null_score["vocab"].push_back({"a", nullptr});
  EXPECT_NE(load_error(null_score).find("not a finite number"), std::string::npos);
  json not_pair = unigram({{"<unk>", 0}}, 0);
  not_pair["vocab"].push_back({"a", 1, 2});
  EXPECT_NE(load_error(not_pair).find("vocab[1] must be [\"piece\", score]"), std::string::npos);
  json object_vocab = unigram({}, nullptr);
  object_vocab["vocab"] = {{"a", 1}};
  EXPECT_NE(load_error(object_vocab).find("\"vocab\" must be an array"), std::string::npos);
  EXPECT_NE(load_error(unigram({{"<unk>", 0}, {std::string(5000, 'a'), 0}}, 0))
                .find("a piece of 5000 bytes; at most 1024"),
            std::string::npos);
  EXPECT_NE(load_error(unigram({{"<unk>", 0}, {"a\xff", 0}}, 0)).find("not valid UTF-8"),
            std::string::npos);
  json bad_flag = unigram({{"<unk>", 0}}, 0);
  bad_flag["byte_fallback"] = "yes";
  EXPECT_NE(load_error(bad_flag).find("byte_fallback"), std::string::npos);
}

TEST(Unigram, LongPiecesAndLongTextsStayFast) {
  // Pieces of 1 … 1,024 "a"s and 10,000 "a"s of text: every position walks at most 1,024 bytes,
  // and the fewest pieces (each scores -1) win.
  std::vector<std::pair<std::string, double>> vocab = {{"<unk>", 0}};
  for (int n = 1; n <= 1024; ++n)
    vocab.emplace_back(std::string(static_cast<std::size_t>(n), 'a'), -1);
  const auto model = make_model(unigram(vocab, 0), "t", 0);
  const std::vector<Piece> pieces = tokenize(*model, std::string(10000, 'a'));
  ASSERT_EQ(pieces.size(), 10u);
  int end = 0;
  for (const Piece& p : pieces) {
    EXPECT_EQ(p.start, end);
    EXPECT_EQ(p.id, p.end - p.start);  // the piece of n "a"s has id n
    end = p.end;
  }
  EXPECT_EQ(end, 10000);
}

// ---- Precompiled -----------------------------------------------------------------------------

// A SentencePiece charsmap: a Darts-clone double array over `rules` (one 256-unit block per
// node with children: the children of a node whose block starts at B sit at B ^ byte = B + byte),
// then the results, NUL-ended.
std::string charsmap(const std::map<std::string, std::string>& rules) {
  std::string normalized;
  std::map<std::string, std::uint32_t> value;  // key -> offset of its result
  for (const auto& [key, result] : rules) {
    value[key] = static_cast<std::uint32_t>(normalized.size());
    normalized += result;
    normalized += '\0';
  }
  std::vector<std::uint32_t> units(256, 0);
  // Recursively: the node for `prefix` is at `pos`; its block is appended.
  std::function<void(const std::string&, std::size_t, std::uint32_t)> place =
      [&](const std::string& prefix, std::size_t pos, std::uint32_t label) {
        const std::size_t base = units.size();
        units.resize(units.size() + 256, 0);
        const auto leaf = value.find(prefix);
        const bool has_value = !prefix.empty() && leaf != value.end();
        units[pos] =
            static_cast<std::uint32_t>((pos ^ base) << 10) | (has_value ? 1u << 8 : 0) | label;
        if (has_value) units[base] = 0x80000000u | leaf->second;
        for (int c = 1; c < 256; ++c) {
          const std::string next = prefix + static_cast<char>(c);
          const auto it = value.lower_bound(next);
          if (it != value.end() && it->first.compare(0, next.size(), next) == 0)
            place(next, base ^ static_cast<std::size_t>(c), static_cast<std::uint32_t>(c));
        }
      };
  place("", 0, 0);
  std::string out(4, '\0');
  auto put = [&](std::string& s, std::size_t at, std::uint32_t v) {
    for (int k = 0; k < 4; ++k)
      s[at + static_cast<std::size_t>(k)] = static_cast<char>(v >> (8 * k));
  };
  put(out, 0, static_cast<std::uint32_t>(units.size() * 4));
  out.resize(4 + units.size() * 4);
  for (std::size_t i = 0; i < units.size(); ++i) put(out, 4 + 4 * i, units[i]);
  return out + normalized;
}

struct Normalized {
  std::string text;
  std::vector<std::pair<int, int>> offsets;  // the user's bytes of each normalized byte
};

Normalized normalize(const Normalizer& n, std::string_view text) {
  NormalizedString s(text, 0, static_cast<int>(text.size()));
  n.normalize(s);
  Normalized r{s.text(), {}};
  for (int i = 0; i < static_cast<int>(s.text().size()); ++i) {
    const Alignment a = s.original_range(i, i + 1);
    r.offsets.emplace_back(a.start, a.end);
  }
  return r;
}

const std::map<std::string, std::string> kRules = {
    {"\xEF\xBC\xA1", "A"},      // full-width A
    {"\xEF\xAC\x81", "fi"},     // ﬁ
    {"\xE2\x80\x8B", ""},       // zero width space: removed
    {"\r", " "},                // so "\r\n" (one grapheme, shortest rule "\r") is one space
    {"\r\n", "NEVER"},          // never taken: the shortest rule wins, as in tokenizers
    {"e\xCC\x81", "\xC3\xA9"},  // e + U+0301 -> é
    {"\xE1\x84\x80\xE1\x85\xA1", "X"}};  // a 6-byte grapheme: never looked up whole

TEST(Precompiled, RulesAndAlignmentsAsTokenizersGivesThem) {
  const auto n = make_precompiled_charsmap_normalizer(charsmap(kRules), "t");
  Normalized r = normalize(*n,
                           "\xEF\xBC\xA1"
                           "b");  // ＡＢ: A then b
  EXPECT_EQ(r.text, "Ab");
  EXPECT_EQ(r.offsets, (std::vector<std::pair<int, int>>{{0, 3}, {3, 4}}));
  r = normalize(*n, "x\xEF\xAC\x81y");  // xﬁy: "fi" both from the ﬁ
  EXPECT_EQ(r.text, "xfiy");
  EXPECT_EQ(r.offsets, (std::vector<std::pair<int, int>>{{0, 1}, {1, 4}, {1, 4}, {4, 5}}));
  EXPECT_EQ(normalize(*n, "a\r\nb").text, "a b");
  EXPECT_EQ(normalize(*n, "cafe\xCC\x81!").text, "caf\xC3\xA9!");
  EXPECT_EQ(normalize(*n, "\xE1\x84\x80\xE1\x85\xA1").text, "\xE1\x84\x80\xE1\x85\xA1");
  // ﬁ + U+0301 is one grapheme of 5 bytes: its shortest rule (ﬁ) replaces all of it.
  EXPECT_EQ(normalize(*n, "\xEF\xAC\x81\xCC\x81").text, "fi");
  // A removed character: its removal is carried by the character before it.
  r = normalize(*n,
                "ab\xE2\x80\x8B"
                "c");
  EXPECT_EQ(r.text, "abc");
  EXPECT_EQ(r.offsets.back(), (std::pair<int, int>{5, 6}));
  EXPECT_EQ(normalize(*n, "plain text").text, "plain text");
}

TEST(Precompiled, EmptyCharsmapIsTheIdentity) {
  const auto n = make_normalizer({{"type", "Precompiled"}, {"precompiled_charsmap", ""}}, "t");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(normalize(*n, "\xEF\xBC\xA1 x").text, "\xEF\xBC\xA1 x");
}

TEST(Precompiled, ReadFromBase64InTokenizerJson) {
  // "AQAAAA==" style: the charsmap of kRules through the JSON path.
  const std::string bytes = charsmap({{"\xEF\xAC\x81", "fi"}});
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string encoded;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size())
      v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
    encoded += kAlphabet[(v >> 18) & 63];
    encoded += kAlphabet[(v >> 12) & 63];
    encoded += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    encoded += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  const auto n = make_normalizer({{"type", "Precompiled"}, {"precompiled_charsmap", encoded}}, "t");
  EXPECT_EQ(normalize(*n, "\xEF\xAC\x81").text, "fi");
}

std::string precompiled_error(const std::string& bytes) {
  try {
    make_precompiled_charsmap_normalizer(bytes, "tokenizer.json normalizer Precompiled");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(loaded)";
}

std::string json_error(const json& value) {
  try {
    make_normalizer({{"type", "Precompiled"}, {"precompiled_charsmap", value}}, "t");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(loaded)";
}

void set_u32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) s[at + static_cast<std::size_t>(k)] = static_cast<char>(v >> (8 * k));
}

TEST(Precompiled, HostileCharsmapsAreClearErrors) {
  const std::string good = charsmap({{"a", "b"}});
  EXPECT_EQ(precompiled_error(good), "(loaded)");
  EXPECT_NE(precompiled_error("\x01\x02").find("truncated"), std::string::npos);
  EXPECT_NE(precompiled_error(std::string(4, '\0')).find("empty trie"), std::string::npos);
  std::string too_long = good;
  set_u32(too_long, 0, 0xFFFFFFF0u);
  EXPECT_NE(precompiled_error(too_long).find("follow"), std::string::npos);
  EXPECT_NE(precompiled_error(good + "\xff").find("not valid UTF-8"), std::string::npos);
  // The value of "a" (the unit at the base of the block after the root's and a's) past the end.
  const std::size_t a_pos = 256 ^ 'a';
  const std::size_t a_value = 512;
  std::string past = good;
  set_u32(past, 4 + 4 * a_value, 0x80000000u | 1000);
  EXPECT_NE(precompiled_error(past).find("points past the normalized strings"), std::string::npos);
  // A value inside a character of the results.
  std::string inside = charsmap({{"a", "\xC3\xA9"}});
  set_u32(inside, 4 + 4 * a_value, 0x80000000u | 1);
  EXPECT_NE(precompiled_error(inside).find("inside a character"), std::string::npos);
  // "a"'s unit says a key ends there, with its value outside the array.
  std::string outside = good;
  set_u32(outside, 4 + 4 * a_pos,
          (static_cast<std::uint32_t>(a_pos ^ 0x1FFF00) << 10) | 0x100 | 'a');
  EXPECT_NE(precompiled_error(outside).find("value lies outside the trie"), std::string::npos);
  // A cycle (a's children are the root's): validation and lookups end.
  std::string cycle = good;
  set_u32(cycle, 4 + 4 * a_pos, (static_cast<std::uint32_t>(a_pos ^ 256) << 10) | 'a');
  std::unique_ptr<Normalizer> n;
  ASSERT_NO_THROW(n = make_precompiled_charsmap_normalizer(cycle, "t"));
  EXPECT_EQ(normalize(*n, std::string(1000, 'a')).text, std::string(1000, 'a'));
  // Results far larger than their source stop at the growth limit.
  const auto huge =
      make_precompiled_charsmap_normalizer(charsmap({{"a", std::string(100000, 'x')}}), "t");
  EXPECT_THROW(normalize(*huge, "aaaa"), ModelError);
  // Base64 and JSON.
  EXPECT_NE(json_error("@@@@").find("not valid base64"), std::string::npos);
  EXPECT_NE(json_error("QUJD=").find("not valid base64"), std::string::npos);
  EXPECT_NE(json_error("QU=D").find("not valid base64"), std::string::npos);
  EXPECT_NE(json_error(nullptr).find("precompiled_charsmap"), std::string::npos);
  EXPECT_NE(json_error(12).find("must be a string"), std::string::npos);
}

}  // namespace
}  // namespace attnscope::text
