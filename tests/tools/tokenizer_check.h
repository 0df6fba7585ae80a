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

// Pieces a random tokenizer test draws from (scripts, spaces, digits, marks, emoji, code), and
// `specials` alone and between spaces.
inline std::vector<std::string> alphabet_with(const std::vector<std::string>& specials) {
  std::vector<std::string> alphabet = {"a",      "b",      "e",       "s",
                                       "t",      "Z",      "Q",       "0",
                                       "7",      "123",    "2024",    " ",
                                       " ",      " ",      "  ",      "    ",
                                       "\n",     "\n\n",   "\t",      "\r\n",
                                       "'",      "'s",     "'ll",     "'VE",
                                       "'re",    ".",      ",",       "!",
                                       "-",      "(",      "\"",      "_",
                                       "<",      ">",      "|",       "[",
                                       "]",      "é",      "ñ",       "中",
                                       "文",     "한",     "ب",       "न",
                                       "\u093e", "\u0301", "e\u0301", "Ω",
                                       "🤗",   "👍",      "🏽",    "\u200d",
                                       "€",      "½",      "²",       "Ⅻ",
                                       "１",     "\u00a0", "\u3000",  "\u2028",
                                       "\u0085", "\uFEFF", "ﬁ",       "Å",
                                       "İ",      "ß",      "ǅ",       "\u1100\u1161",
                                       "가",     "の",     "Привет",  "hello",
                                       "world",  "The",    " the",    "def",
                                       "()",     "{}",     "::",      "->",
                                       "==",     "▁",      "<0x41>",  "##",
                                       "�",      "\x7f",   "\x01"};
  for (const std::string& s : specials) {
    alphabet.push_back(s);
    alphabet.push_back(" " + s + " ");
  }
  return alphabet;
}

// BERT's normalizer and pre-tokenizer use Unicode categories, where Hugging Face's Rust crate
// (unicode_categories) has Unicode 8-era tables and utf8proc Unicode 15: the BERT sweep keeps to
// blocks complete by Unicode 8 (README, "Known differences").
inline bool in_unicode8_blocks(char32_t cp) {
  static const std::vector<std::pair<char32_t, char32_t>> blocks = {
      {0x0020, 0x024F}, {0x0370, 0x03FF}, {0x0400, 0x04FF}, {0x0900, 0x097F},   {0x0E00, 0x0E7F},
      {0x1E00, 0x1EFF}, {0x2000, 0x206F}, {0x2E00, 0x2E42}, {0x3000, 0x30FF},   {0x4E00, 0x9FD5},
      {0xAC00, 0xD7A3}, {0xF900, 0xFAD9}, {0xFF00, 0xFFEF}, {0x1F300, 0x1F5FF}, {0x20000, 0x2A6D6}};
  for (const auto& [first, last] : blocks) {
    if (cp >= first && cp <= last) return true;
  }
  return false;
}

// Offsets as Hugging Face gives them: (0, 0) for the tokens its post-processor adds, which
// attnscope marks `special` with start = end = -1 (the trace contract).
inline std::vector<std::pair<int, int>> hf_style_offsets_of(const Tokens& tokens) {
  std::vector<std::pair<int, int>> offsets;
  for (const Token& t : tokens) {
    const bool added = t.special && t.start == -1 && t.end == -1;
    offsets.emplace_back(added ? 0 : t.start, added ? 0 : t.end);
  }
  return offsets;
}

// Compares ids, pieces and byte offsets of `encode` with Hugging Face's tokenizer `kind` ("gpt2",
// "bert", …), and those with the post-processor's special tokens ([CLS]/[SEP], <s>) too when
// `encode_with_specials` is given. Reports the first `report_at_most` differences as test
// failures; returns how many inputs differ (-1: the reference gave no answer).
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
    Tokens wrapped;
    bool specials_differ = false;
    if (encode_with_specials) {
      wrapped = encode_with_specials(inputs[i]);
      specials_differ = token_ids(wrapped) != expected[i].ids_with_specials ||
                        pieces_of(wrapped) != expected[i].tokens_with_specials ||
                        hf_style_offsets_of(wrapped) != expected[i].offsets_with_specials;
    }
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
        if (specials_differ)
          ADD_FAILURE() << "with special tokens, differs from Hugging Face for \"" << inputs[i]
                        << "\"\n  ids " << ::testing::PrintToString(token_ids(wrapped)) << " vs "
                        << ::testing::PrintToString(expected[i].ids_with_specials) << "\n  pieces "
                        << ::testing::PrintToString(pieces_of(wrapped)) << " vs "
                        << ::testing::PrintToString(expected[i].tokens_with_specials)
                        << "\n  offsets " << ::testing::PrintToString(hf_style_offsets_of(wrapped))
                        << " vs " << ::testing::PrintToString(expected[i].offsets_with_specials);
      }
    }
  }
  return mismatches;
}

}  // namespace attnscope::testing
