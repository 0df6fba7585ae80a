#pragma once
// Small pieces the tokenizers share: file reading with user-facing errors, string-keyed maps.
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

// `what` names the file for the message ("vocabulary", "merges file").
// Regular files only, bounded by their size (core/util/file_read.h).
inline std::string read_text_file(const std::filesystem::path& path, const char* what) {
  return read_regular_file(path, what);
}

inline nlohmann::json read_json_file(const std::filesystem::path& path, const char* what) {
  return load_json_file(path, what);
}

// Reads a {"piece": id, …} JSON object (GPT-2's vocab.json) with a SAX parser: about twice as fast
// as building the DOM, which matters for a 50k-entry vocabulary loaded while the user waits.
PieceToId read_vocab_json(const std::filesystem::path& path);

}  // namespace attnscope
