#pragma once
#include <string>
#include <vector>

namespace attnscope {

// One token as the trace contract defines it. `start`/`end` are byte offsets into the UTF-8 text
// the user typed; added special tokens ([CLS], [SEP]) have -1 for both. `id` is the vocabulary id
// (for the lesson model its row in the word-vector table, -1 for an unknown word).
struct Token {
  int id = -1;
  std::string text;
  int start = -1;
  int end = -1;
  bool special = false;
  bool unknown = false;
};

using Tokens = std::vector<Token>;

}  // namespace attnscope
