// Pipeline components on their own: split behaviours (Hugging Face's documented examples),
// alignments through normalizers, pre-tokenizers from their JSON, Oniguruma's match iteration.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/text/pipeline/normalized_string.h"
#include "core/text/pipeline/normalizers.h"
#include "core/text/pipeline/pre_tokenizers.h"
#include "core/text/pipeline/regex.h"
#include "core/util/error.h"

namespace attnscope::text {
namespace {

NormalizedString whole(std::string_view s) {
  return NormalizedString(s, 0, static_cast<int>(s.size()));
}

std::vector<std::string> texts(const std::vector<NormalizedString>& pieces) {
  std::vector<std::string> out;
  for (const NormalizedString& p : pieces) out.push_back(p.text());
  return out;
}

using V = std::vector<std::string>;

TEST(SplitBehavior, HuggingFacesDocumentedExample) {
  // tokenizers' SplitDelimiterBehavior docs: "the-final--countdown" split on "-".
  const std::string text = "the-final--countdown";
  auto split = [&](SplitBehavior b) {
    const NormalizedString s = whole(text);
    return texts(s.split(char_matches(s.text(), [](char32_t c) { return c == U'-'; }), b));
  };
  EXPECT_EQ(split(SplitBehavior::kRemoved), (V{"the", "final", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kIsolated), (V{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kMergedWithPrevious), (V{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kMergedWithNext), (V{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split(SplitBehavior::kContiguous), (V{"the", "-", "final", "--", "countdown"}));
}

TEST(NormalizedString, OffsetsFollowReplacePrependAndLowercase) {
  NormalizedString s(std::string_view("xx Héllo İ"), 3, 12);  // "Héllo İ" inside a longer text
  s.lowercase();
  EXPECT_EQ(s.text(), "héllo i\u0307");  // İ lowercases to two characters
  s.prepend("\u2581");
  s.replace(char_matches(s.text(), [](char32_t c) { return c == U' '; }), "\u2581");
  EXPECT_EQ(s.text(), "\u2581héllo\u2581i\u0307");
  // The prepended mark belongs to "H"; the replaced space to the space; both İ parts to İ.
  EXPECT_EQ(s.original_range(0, 3).start, 3);
  EXPECT_EQ(s.original_range(0, 3).end, 4);
  const int space = static_cast<int>(std::string("\u2581héllo").size());
  EXPECT_EQ(s.original_range(space, space + 3).start, 9);
  EXPECT_EQ(s.original_range(space, space + 3).end, 10);
  EXPECT_EQ(s.original_range(space + 3, static_cast<int>(s.text().size())).start, 10);
  EXPECT_EQ(s.original_range(space + 3, static_cast<int>(s.text().size())).end, 12);
}

TEST(Normalizers, NfcComposesAndKeepsTheStartersAlignment) {
  const auto nfc = make_normalizer(nlohmann::json{{"type", "NFC"}}, "test");
  NormalizedString s = whole("e\u0301!");
  nfc->normalize(s);
  EXPECT_EQ(s.text(), "\u00e9!");
  EXPECT_EQ(s.original_range(0, 2).start, 0);
  EXPECT_EQ(s.original_range(0, 2).end, 1);  // as Hugging Face: the composite maps to "e"
  const auto nfkc = make_normalizer(nlohmann::json{{"type", "NFKC"}}, "test");
  NormalizedString k = whole("\ufb01 \u2460");
  nfkc->normalize(k);
  EXPECT_EQ(k.text(), "fi 1");
  // Composition exclusions stay decomposed.
  NormalizedString excluded = whole("\U0001D160");
  nfc->normalize(excluded);
  EXPECT_EQ(excluded.text(), "\U0001D158\U0001D165\U0001D16E");
}

TEST(PreTokenizers, MetaspaceFirstPrependsOnlyAtTheStartOfTheText) {
  const auto metaspace = make_pre_tokenizer(nlohmann::json{{"type", "Metaspace"},
                                                           {"replacement", "\u2581"},
                                                           {"prepend_scheme", "first"},
                                                           {"split", true}},
                                            "test");
  const std::string text = "<s>Hi there";
  std::vector<NormalizedString> pieces = {NormalizedString(text, 3, static_cast<int>(text.size()))};
  metaspace->pre_tokenize(pieces);
  EXPECT_EQ(texts(pieces), (V{"Hi", "\u2581there"}));  // not at byte 0: no prefix
  pieces = {whole("Hi there")};
  metaspace->pre_tokenize(pieces);
  EXPECT_EQ(texts(pieces), (V{"\u2581Hi", "\u2581there"}));
}

TEST(PreTokenizers, DigitsWhitespaceAndPunctuation) {
  auto run = [](const nlohmann::json& j, std::string_view text) {
    std::vector<NormalizedString> pieces = {whole(text)};
    make_pre_tokenizer(j, "test")->pre_tokenize(pieces);
    return texts(pieces);
  };
  EXPECT_EQ(run({{"type", "Digits"}, {"individual_digits", true}}, "a123b"),
            (V{"a", "1", "2", "3", "b"}));
  EXPECT_EQ(run({{"type", "Digits"}, {"individual_digits", false}}, "a123b"), (V{"a", "123", "b"}));
  EXPECT_EQ(run({{"type", "Whitespace"}}, "Hey man!! ok?"), (V{"Hey", "man", "!!", "ok", "?"}));
  EXPECT_EQ(run({{"type", "WhitespaceSplit"}}, " a\u3000b  "), (V{"a", "b"}));
  EXPECT_EQ(run({{"type", "Punctuation"}}, "a,b$"), (V{"a", ",", "b", "$"}));
  EXPECT_EQ(run({{"type", "BertPreTokenizer"}}, "Hi, you!"), (V{"Hi", ",", "you", "!"}));
  EXPECT_EQ(run({{"type", "Split"},
                 {"pattern", {{"Regex", "\\d+"}}},
                 {"behavior", "Removed"},
                 {"invert", true}},
                "a12b3"),
            (V{"12", "3"}));
  EXPECT_THROW(
      run({{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}}, "a"),
      ModelError);
}

TEST(Regex, EmptyMatchesAreSkippedRightAfterAMatch) {
  // As the onig crate's find_iter, which Hugging Face uses: "a*" on "baa" finds "", "aa", then
  // no empty match at the end right after "aa".
  const Regex re("a*", "test");
  const auto matches = re.find_matches("baa");
  std::vector<std::tuple<int, int, bool>> got;
  for (const PatternMatch& m : matches) got.emplace_back(m.start, m.end, m.is_match);
  EXPECT_EQ(got,
            (std::vector<std::tuple<int, int, bool>>{{0, 0, true}, {0, 1, false}, {1, 3, true}}));
  EXPECT_THROW(Regex("(", "test"), ModelError);
}

}  // namespace
}  // namespace attnscope::text
