// Hugging Face's WordPiece model (greedy longest match first) and make_model for tokenizer.json.
#include <nlohmann/json.hpp>

#include "core/text/pipeline/json_fields.h"
#include "core/text/pipeline/models.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope::text {
namespace {

class WordPieceModel final : public Model {
 public:
  WordPieceModel(PieceToId vocab, const WordPieceModelOptions& options, const std::string& where,
                 int slack)
      : vocab_(std::move(vocab)), o_(options) {
    pieces_.assign(static_cast<std::size_t>(checked_vocab_size(vocab_, where, slack)), {});
    const std::string& prefix = o_.continuing_subword_prefix;
    for (const auto& [piece, id] : vocab_) {
      pieces_[static_cast<std::size_t>(id)] = piece;
      if (piece.size() > prefix.size() && piece.starts_with(prefix)) {
        continuations_.emplace(piece.substr(prefix.size()), id);
      }
    }
    const auto unk = vocab_.find(o_.unk_token);
    if (unk == vocab_.end()) {
      throw ModelError(where + ": model.unk_token \"" + o_.unk_token +
                       "\" is not in the vocabulary");
    }
    unk_id_ = unk->second;
  }

  void tokenize(std::string_view word, std::vector<ModelToken>& out) const override {
    const int size = static_cast<int>(word.size());
    int chars = 0;
    for (std::size_t pos = 0; pos < word.size(); pos += unicode::decode_at(word, pos).length) {
      ++chars;
    }
    if (chars > o_.max_input_chars_per_word) {
      out.push_back({unk_id_, 0, size});
      return;
    }
    const std::size_t first_new = out.size();
    int start = 0;
    while (start < size) {
      int end = size;
      int id = -1;
      while (start < end) {
        const std::string_view candidate = word.substr(start, end - start);
        const PieceToId& table = start == 0 ? vocab_ : continuations_;
        if (const auto it = table.find(candidate); it != table.end()) {
          id = it->second;
          break;
        }
        // Shorten by the last character.
        int last = end - 1;
        while (last > start && (static_cast<unsigned char>(word[last]) & 0xC0) == 0x80) --last;
        end = last;
      }
      if (id < 0) {
        out.resize(first_new);
        out.push_back({unk_id_, 0, size});
        return;
      }
      out.push_back({id, start, end});
      start = end;
    }
  }

  int token_to_id(std::string_view piece) const override {
    const auto it = vocab_.find(piece);
    return it == vocab_.end() ? -1 : it->second;
  }
  const std::string* id_to_token(int id) const override {
    if (id < 0 || id >= static_cast<int>(pieces_.size()) || pieces_[id].empty()) return nullptr;
    return &pieces_[id];
  }
  int size() const override { return static_cast<int>(pieces_.size()); }
  int unk_id() const override { return unk_id_; }
  std::string description() const override { return "WordPiece"; }

 private:
  PieceToId vocab_;
  PieceToId continuations_;  // "##aff" stored under "aff", so a lookup builds no string
  WordPieceModelOptions o_;
  std::vector<std::string> pieces_;
  int unk_id_ = -1;
};

PieceToId vocab_object(const nlohmann::json& model, const std::string& where) {
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    throw ModelError(where + ": key \"model.vocab\" must be an object of \"piece\": id");
  }
  const nlohmann::json& vocab = model["vocab"];
  PieceToId result;
  result.reserve(vocab.size());
  for (const auto& [piece, id] : vocab.items()) {
    result.insert_or_assign(piece,
                            id_value(id, "model.vocab[\"" + piece.substr(0, 80) + "\"]", where));
  }
  return result;
}

}  // namespace

std::unique_ptr<Model> make_wordpiece_model(PieceToId vocab, const WordPieceModelOptions& options,
                                            const std::string& where, int slack) {
  return std::make_unique<WordPieceModel>(std::move(vocab), options, where, slack);
}

std::unique_ptr<Model> make_model(const nlohmann::json& json, const std::string& where, int slack) {
  const std::string here = where + " model";
  if (!json.is_object()) throw ModelError(where + ": key \"model\" must be an object");
  const std::string type = optional_string(json, "type", "BPE", here);
  if (type == "BPE") {
    BpeOptions o;
    o.unk_token = optional_string(json, "unk_token", "", here);
    o.continuing_subword_prefix = optional_string(json, "continuing_subword_prefix", "", here);
    o.end_of_word_suffix = optional_string(json, "end_of_word_suffix", "", here);
    o.byte_fallback = bool_field(json, "byte_fallback", false, here);
    o.fuse_unk = bool_field(json, "fuse_unk", false, here);
    o.ignore_merges = bool_field(json, "ignore_merges", false, here);
    if (json.contains("dropout") && json["dropout"].is_number() &&
        json["dropout"].get<double>() > 0.0) {
      throw ModelError(here + ": dropout is random; attnscope needs one tokenization (set null)");
    }
    std::vector<std::pair<std::string, std::string>> merges;
    const nlohmann::json& list = array_field(json, "merges", here);
    merges.reserve(list.size());
    for (const nlohmann::json& merge : list) {
      if (merge.is_string()) {
        const std::string& text = merge.get_ref<const std::string&>();
        const std::size_t space = text.find(' ');
        if (space == std::string::npos) {
          throw ModelError(here + ": merge \"" + text.substr(0, 80) + "\" has no space");
        }
        merges.emplace_back(text.substr(0, space), text.substr(space + 1));
      } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
                 merge[1].is_string()) {
        merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
      } else {
        throw ModelError(here + ": a merge is neither \"a b\" nor [\"a\", \"b\"]");
      }
    }
    PieceToId vocab = vocab_object(json, here);
    checked_vocab_size(vocab, where + " model.vocab", slack);
    return make_bpe_model(std::move(vocab), merges, o, where, slack);
  }
  if (type == "WordPiece") {
    WordPieceModelOptions o;
    o.unk_token = optional_string(json, "unk_token", "[UNK]", here);
    o.continuing_subword_prefix = optional_string(json, "continuing_subword_prefix", "##", here);
    if (json.contains("max_input_chars_per_word") &&
        json["max_input_chars_per_word"].is_number_integer()) {
      o.max_input_chars_per_word = json["max_input_chars_per_word"].get<int>();
    }
    PieceToId vocab = vocab_object(json, here);
    checked_vocab_size(vocab, where + " model.vocab", slack);
    return make_wordpiece_model(std::move(vocab), o, where, slack);
  }
  if (type == "Unigram") return make_unigram_model(json, where);
  throw ModelError(where + ": model type \"" + type +
                   "\" is not supported (BPE, WordPiece and Unigram are)");
}

}  // namespace attnscope::text
