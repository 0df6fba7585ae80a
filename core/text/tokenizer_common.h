#pragma once
// Small pieces the tokenizers share: file reading with user-facing errors, string-keyed maps.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/util/error.h"
#include "core/util/json_file.h"

namespace attnscope {

// Lets unordered_map<std::string, …> be searched with a string_view without building a string.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using PieceToId = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;

// ~4x the largest real tokenizer.json (Gemma 3's, 33 MB); its DOM takes ~10x the file in memory.
// vocab.json, merges.txt and vocab.txt are bounded by the same.
inline constexpr std::uint64_t kTokenizerFileMaxBytes = 128ull << 20;
// tokenizer_config.json: a few hundred kB to ~1 MB in real models (Gemma's lists 6k added tokens).
inline constexpr std::uint64_t kTokenizerConfigMaxBytes = 16ull << 20;

// `what` names the file for the message ("vocabulary", "merges file").
// Regular files only, bounded by their size (core/util/file_read.h).
inline std::string read_text_file(const std::filesystem::path& path, const char* what) {
  return read_regular_file(path, what, kTokenizerFileMaxBytes);
}

// Tokenizer JSON files (tokenizer.json, tokenizer_config.json) nest at most this deep: Hugging
// Face's tokenizers refuses deeper ones too (serde_json's recursion limit), and a document nested
// 10^5 levels deep would exhaust the stack in the copies and builders that walk it.
inline constexpr int kTokenizerJsonMaxDepth = 127;

// read_regular_file (at most `max_bytes`) + a nesting check + parse: throws ModelError naming the
// file for each.
nlohmann::json read_json_file(const std::filesystem::path& path, const char* what,
                              std::uint64_t max_bytes = kTokenizerFileMaxBytes);

// Reads a {"piece": id, …} JSON object (GPT-2's vocab.json) with a SAX parser: about twice as fast
// as building the DOM, which matters for a 50k-entry vocabulary loaded while the user waits.
PieceToId read_vocab_json(const std::filesystem::path& path);

}  // namespace attnscope
