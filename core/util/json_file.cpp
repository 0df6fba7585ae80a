#include "core/util/json_file.h"

#include <algorithm>

namespace attnscope {

std::string json_problem(const nlohmann::json::exception& e) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const std::size_t close = text.find("] ");
    if (close != std::string::npos) text = text.substr(close + 2);
  }
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return quote_excerpt(text, 160);
}

nlohmann::json parse_json_text(const std::string& text, const std::filesystem::path& path) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(path.string() + " is not valid JSON (" + json_problem(e) + ")");
  }
}

nlohmann::json load_json_file(const std::filesystem::path& path, const std::string& what,
                              std::uint64_t max_bytes) {
  return parse_json_text(read_regular_file(path, what, max_bytes), path);
}

std::string json_type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "an integer";
    case nlohmann::json::value_t::number_float:
      return "a number";
    default:
      return "binary data";
  }
}

int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace attnscope
