#pragma once
// tokenizer.json's "pre_tokenizer": Split, ByteLevel, Metaspace, Whitespace, WhitespaceSplit,
// Digits, Punctuation, BertPreTokenizer, Sequence (and null), as Hugging Face's tokenizers does.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/text/pipeline/normalized_string.h"

namespace attnscope::text {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits `pieces` further, in place (empty pieces are dropped).
  virtual void pre_tokenize(std::vector<NormalizedString>& pieces) const = 0;
};

// Null for a null/absent pre-tokenizer. Throws ModelError naming `where` for an unknown type.
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& json,
                                                 const std::string& where);

// GPT-2's ByteLevel (what vocab.json + merges.txt build).
std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex);
std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer();

// GPT-2's pattern, which the ByteLevel pre-tokenizer applies when use_regex is on.
inline constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// GPT-2's byte-to-character table: the character that stands for byte b in byte-level pieces.
const std::vector<std::string>& byte_level_chars();

}  // namespace attnscope::text
