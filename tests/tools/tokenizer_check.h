#pragma once
// Shared by the tokenizer tests: the pieces and offsets of a token list, seeded random texts, and
// the comparison with Hugging Face's tokenizers (node_reference.h). Ids: token_ids (token.h).
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/text/token.h"
#include "core/text/unicode.h"
#include "tests/tools/node_reference.h"

namespace attnscope::testing {

inline std::vector<std::string> pieces_of(const Tokens& tokens) {
  std::vector<std::string> pieces;
  for (const Token& t : tokens) pieces.push_back(t.text);
  return pieces;
}

inline std::vector<std::pair<int, int>> offsets_of(const Tokens& tokens) {
  std::vector<std::pair<int, int>> offsets;
  for (const Token& t : tokens) offsets.emplace_back(t.start, t.end);
  return offsets;
}

// `count` texts of 1 … max_length entries of `alphabet`, drawn with `seed`.
inline std::vector<std::string> random_texts(const std::vector<std::string>& alphabet, int count,
                                             int max_length, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> length(1, max_length);
  std::vector<std::string> texts;
  for (int i = 0; i < count; ++i) {
    std::string s;
    const int n = length(rng);
    for (int k = 0; k < n; ++k) s += alphabet[pick(rng)];
    texts.push_back(s);
  }
  return texts;
}

// "a", the code point, "b": one character between two letters.
inline std::string between_letters(char32_t cp) {
  std::string text = "a";  // built in steps: GCC 12 warns falsely (-Wrestrict) on "a" + s
  text += unicode::to_utf8(cp);
  text += 'b';
  return text;
}

// Compares ids, pieces and byte offsets of `encode` with Hugging Face's tokenizer `kind` ("gpt2",
// "bert", …), and the ids with [CLS]/[SEP] too when `encode_with_specials` is given. Reports the
// first `report_at_most` differences as test failures; returns how many inputs differ (-1: the
// reference gave no answer).
inline int hf_mismatches(const std::string& kind, const std::vector<std::string>& inputs,
                         const std::function<Tokens(const std::string&)>& encode,
                         const std::function<Tokens(const std::string&)>& encode_with_specials,
                         int report_at_most) {
  const auto expected = hf_reference(kind, inputs);
  EXPECT_EQ(expected.size(), inputs.size());
  if (expected.size() != inputs.size()) return -1;
  int mismatches = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tokens tokens = encode(inputs[i]);
    const bool specials_differ =
        encode_with_specials &&
        token_ids(encode_with_specials(inputs[i])) != expected[i].ids_with_specials;
    if (token_ids(tokens) != expected[i].ids || pieces_of(tokens) != expected[i].tokens ||
        offsets_of(tokens) != expected[i].offsets || specials_differ) {
      if (++mismatches <= report_at_most) {
        ADD_FAILURE() << "differs from Hugging Face for \"" << inputs[i] << "\"\n  ids "
                      << ::testing::PrintToString(token_ids(tokens)) << " vs "
                      << ::testing::PrintToString(expected[i].ids) << "\n  pieces "
                      << ::testing::PrintToString(pieces_of(tokens)) << " vs "
                      << ::testing::PrintToString(expected[i].tokens) << "\n  offsets "
                      << ::testing::PrintToString(offsets_of(tokens)) << " vs "
                      << ::testing::PrintToString(expected[i].offsets);
      }
    }
  }
  return mismatches;
}

}  // namespace attnscope::testing
