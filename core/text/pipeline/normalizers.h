#pragma once
// tokenizer.json's "normalizer": NFC, NFD, NFKC, NFKD, Lowercase, Replace, Prepend, Strip,
// BertNormalizer, Precompiled, Sequence (and null), each exactly as Hugging Face's tokenizers
// applies it.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "core/text/pipeline/normalized_string.h"

namespace attnscope::text {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(NormalizedString& s) const = 0;
};

// Null for a null/absent normalizer. Throws ModelError naming `where` for an unknown type.
std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& json, const std::string& where);

// The BertNormalizer options (also what vocab.txt + tokenizer_config.json build).
struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
};
std::unique_ptr<Normalizer> make_bert_normalizer(const BertNormalizerOptions& options);

// SentencePiece's precompiled_charsmap (precompiled_normalizer.cpp): from the tokenizer.json
// object {"type": "Precompiled", "precompiled_charsmap": BASE64}, or from the decoded bytes (empty:
// the identity). Throws ModelError naming `where` for a malformed or hostile charsmap.
std::unique_ptr<Normalizer> make_precompiled_normalizer(const nlohmann::json& json,
                                                        const std::string& where);
std::unique_ptr<Normalizer> make_precompiled_charsmap_normalizer(std::string_view charsmap,
                                                                 const std::string& where);

// Hugging Face's BERT classes, shared with the BertPreTokenizer.
bool is_bert_punctuation(char32_t cp);

}  // namespace attnscope::text
