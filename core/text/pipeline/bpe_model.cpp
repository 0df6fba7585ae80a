// Hugging Face's BPE model: characters (or their byte-fallback pieces, or unk) merged by rank,
// lowest rank first, then leftmost, with a word cache.
#include <algorithm>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "core/text/pipeline/models.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope::text {
namespace {

std::uint64_t pair_key(int left, int right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

struct Merge {
  int rank;
  int new_id;
};

// The merge table, searched for every symbol pair of every word: open addressing with linear
// probing over one flat array, several times faster than std::unordered_map's node chains.
class MergeTable {
 public:
  void reserve(std::size_t count) {
    std::size_t capacity = 16;
    while (capacity < 2 * count) capacity *= 2;
    slots_.assign(capacity, Slot{kEmpty, {0, 0}});
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c /= 2) --shift_;
  }
  // Later merges of the same pair win, as when Hugging Face collects its merge map.
  void insert_or_assign(std::uint64_t key, Merge merge) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = index(key);
    while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask_;
    if (slots_[i].key == kEmpty) ++size_;
    slots_[i] = {key, merge};
  }
  const Merge* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = index(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].merge;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~0ULL;  // no pair of two non-negative ids gives this
  struct Slot {
    std::uint64_t key;
    Merge merge;
  };
  std::size_t index(std::uint64_t key) const {
    // Fibonacci hashing: the top bits of the product depend on every bit of both ids.
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    reserve(std::max<std::size_t>(16, old.size()));
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != kEmpty) insert_or_assign(s.key, s.merge);
    }
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

// A symbol of a word being merged: a doubly linked list over a vector, as Hugging Face's Word.
struct Symbol {
  int id;
  int start;   // byte offset in the piece
  int length;  // bytes; 0 once merged into its left neighbour
  int prev;
  int next;
};

struct QueuedMerge {
  int pos;
  int rank;
  int new_id;
  bool operator<(const QueuedMerge& other) const {  // lowest rank first, then leftmost
    if (rank != other.rank) return rank > other.rank;
    return pos > other.pos;
  }
};

constexpr std::size_t kCacheCapacity = 10000;  // Hugging Face's default BPE cache size
constexpr std::size_t kMaxCachedBytes = 256;   // …and its MAX_LENGTH for cached words

class BpeModel final : public Model {
 public:
  BpeModel(PieceToId vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           const BpeOptions& options, const std::string& where, int slack)
      : vocab_(std::move(vocab)), o_(options) {
    const int size = checked_vocab_size(vocab_, where, slack);
    pieces_.assign(static_cast<std::size_t>(size), std::string());
    bmp_char_id_.assign(0x10000, -1);
    for (const auto& [piece, id] : vocab_) {
      pieces_[static_cast<std::size_t>(id)] = piece;
      const unicode::CodePoint cp = unicode::decode_at(piece, 0);
      if (!piece.empty() && cp.valid && static_cast<std::size_t>(cp.length) == piece.size() &&
          cp.value < 0x10000) {
        bmp_char_id_[cp.value] = id;
      }
    }
    if (!o_.unk_token.empty()) {
      const auto it = vocab_.find(o_.unk_token);
      if (it == vocab_.end()) {
        throw ModelError(where + ": model.unk_token \"" + o_.unk_token +
                         "\" is not in the vocabulary");
      }
      unk_id_ = it->second;
    }
    static const char* kHex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      const std::string name = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
      const auto it = vocab_.find(name);
      byte_id_[b] = it == vocab_.end() ? -1 : it->second;
    }
    simple_chars_ = o_.continuing_subword_prefix.empty() && o_.end_of_word_suffix.empty();
    merges_.reserve(merges.size());
    const std::size_t prefix = o_.continuing_subword_prefix.size();
    std::string joined;
    int rank = 0;
    for (const auto& [left, right] : merges) {
      const auto l = vocab_.find(left);
      const auto r = vocab_.find(right);
      joined.assign(left);
      joined.append(right.size() >= prefix ? std::string_view(right).substr(prefix)
                                           : std::string_view(right));
      const auto m = vocab_.find(joined);
      if (l == vocab_.end() || r == vocab_.end() || m == vocab_.end()) {
        const std::string shown = left.size() + right.size() > 80
                                      ? (left + " " + right).substr(0, 80) + "..."
                                      : left + " " + right;
        throw ModelError(where + ": merge " + std::to_string(rank) + " \"" + shown +
                         "\" uses a token that is not in the vocabulary");
      }
      // Later merges of the same pair win, as when Hugging Face collects its merge map.
      merges_.insert_or_assign(pair_key(l->second, r->second), Merge{rank, m->second});
      ++rank;
    }
  }

  void tokenize(std::string_view piece, std::vector<ModelToken>& out) const override {
    if (piece.empty()) return;
    if (o_.ignore_merges) {
      if (const auto it = vocab_.find(piece); it != vocab_.end()) {
        out.push_back({it->second, 0, static_cast<int>(piece.size())});
        return;
      }
    }
    const bool cacheable = piece.size() < kMaxCachedBytes;
    if (cacheable) {
      std::lock_guard lock(cache_mutex_);
      if (const auto it = cache_.find(piece); it != cache_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        return;
      }
    }
    const std::size_t first = out.size();
    merge_word(piece, out);
    if (cacheable) {
      std::lock_guard lock(cache_mutex_);
      if (cache_.size() < kCacheCapacity) {
        cache_.emplace(std::string(piece), std::vector<ModelToken>(out.begin() + first, out.end()));
      }
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
  std::string description() const override {
    return std::string("BPE") + (o_.byte_fallback ? " with byte fallback" : "");
  }

 private:
  int char_id(std::string_view text, std::size_t pos, const unicode::CodePoint& cp, bool is_first,
              bool is_last, std::string& scratch) const {
    if (simple_chars_) {
      if (cp.value < 0x10000) return bmp_char_id_[cp.value];
      const auto it = vocab_.find(text.substr(pos, static_cast<std::size_t>(cp.length)));
      return it == vocab_.end() ? -1 : it->second;
    }
    scratch.clear();
    if (!is_first) scratch += o_.continuing_subword_prefix;
    scratch.append(text.substr(pos, static_cast<std::size_t>(cp.length)));
    if (is_last) scratch += o_.end_of_word_suffix;
    const auto it = vocab_.find(scratch);
    return it == vocab_.end() ? -1 : it->second;
  }

  // Hugging Face's merge_word then merge_all.
  void merge_word(std::string_view word, std::vector<ModelToken>& out) const {
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    auto add = [&](int id, int start, int length) {
      const int index = static_cast<int>(symbols.size());
      symbols.push_back({id, start, length, index - 1, index + 1});
    };
    int unk_start = -1;
    int unk_length = 0;
    auto flush_unk = [&] {
      if (unk_start >= 0) add(unk_id_, unk_start, unk_length);
      unk_start = -1;
    };
    std::string scratch;
    for (std::size_t pos = 0; pos < word.size();) {
      const unicode::CodePoint cp = unicode::decode_at(word, pos);
      const int start = static_cast<int>(pos);
      pos += static_cast<std::size_t>(cp.length);
      const int id = char_id(word, start, cp, start == 0, pos >= word.size(), scratch);
      if (id >= 0) {
        flush_unk();
        add(id, start, cp.length);
        continue;
      }
      if (o_.byte_fallback) {
        bool all = true;
        for (int k = 0; k < cp.length; ++k) {
          all = all && byte_id_[static_cast<unsigned char>(word[start + k])] >= 0;
        }
        if (all) {
          // Hugging Face keeps a pending unk here and adds it after these bytes.
          for (int k = 0; k < cp.length; ++k) {
            add(byte_id_[static_cast<unsigned char>(word[start + k])], start + k, 1);
          }
          continue;
        }
      }
      if (unk_id_ < 0) continue;  // no unk token: the character is dropped, as in Hugging Face
      if (unk_start >= 0 && o_.fuse_unk) {
        unk_length += cp.length;
      } else {
        flush_unk();
        unk_start = start;
        unk_length = cp.length;
      }
    }
    flush_unk();
    if (symbols.empty()) return;
    symbols.back().next = -1;

    std::priority_queue<QueuedMerge> queue;
    auto push_pair = [&](int pos) {
      const int next = symbols[pos].next;
      if (next < 0) return;
      if (const Merge* m = merges_.find(pair_key(symbols[pos].id, symbols[next].id))) {
        queue.push({pos, m->rank, m->new_id});
      }
    };
    for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) push_pair(i);
    while (!queue.empty()) {
      const QueuedMerge top = queue.top();
      queue.pop();
      Symbol& left = symbols[top.pos];
      if (left.length == 0 || left.next < 0) continue;
      Symbol& right = symbols[left.next];
      const Merge* m = merges_.find(pair_key(left.id, right.id));
      if (m == nullptr || m->new_id != top.new_id) continue;  // stale entry
      left.id = top.new_id;
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (left.next >= 0) symbols[left.next].prev = top.pos;
      if (left.prev >= 0) push_pair(left.prev);
      push_pair(top.pos);
    }
    for (const Symbol& s : symbols) {
      if (s.length > 0) out.push_back({s.id, s.start, s.start + s.length});
    }
  }

  PieceToId vocab_;
  BpeOptions o_;
  std::vector<std::string> pieces_;
  std::vector<int> bmp_char_id_;  // id of the one-character piece, by code point (BMP)
  std::array<int, 256> byte_id_{};
  MergeTable merges_;
  int unk_id_ = -1;
  bool simple_chars_ = true;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<ModelToken>, StringHash, std::equal_to<>>
      cache_;
};

}  // namespace

int checked_vocab_size(const PieceToId& vocab, const std::string& where, int slack) {
  long long max_id = -1;
  for (const auto& [piece, id] : vocab) {
    if (id < 0) {
      throw ModelError(where + ": vocabulary entry \"" + piece.substr(0, 80) +
                       "\" has the negative id " + std::to_string(id));
    }
    max_id = std::max<long long>(max_id, id);
  }
  // Ids are dense in every real vocabulary; allow gaps, but never a table far larger than the file.
  const long long limit = 2LL * static_cast<long long>(vocab.size()) + slack + 1024;
  if (max_id >= limit) {
    throw ModelError(where + ": vocabulary id " + std::to_string(max_id) + " is far beyond its " +
                     std::to_string(vocab.size()) + " entries (at most " +
                     std::to_string(limit - 1) + " accepted)");
  }
  return static_cast<int>(max_id + 1);
}

std::unique_ptr<Model> make_bpe_model(
    PieceToId vocab, const std::vector<std::pair<std::string, std::string>>& merges,
    const BpeOptions& options, const std::string& where, int slack) {
  return std::make_unique<BpeModel>(std::move(vocab), merges, options, where, slack);
}

}  // namespace attnscope::text
