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

namespace attnscope {

// Lets unordered_map<std::string, …> be searched with a string_view without building a string.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using PieceToId = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;

// `what` names the file for the message ("vocabulary", "merges file"). Only regular files are
// read (a FIFO or /dev/zero behind the name would block or never end), and only their size.
inline std::string read_text_file(const std::filesystem::path& path, const char* what) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ModelError("cannot read the " + std::string(what) + " " + path.string() +
                     ": not a regular file");
  }
  const auto size = std::filesystem::file_size(path, error);
  constexpr std::uintmax_t kLimit = 1ULL << 31;  // tokenizer files are tens of MB
  if (error || size > kLimit) {
    throw ModelError("cannot read the " + std::string(what) + " " + path.string() +
                     (error ? ": " + error.message() : ": larger than 2 GiB"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("cannot open the " + std::string(what) + " " + path.string());
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

inline nlohmann::json read_json_file(const std::filesystem::path& path, const char* what) {
  try {
    return nlohmann::json::parse(read_text_file(path, what));
  } catch (const nlohmann::json::exception& e) {
    const std::string message = e.what();  // may quote a huge token: keep the message one line
    throw ModelError(path.string() + " is not valid JSON: " +
                     (message.size() > 200 ? message.substr(0, 200) + "..." : message));
  }
}

// Reads a {"piece": id, …} JSON object (GPT-2's vocab.json) with a SAX parser: about twice as fast
// as building the DOM, which matters for a 50k-entry vocabulary loaded while the user waits.
PieceToId read_vocab_json(const std::filesystem::path& path);

}  // namespace attnscope
