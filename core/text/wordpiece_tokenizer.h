#pragma once
// BERT's WordPiece with the BasicTokenizer in front, exactly as Hugging Face's tokenizers does it.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/text/token.h"

namespace attnscope {

struct WordPieceOptions {
  bool lowercase = true;      // bert-base-uncased; false for cased models
  bool strip_accents = true;  // defaults to `lowercase`, as in Hugging Face
  bool split_cjk = true;      // tokenize_chinese_chars
  int max_chars_per_word = 100;
};

class WordPieceTokenizer {
 public:
  static WordPieceTokenizer from_vocab_txt(const std::filesystem::path& vocab_txt,
                                           const WordPieceOptions& options);
  static WordPieceTokenizer from_tokenizer_json(const std::filesystem::path& tokenizer_json);

  // Without [CLS]/[SEP]; offsets refer to `text`. Invalid UTF-8 never throws.
  Tokens encode(std::string_view text) const;
  // [CLS] + encode(text) + [SEP], specials marked with start = end = -1.
  Tokens encode_with_specials(std::string_view text) const;
  int token_to_id(const std::string& piece) const;  // -1 if absent
  std::string id_to_token(int id) const;
  int vocab_size() const;

  WordPieceTokenizer(WordPieceTokenizer&&) noexcept;
  WordPieceTokenizer& operator=(WordPieceTokenizer&&) noexcept;
  ~WordPieceTokenizer();

 private:
  struct Impl;
  explicit WordPieceTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnscope
