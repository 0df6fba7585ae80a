#pragma once
// The lesson model's word tokenizer: lowercase words and single punctuation marks, with byte
// offsets into the text the user typed.
//
// Rules (tests/unit/word_tokenizer_test.cpp):
//  - a word is a run of letters, combining marks and digits (Unicode categories L*, M*, N*);
//    an apostrophe (' or ’) between two word characters belongs to the word ("don't");
//  - whitespace, control and format characters separate tokens and are dropped;
//  - every other code point (punctuation, symbols) is a token of its own;
//  - a byte that is not valid UTF-8 becomes a token of its own with the text "\uFFFD" (U+FFFD),
//    so odd input is visible rather than lost;
//  - word text is lowercased (Unicode simple lowercase); `start`/`end` are byte offsets of the
//    original spelling, `id` is left -1 for the model to fill.
#include <string_view>

#include "core/text/token.h"

namespace attnscope {

struct WordTokenization {
  Tokens tokens;
  // -1, or the byte offset where the first token beyond `max_tokens` starts: text[0, this) is
  // what the tokens cover.
  int truncated_at_byte = -1;
};

// max_tokens < 0: no limit.
WordTokenization word_tokenize(std::string_view text, int max_tokens = -1);

}  // namespace attnscope
