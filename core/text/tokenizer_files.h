#pragma once
// Which tokenizer files a Hugging Face model folder has, and loaders that pick among them.
#include <filesystem>
#include <optional>
#include <string>

#include "core/text/bpe_tokenizer.h"
#include "core/text/wordpiece_tokenizer.h"

namespace attnscope {

struct TokenizerFiles {
  std::optional<std::filesystem::path> vocab_json;             // GPT-2 BPE vocabulary
  std::optional<std::filesystem::path> merges_txt;             // GPT-2 BPE merges
  std::optional<std::filesystem::path> vocab_txt;              // BERT WordPiece vocabulary
  std::optional<std::filesystem::path> tokenizer_json;         // Hugging Face tokenizers file
  std::optional<std::filesystem::path> tokenizer_config_json;  // do_lower_case and friends

  bool has_bpe() const { return (vocab_json && merges_txt) || tokenizer_json; }
  bool has_wordpiece() const { return vocab_txt || tokenizer_json; }
  // "vocab.json + merges.txt, tokenizer.json": for messages that say what was found.
  std::string describe() const;
};

// Looks only at which files exist; reads nothing.
TokenizerFiles find_tokenizer_files(const std::filesystem::path& folder);

// GPT-2: vocab.json + merges.txt when both exist (the faster load; GPT-2's tokenizer.json holds
// the same vocabulary and merges), otherwise tokenizer.json. Throws ModelError naming the folder
// and the files it looked for.
BpeTokenizer load_bpe_tokenizer(const std::filesystem::path& folder);

// BERT: tokenizer.json when present (its BertNormalizer flags are exactly what Hugging Face uses),
// otherwise vocab.txt with the options of tokenizer_config.json (do_lower_case, strip_accents,
// tokenize_chinese_chars; do_lower_case defaults to true as in BertTokenizer).
WordPieceTokenizer load_wordpiece_tokenizer(const std::filesystem::path& folder);

// The WordPiece options tokenizer_config.json asks for (defaults when it is absent or silent).
WordPieceOptions wordpiece_options_from_config(const std::filesystem::path& tokenizer_config_json);

}  // namespace attnscope
