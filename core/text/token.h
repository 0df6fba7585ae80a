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
  bool generated = false;  // written by a decoder (attnscope generate), not typed
};

using Tokens = std::vector<Token>;

// The vocabulary ids of `tokens`, in order: what a network's forward pass takes.
inline std::vector<int> token_ids(const Tokens& tokens) {
  std::vector<int> ids;
  ids.reserve(tokens.size());
  for (const Token& t : tokens) ids.push_back(t.id);
  return ids;
}

}  // namespace attnscope
