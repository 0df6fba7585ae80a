#pragma once
// Added tokens ("<|endoftext|>", "[MASK]", …) are found in the raw text before any normalization or
// pre-tokenization, as Hugging Face's AddedVocabulary does: typing "[MASK]" gives the [MASK] id.
#include <string>
#include <string_view>
#include <vector>

#include "core/text/token.h"

namespace attnscope {

struct AddedToken {
  std::string content;
  int id = -1;
  bool lstrip = false;  // the match also swallows white space on its left
  bool rstrip = false;  // … and on its right
};

// A run of the text: plain text to tokenize (added_index -1), or an added token match. Byte
// offsets.
struct TextPiece {
  int start = 0;
  int end = 0;
  int added_index = -1;
};

// Splits `text` at the added tokens, leftmost-longest (the aho-corasick mode Hugging Face uses).
// Pieces cover the text without gaps, in order.
std::vector<TextPiece> split_on_added_tokens(std::string_view text,
                                             const std::vector<AddedToken>& added);

// The token for an added-token piece of `text`: its id, and the matched text (white space taken by
// lstrip/rstrip included) with its offsets. Typed by the user, so not `special`.
Token added_piece_token(std::string_view text, const TextPiece& piece,
                        const std::vector<AddedToken>& added);

}  // namespace attnscope
