#pragma once
// The one tokenizer interface of attnscope and its one loader. A tokenizer is Hugging Face's
// tokenizer.json pipeline (normalizer -> pre-tokenizer -> model -> post-processor, plus added
// tokens); folders without tokenizer.json (vocab.json + merges.txt, vocab.txt) get the equivalent
// pipeline built from those files.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/text/token.h"
#include "core/text/token_label.h"

namespace attnscope {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Exactly Hugging Face's encode(text, add_special_tokens): ids, pieces (Token::text = the
  // vocabulary piece as HF's `tokens` shows it), UTF-8 byte offsets into `text`. Tokens added by
  // the post-processor ([CLS], <s>, <|begin_of_text|>) have start = end = -1 and special = true.
  // Added tokens typed in the text keep their offsets and are not `special`. Never throws for odd
  // text (invalid UTF-8, empty, huge). Safe to call from several threads at once.
  virtual Tokens encode(std::string_view text, bool add_special_tokens) const = 0;
  // The text (bytes: a byte-level or byte-fallback piece may be part of a character) this id
  // stands for in the middle of a text: " world" for "Ġworld" or "▁world", "ing" for "##ing".
  virtual std::string decode(int id) const = 0;
  virtual std::string id_to_token(int id) const = 0;          // the vocabulary piece; "" if none
  virtual int token_to_id(std::string_view piece) const = 0;  // -1 if absent
  virtual int vocab_size() const = 0;                         // largest id + 1, added included
  virtual int bos_id() const = 0;                             // -1 when none
  virtual int eos_id() const = 0;                             // -1 when none
  // What it is, for messages and `attnscope tokenize`: "tokenizer.json: BPE (byte-level)".
  virtual std::string description() const = 0;
  // How its pieces encode text (from its decoder), so labels can read any piece back.
  virtual PieceEncoding piece_encoding() const { return PieceEncoding::kPlain; }
};

// The one loader: tokenizer.json if present, else vocab.json + merges.txt (GPT-2), else vocab.txt
// (BERT); reads tokenizer_config.json (lower-casing for vocab.txt, BOS/EOS, add_bos_token /
// add_eos_token where tokenizer.json's post-processor does not decide). Throws ModelError naming
// the folder and what was found, or the file and key that is wrong.
std::shared_ptr<const Tokenizer> load_tokenizer(const std::filesystem::path& folder);

// True when `folder` has files load_tokenizer can use (it may still fail on their content).
bool has_tokenizer_files(const std::filesystem::path& folder);

}  // namespace attnscope
