#pragma once
// Reading tokenizer.json fields with messages that name the file, the component and the key.
#include <nlohmann/json.hpp>
#include <string>

#include "core/util/error.h"

namespace attnscope::text {

inline std::string json_kind(const nlohmann::json& j) {
  return j.is_null() ? "null" : j.type_name();
}

// `where` is "FILE: pre_tokenizer Split" or similar.
inline const nlohmann::json& object_field(const nlohmann::json& j, const char* key,
                                          const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_object()) {
    throw ModelError(where + ": key \"" + key + "\" must be an object");
  }
  return j[key];
}

inline const nlohmann::json& array_field(const nlohmann::json& j, const char* key,
                                         const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) {
    throw ModelError(where + ": key \"" + key + "\" must be an array");
  }
  return j[key];
}

inline std::string string_field(const nlohmann::json& j, const char* key,
                                const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) {
    throw ModelError(where + ": key \"" + key + "\" must be a string, found " +
                     (j.is_object() && j.contains(key) ? json_kind(j[key]) : "nothing"));
  }
  return j[key].get<std::string>();
}

// A string that may be absent or null (then `fallback`).
inline std::string optional_string(const nlohmann::json& j, const char* key,
                                   const std::string& fallback, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_string()) {
    throw ModelError(where + ": key \"" + key + "\" must be a string, found " + json_kind(j[key]));
  }
  return j[key].get<std::string>();
}

// A boolean that may be absent or null (then `fallback`).
inline bool bool_field(const nlohmann::json& j, const char* key, bool fallback,
                       const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) {
    throw ModelError(where + ": key \"" + key + "\" must be true or false, found " +
                     json_kind(j[key]));
  }
  return j[key].get<bool>();
}

// Sequence components (normalizers, pre-tokenizers, post-processors, decoders) nest at most this
// deep: a tokenizer.json's nesting is bounded on reading (kTokenizerJsonMaxDepth allows ~62
// levels of Sequence), and the builders, which recurse, bound it again for JSON from elsewhere.
inline constexpr int kMaxSequenceNesting = 64;

inline void check_nesting(int depth, const std::string& where) {
  if (depth > kMaxSequenceNesting) {
    throw ModelError(where + ": Sequence nested more than " + std::to_string(kMaxSequenceNesting) +
                     " levels deep");
  }
}

// A token id: an integer in [0, 2^31 - 2], so that id + 1 (a vocabulary size) still fits an int.
inline int id_value(const nlohmann::json& v, const std::string& what, const std::string& where) {
  if (!v.is_number_integer()) {
    throw ModelError(where + ": " + what + " must be an integer id, found " + json_kind(v));
  }
  const auto id = v.get<long long>();
  if (id < 0 || id >= 0x7FFFFFFF) {
    throw ModelError(where + ": " + what + " has id " + std::to_string(id) +
                     ", outside 0 .. 2147483646");
  }
  return static_cast<int>(id);
}

}  // namespace attnscope::text
