#pragma once
// Added tokens ("<|endoftext|>", "[MASK]", "<start_of_turn>", …), found in the text before the
// model runs, as Hugging Face's AddedVocabulary does: tokens with normalized=false in the raw text,
// the others in the normalized text; leftmost-longest; lstrip/rstrip take the white space beside
// the match; single_word matches only between non-word characters.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/pipeline/normalized_string.h"

namespace attnscope::text {

struct AddedTokenSpec {
  std::string content;
  int id = -1;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool single_word = false;
  bool special = false;
};

// A piece of a text: plain (token -1) or an added token's match.
struct AddedSplit {
  NormalizedString text;
  int token = -1;  // index into the added tokens
};

class AddedTokenMatcher {
 public:
  // `contents` are the strings to find (a normalized token's content after normalization).
  void build(const std::vector<AddedTokenSpec>& tokens, const std::vector<std::string>& contents,
             const std::vector<int>& which);
  bool empty() const { return nodes_.size() <= 1; }
  // Splits `s` at the matches (Hugging Face's find_matches + split_with_indices).
  void split(const NormalizedString& s, const std::vector<AddedTokenSpec>& tokens,
             std::vector<AddedSplit>& out) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int>> children;  // sorted by byte
    int token = -1;                                       // a token ends here
    int child(unsigned char b) const;
  };
  std::vector<Node> nodes_{Node{}};
  std::array<bool, 256> can_start_{};
};

}  // namespace attnscope::text
