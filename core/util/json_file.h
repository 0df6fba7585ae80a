#pragma once
// JSON files from untrusted folders: parse errors name the file and quote at most ~80 characters
// of the offending text (nlohmann's messages quote a whole bad token, megabytes for a crafted
// file, and start with "[json.exception.parse_error.101]", which means nothing to a user).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/util/file_read.h"

namespace attnscope {

// nlohmann's message without its "[json.exception.…]" prefix, cut to one short line.
std::string json_problem(const nlohmann::json::exception& e);

// Parses `text` read from `path`; throws ModelError "<path> is not valid JSON (<problem>)".
nlohmann::json parse_json_text(const std::string& text, const std::filesystem::path& path);

// read_regular_file + parse_json_text.
nlohmann::json load_json_file(const std::filesystem::path& path, const std::string& what,
                              std::uint64_t max_bytes = kDefaultMaxFileBytes);

// The deepest nesting of arrays and objects in JSON text (brackets inside strings not counted),
// without parsing it: a hostile document is refused before the parser and the destructor recurse
// through it (tokenizer files, sessions).
int json_nesting_depth(std::string_view text);

// A JSON value's type for messages: "a string", "a number", "an array", …
std::string json_type_name(const nlohmann::json& value);

}  // namespace attnscope
