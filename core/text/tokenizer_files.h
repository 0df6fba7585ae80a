#pragma once
// Which tokenizer files a Hugging Face model folder has (load_tokenizer decides from this).
#include <filesystem>
#include <optional>
#include <string>

namespace attnscope {

struct TokenizerFiles {
  std::optional<std::filesystem::path> vocab_json;             // GPT-2 BPE vocabulary
  std::optional<std::filesystem::path> merges_txt;             // GPT-2 BPE merges
  std::optional<std::filesystem::path> vocab_txt;              // BERT WordPiece vocabulary
  std::optional<std::filesystem::path> tokenizer_json;         // Hugging Face tokenizers file
  std::optional<std::filesystem::path> tokenizer_config_json;  // do_lower_case and friends

  // "vocab.json + merges.txt, tokenizer.json": for messages that say what was found.
  std::string describe() const;
};

// Looks only at which files exist; reads nothing.
TokenizerFiles find_tokenizer_files(const std::filesystem::path& folder);

}  // namespace attnscope
