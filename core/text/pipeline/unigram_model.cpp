// Hugging Face's Unigram model (T5, XLM-RoBERTa, Marian, ALBERT): the segmentation of a piece
// whose pieces' scores sum highest (Viterbi over a lattice of every vocabulary match), as
// tokenizers' unigram/model.rs encode_optimized does it, after SentencePiece's unigram_model.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/text/pipeline/json_fields.h"
#include "core/text/pipeline/models.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope::text {
namespace {

// What an unknown character scores: below every piece, so that any segmentation with known
// pieces wins (tokenizers' K_UNK_PENALTY, SentencePiece's kUnkPenalty).
constexpr double kUnkPenalty = 10.0;

// Longer pieces than this are refused at load: matching is O(text x longest piece), and the
// longest piece of a real SentencePiece vocabulary is a few dozen bytes (max_sentencepiece_length
// defaults to 16 characters).
constexpr std::size_t kMaxPieceBytes = 1024;

struct Piece {
  std::string text;
  double score;
};

class UnigramModel final : public Model {
 public:
  UnigramModel(std::vector<Piece> vocab, int unk_id, bool byte_fallback)
      : vocab_(std::move(vocab)), unk_id_(unk_id), byte_fallback_(byte_fallback) {
    ids_.reserve(vocab_.size());
    for (std::size_t id = 0; id < vocab_.size(); ++id) {
      // A piece listed twice is looked up as its last id, as tokenizers' token_to_ids keeps it.
      ids_.insert_or_assign(vocab_[id].text, static_cast<int>(id));
      min_score_ = std::min(min_score_, vocab_[id].score);
    }
    // The distinct non-empty pieces, sorted by bytes: the prefix search below walks them as a
    // trie, without building one (an empty piece never matches, as in tokenizers' trie).
    for (const auto& [text, id] : ids_) {
      if (!text.empty()) sorted_.push_back(id);
    }
    std::sort(sorted_.begin(), sorted_.end(),
              [&](int a, int b) { return vocab_[a].text < vocab_[b].text; });
    static const char* kHex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      const std::string name = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
      const auto it = ids_.find(name);
      byte_id_[b] = it == ids_.end() ? -1 : it->second;
    }
  }

  void tokenize(std::string_view piece, std::vector<ModelToken>& out) const override {
    if (piece.empty()) return;
    for (const auto& [start, end] : best_segmentation(piece)) {
      const std::string_view text = piece.substr(start, end - start);
      if (const auto it = ids_.find(text); it != ids_.end()) {
        out.push_back({it->second, start, end});
        continue;
      }
      if (byte_fallback_) {
        bool all = true;
        for (char c : text) all = all && byte_id_[static_cast<unsigned char>(c)] >= 0;
        if (all) {
          // Every byte's token covers the whole unknown run, as tokenizers gives them.
          for (char c : text) out.push_back({byte_id_[static_cast<unsigned char>(c)], start, end});
          continue;
        }
      }
      out.push_back({unk_id_, start, end});  // an unknown run exists only when unk_id_ does
    }
  }

  int token_to_id(std::string_view piece) const override {
    const auto it = ids_.find(piece);
    return it == ids_.end() ? -1 : it->second;
  }
  const std::string* id_to_token(int id) const override {
    if (id < 0 || id >= static_cast<int>(vocab_.size())) return nullptr;
    return &vocab_[static_cast<std::size_t>(id)].text;
  }
  int size() const override { return static_cast<int>(vocab_.size()); }
  int unk_id() const override { return unk_id_; }
  bool unknown_shows_text() const override { return true; }
  std::string description() const override {
    return std::string("Unigram") + (byte_fallback_ ? " with byte fallback" : "");
  }

 private:
  // The ids of the vocabulary pieces that are prefixes of `text`, shortest first (tokenizers'
  // common_prefix_search). `sorted_` is walked as a trie: the pieces that share the first d
  // bytes of `text` are one range of it, and among them the one of exactly d + 1 bytes, if any,
  // sorts first in the sub-range of those that continue with text[d].
  template <typename Visit>
  void prefix_matches(std::string_view text, Visit visit) const {
    auto lo = sorted_.begin();
    auto hi = sorted_.end();
    for (std::size_t d = 0; d < text.size() && lo != hi; ++d) {
      const auto c = static_cast<unsigned char>(text[d]);
      // Within [lo, hi) every piece has at least d bytes; one of exactly d bytes sorts first.
      auto byte_at = [&](int id) {
        const std::string& s = vocab_[static_cast<std::size_t>(id)].text;
        return s.size() > d ? static_cast<int>(static_cast<unsigned char>(s[d])) : -1;
      };
      lo = std::lower_bound(lo, hi, static_cast<int>(c),
                            [&](int id, int value) { return byte_at(id) < value; });
      hi = std::upper_bound(lo, hi, static_cast<int>(c),
                            [&](int value, int id) { return value < byte_at(id); });
      if (lo != hi && vocab_[static_cast<std::size_t>(*lo)].text.size() == d + 1) {
        visit(*lo, static_cast<int>(d + 1));
      }
    }
  }

  // The best path's pieces as byte ranges of `piece`, consecutive unknown characters fused.
  std::vector<std::pair<int, int>> best_segmentation(std::string_view piece) const {
    struct Node {
      int id = 0;
      double score = 0.0;  // of the best path ending here
      int starts_at = -1;  // -1: no path ends here yet
    };
    const int size = static_cast<int>(piece.size());
    std::vector<Node> best(static_cast<std::size_t>(size) + 1);
    const double unk_score = min_score_ - kUnkPenalty;
    for (int start = 0; start < size;) {
      const double here = best[static_cast<std::size_t>(start)].score;
      const int char_length = unicode::decode_at(piece, static_cast<std::size_t>(start)).length;
      bool has_single_char = false;
      auto offer = [&](int end, int id, double score) {
        Node& node = best[static_cast<std::size_t>(end)];
        if (node.starts_at < 0 || score + here > node.score) node = {id, score + here, start};
      };
      prefix_matches(piece.substr(static_cast<std::size_t>(start)), [&](int id, int length) {
        offer(start + length, id, vocab_[static_cast<std::size_t>(id)].score);
        has_single_char = has_single_char || length == char_length;
      });
      if (!has_single_char) {
        if (unk_id_ < 0) {
          throw ModelError(
              "the text has a character the Unigram vocabulary lacks (\"" +
              unicode::printable_utf8(piece.substr(static_cast<std::size_t>(start),
                                                   static_cast<std::size_t>(char_length))) +
              "\") and the tokenizer has no unk_id");
        }
        offer(start + char_length, unk_id_, unk_score);
      }
      start += char_length;
    }
    std::vector<std::pair<int, int>> result;
    int unknown_start = -1, unknown_end = -1;  // the run of unknowns being fused, if any
    for (int end = size; end > 0;) {
      const Node& node = best[static_cast<std::size_t>(end)];
      if (node.id == unk_id_) {
        if (unknown_start < 0) unknown_end = end;
        unknown_start = node.starts_at;
      } else {
        if (unknown_start >= 0) result.emplace_back(unknown_start, unknown_end);
        unknown_start = -1;
        result.emplace_back(node.starts_at, end);
      }
      end = node.starts_at;
    }
    if (unknown_start >= 0) result.emplace_back(unknown_start, unknown_end);
    std::reverse(result.begin(), result.end());
    return result;
  }

  std::vector<Piece> vocab_;
  PieceToId ids_;
  std::vector<int> sorted_;  // ids of the distinct non-empty pieces, by their bytes
  std::array<int, 256> byte_id_{};
  double min_score_ = std::numeric_limits<double>::infinity();
  int unk_id_ = -1;
  bool byte_fallback_ = false;
};

}  // namespace

std::unique_ptr<Model> make_unigram_model(const nlohmann::json& json, const std::string& where) {
  const std::string here = where + " model";
  const nlohmann::json& list = array_field(json, "vocab", here);
  std::vector<Piece> vocab;
  vocab.reserve(list.size());
  for (const nlohmann::json& entry : list) {
    const std::string what = here + ": vocab[" + std::to_string(vocab.size()) + "]";
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string()) {
      throw ModelError(what + " must be [\"piece\", score]");
    }
    const std::string& text = entry[0].get_ref<const std::string&>();
    if (!entry[1].is_number() || !std::isfinite(entry[1].get<double>())) {
      throw ModelError(what + " (\"" + unicode::printable_utf8(text.substr(0, 80)) +
                       "\") has the score " + entry[1].dump().substr(0, 40) +
                       ", not a finite number");
    }
    if (text.size() > kMaxPieceBytes) {
      throw ModelError(what + " is a piece of " + std::to_string(text.size()) + " bytes; at most " +
                       std::to_string(kMaxPieceBytes) + " are accepted");
    }
    if (!unicode::is_valid_utf8(text)) throw ModelError(what + " is not valid UTF-8");
    vocab.push_back({text, entry[1].get<double>()});
  }
  int unk_id = -1;
  if (json.contains("unk_id") && !json["unk_id"].is_null()) {
    unk_id = id_value(json["unk_id"], "model.unk_id", here);
    if (unk_id >= static_cast<int>(vocab.size())) {
      throw ModelError(here + ": model.unk_id " + std::to_string(unk_id) +
                       " is not in the vocabulary of " + std::to_string(vocab.size()) + " pieces");
    }
  }
  if (vocab.size() >= 0x7FFFFFFF) throw ModelError(here + ": the vocabulary is too large");
  return std::make_unique<UnigramModel>(std::move(vocab), unk_id,
                                        bool_field(json, "byte_fallback", false, here));
}

}  // namespace attnscope::text
