#pragma once
// tokenizer.json's "model": BPE, WordPiece and Unigram, as Hugging Face's tokenizers runs them on
// one pre-tokenized piece. Vocabulary checks (ids in range, no gigabyte tables from one huge id)
// are done here once for every way of loading.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/tokenizer_common.h"

namespace attnscope::text {

// A token of one piece: its id and the bytes [start, end) of the piece's normalized text.
struct ModelToken {
  int id;
  int start;
  int end;
};

class Model {
 public:
  virtual ~Model() = default;
  // Appends the tokens of `piece` (valid UTF-8, not empty) to `out`.
  virtual void tokenize(std::string_view piece, std::vector<ModelToken>& out) const = 0;
  virtual int token_to_id(std::string_view piece) const = 0;  // -1 if absent
  virtual const std::string* id_to_token(int id) const = 0;   // null if absent
  virtual int size() const = 0;                               // largest id + 1
  virtual int unk_id() const = 0;                             // -1 when none
  // Whether an unk token shows the text it stands for rather than the unk piece (Unigram's do).
  virtual bool unknown_shows_text() const { return false; }
  virtual std::string description() const = 0;
};

struct BpeOptions {
  std::string unk_token;  // "" for none
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;
};

// `merges` in rank order as (left, right). `where` names the file for messages; `slack` is how
// many ids beyond the vocabulary's entry count are tolerated (added tokens).
std::unique_ptr<Model> make_bpe_model(
    PieceToId vocab, const std::vector<std::pair<std::string, std::string>>& merges,
    const BpeOptions& options, const std::string& where, int slack);

struct WordPieceModelOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  int max_input_chars_per_word = 100;
};
std::unique_ptr<Model> make_wordpiece_model(PieceToId vocab, const WordPieceModelOptions& options,
                                            const std::string& where, int slack);

// tokenizer.json's Unigram model (T5, XLM-RoBERTa, Marian): unigram_model.cpp.
std::unique_ptr<Model> make_unigram_model(const nlohmann::json& json, const std::string& where);

// From tokenizer.json's "model" object.
std::unique_ptr<Model> make_model(const nlohmann::json& json, const std::string& where, int slack);

// Checks every id of `vocab` (0 <= id, id within entries + slack, so that a table indexed by id
// stays the size of the file) and returns the largest + 1.
int checked_vocab_size(const PieceToId& vocab, const std::string& where, int slack);

}  // namespace attnscope::text
