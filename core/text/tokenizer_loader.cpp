// load_tokenizer: decides from the folder's files which pipeline to build.
#include <nlohmann/json.hpp>

#include "core/text/bpe_tokenizer.h"
#include "core/text/tokenizer.h"
#include "core/text/tokenizer_common.h"
#include "core/text/tokenizer_files.h"
#include "core/text/wordpiece_tokenizer.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// Interim adapters over the GPT-2 and BERT tokenizers (replaced by the tokenizer.json pipeline).
class BpeAdapter final : public Tokenizer {
 public:
  explicit BpeAdapter(BpeTokenizer t) : t_(std::move(t)) { eos_ = t_.token_to_id("<|endoftext|>"); }
  Tokens encode(std::string_view text, bool) const override { return t_.encode(text); }
  std::string decode(int id) const override { return t_.decode(id); }
  std::string id_to_token(int id) const override { return t_.id_to_token(id); }
  int token_to_id(std::string_view piece) const override { return t_.token_to_id(piece); }
  int vocab_size() const override { return t_.vocab_size(); }
  int bos_id() const override { return eos_; }
  int eos_id() const override { return eos_; }
  std::string description() const override { return "byte-level BPE"; }

 private:
  BpeTokenizer t_;
  int eos_ = -1;
};

class WordPieceAdapter final : public Tokenizer {
 public:
  explicit WordPieceAdapter(WordPieceTokenizer t) : t_(std::move(t)) {}
  Tokens encode(std::string_view text, bool special) const override {
    return special ? t_.encode_with_specials(text) : t_.encode(text);
  }
  std::string decode(int id) const override {
    std::string piece = t_.id_to_token(id);
    return piece.starts_with("##") ? piece.substr(2) : piece;
  }
  std::string id_to_token(int id) const override { return t_.id_to_token(id); }
  int token_to_id(std::string_view piece) const override {
    return t_.token_to_id(std::string(piece));
  }
  int vocab_size() const override { return t_.vocab_size(); }
  int bos_id() const override { return t_.token_to_id("[CLS]"); }
  int eos_id() const override { return t_.token_to_id("[SEP]"); }
  std::string description() const override { return "WordPiece"; }

 private:
  WordPieceTokenizer t_;
};

}  // namespace

bool has_tokenizer_files(const std::filesystem::path& folder) {
  const TokenizerFiles files = find_tokenizer_files(folder);
  return files.tokenizer_json || (files.vocab_json && files.merges_txt) || files.vocab_txt;
}

std::shared_ptr<const Tokenizer> load_tokenizer(const std::filesystem::path& folder) {
  const TokenizerFiles files = find_tokenizer_files(folder);
  if (files.tokenizer_json) {
    const nlohmann::json json = read_json_file(*files.tokenizer_json, "tokenizer file");
    const std::string type = json.contains("model") && json["model"].is_object()
                                 ? json["model"].value("type", std::string())
                                 : std::string();
    if (type == "WordPiece") {
      return std::make_shared<WordPieceAdapter>(
          WordPieceTokenizer::from_tokenizer_json(*files.tokenizer_json));
    }
    return std::make_shared<BpeAdapter>(BpeTokenizer::from_tokenizer_json(*files.tokenizer_json));
  }
  if (files.vocab_json && files.merges_txt) {
    return std::make_shared<BpeAdapter>(
        BpeTokenizer::from_files(*files.vocab_json, *files.merges_txt));
  }
  if (files.vocab_txt) return std::make_shared<WordPieceAdapter>(load_wordpiece_tokenizer(folder));
  throw ModelError(folder.string() +
                   " has no tokenizer: expected tokenizer.json, vocab.json + merges.txt or "
                   "vocab.txt, found " +
                   files.describe());
}

}  // namespace attnscope
