#pragma once
// The lesson model's word vectors (assets/lesson_vectors.bin, format in assets/lesson_vectors.md):
// a vocabulary of lowercase English words and one unit-length vector per word.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/util/matrix.h"

namespace attnscope {

struct WordVectors {
  std::vector<std::string> words;  // row order (frequency rank)
  std::unordered_map<std::string, int> index;
  Matrix vectors;  // [vocab x dim], rows L2-normalised after dequantisation
  std::filesystem::path source;

  int dim() const { return static_cast<int>(vectors.cols()); }
  // Row of `word` (already lowercased), or -1. A possessive "'s" falls back to the bare word,
  // the way the corpus was counted.
  int lookup(std::string_view word) const;
};

// Reads and checks one file; throws ModelError naming the file and what is wrong with it.
WordVectors load_word_vectors(const std::filesystem::path& path);

// The shared copy: loaded from find_asset("lesson_vectors.bin") on first use, once per process
// (thread-safe; a failed load is retried on the next call).
std::shared_ptr<const WordVectors> lesson_word_vectors();

}  // namespace attnscope
