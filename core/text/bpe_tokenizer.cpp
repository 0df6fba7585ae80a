#include "core/text/bpe_tokenizer.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>
#include <unordered_map>

#include "core/text/added_tokens.h"
#include "core/text/tokenizer_common.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes are
// mapped in order onto U+0100, U+0101, … so that every byte is a visible, non-space character.
std::array<char32_t, 256> bytes_to_unicode() {
  std::array<char32_t, 256> table{};
  char32_t next_free = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    table[b] = printable ? static_cast<char32_t>(b) : next_free++;
  }
  return table;
}

std::uint64_t pair_key(int left, int right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

// The character classes the pre-tokenization regex distinguishes.
enum class CharClass : std::uint8_t { kLetter, kNumber, kSpace, kOther };

CharClass classify(char32_t cp) {
  if (unicode::is_letter(cp)) return CharClass::kLetter;
  if (unicode::is_number(cp)) return CharClass::kNumber;
  if (unicode::is_white_space(cp)) return CharClass::kSpace;
  return CharClass::kOther;  // includes U+FFFD, which stands for each invalid byte
}

struct Merge {
  int rank;
  int new_id;
};

// One symbol of a word being merged: a doubly linked list over a vector, as in Hugging Face's Word.
struct Symbol {
  int id;
  int start;   // byte offset in the word
  int length;  // bytes; 0 once merged into its left neighbour
  int prev;
  int next;
};

struct QueuedMerge {
  int pos;
  int rank;
  int new_id;
  // Lowest rank first, then leftmost position: the order Hugging Face's BPE applies merges in.
  bool operator<(const QueuedMerge& other) const {
    if (rank != other.rank) return rank > other.rank;
    return pos > other.pos;
  }
};

// A word's BPE result: the token ids and the bytes [start, start + length) of the word each covers
// (a byte missing from the vocabulary has no token, so the pieces need not be contiguous).
struct WordPieces {
  std::vector<int> ids;
  std::vector<int> starts;
  std::vector<int> lengths;
};

// Hugging Face's ByteLevel post-processor with trim_offsets: a token's offsets leave out the
// spaces at its ends, counted in characters of its piece ("Ġ" or white space). Its rule that the
// first token keeps one leading space when add_prefix_space is on is kept too.
void trim_space_from_offsets(Tokens& tokens, bool add_prefix_space) {
  auto is_space = [](char32_t c) { return c == 0x120 || unicode::is_white_space(c); };
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    Token& token = tokens[i];
    const std::vector<unicode::CodePoint> chars = unicode::decode_utf8(token.text);
    int leading = 0;
    while (leading < static_cast<int>(chars.size()) && is_space(chars[leading].value)) ++leading;
    int trailing = 0;
    while (trailing < static_cast<int>(chars.size()) &&
           is_space(chars[chars.size() - 1 - trailing].value)) {
      ++trailing;
    }
    if (leading > 0) {
      const bool is_first = i == 0 || token.start == 0;
      if (is_first && add_prefix_space && leading == 1) leading = 0;
      token.start = std::min(token.start + leading, token.end);
    }
    if (trailing > 0 && token.end >= trailing) {
      token.end = std::max(token.end - trailing, token.start);
    }
  }
}

constexpr std::size_t kCacheCapacity = 10000;  // Hugging Face's default BPE cache size
constexpr std::size_t kMaxCachedWordBytes = 256;

}  // namespace

struct BpeTokenizer::Impl {
  PieceToId vocab;
  std::vector<std::string> pieces;  // id -> piece; "" where an id is unused
  std::array<std::string, 256> byte_piece;
  std::array<int, 256> byte_id{};
  std::unordered_map<char32_t, int> piece_char_to_byte;
  std::unordered_map<std::uint64_t, Merge> merges;
  std::vector<AddedToken> added;
  bool add_prefix_space = false;
  bool trim_offsets = false;
  std::string merge_scratch;  // reused while loading, to build "left" + "right" without allocating

  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, WordPieces, StringHash, std::equal_to<>> cache;

  void set_vocab(PieceToId vocab_in);
  void add_merge(std::string_view left, std::string_view right, int rank);
  void add_token(const AddedToken& token);
  WordPieces bpe(std::string_view word) const;
  // Sets `out` to the BPE of `word`, from the cache when it is there.
  void bpe_cached(std::string_view word, WordPieces& out) const;
};

void BpeTokenizer::Impl::set_vocab(PieceToId vocab_in) {
  vocab = std::move(vocab_in);
  int max_id = -1;
  for (const auto& [piece, id] : vocab) {
    if (id < 0) throw ModelError("the vocabulary has a negative id for \"" + piece + "\"");
    max_id = std::max(max_id, id);
  }
  pieces.assign(static_cast<std::size_t>(max_id + 1), std::string());
  for (const auto& [piece, id] : vocab) pieces[static_cast<std::size_t>(id)] = piece;
  const auto table = bytes_to_unicode();
  for (int b = 0; b < 256; ++b) {
    byte_piece[b] = unicode::to_utf8(table[b]);
    piece_char_to_byte[table[b]] = b;
    const auto it = vocab.find(byte_piece[b]);
    // A byte missing from the vocabulary is dropped, as Hugging Face's BPE does without unk_token.
    byte_id[b] = it == vocab.end() ? -1 : it->second;
  }
}

void BpeTokenizer::Impl::add_merge(std::string_view left, std::string_view right, int rank) {
  const auto left_it = vocab.find(left);
  const auto right_it = vocab.find(right);
  merge_scratch.assign(left);
  merge_scratch.append(right);
  const auto merged_it = vocab.find(merge_scratch);
  if (left_it == vocab.end() || right_it == vocab.end() || merged_it == vocab.end()) {
    throw ModelError("merge \"" + std::string(left) + " " + std::string(right) +
                     "\" uses a token that is not in the vocabulary");
  }
  // The first occurrence of a pair wins, as when Hugging Face builds its merge map.
  merges.emplace(pair_key(left_it->second, right_it->second), Merge{rank, merged_it->second});
}

void BpeTokenizer::Impl::add_token(const AddedToken& token) {
  added.push_back(token);
  if (token.id >= static_cast<int>(pieces.size())) pieces.resize(token.id + 1);
  if (pieces[token.id].empty()) pieces[token.id] = token.content;
}

WordPieces BpeTokenizer::Impl::bpe(std::string_view word) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (std::size_t i = 0; i < word.size(); ++i) {
    const int id = byte_id[static_cast<unsigned char>(word[i])];
    if (id < 0) continue;
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, static_cast<int>(i), 1, index - 1, index + 1});
  }
  if (!symbols.empty()) symbols.back().next = -1;

  std::priority_queue<QueuedMerge> queue;
  auto push_pair = [&](int pos) {
    const int next = symbols[pos].next;
    if (next < 0) return;
    const auto it = merges.find(pair_key(symbols[pos].id, symbols[next].id));
    if (it != merges.end()) queue.push({pos, it->second.rank, it->second.new_id});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) push_pair(i);

  while (!queue.empty()) {
    const QueuedMerge top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.length == 0 || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    // Skip entries made stale by an earlier merge of either symbol.
    const auto it = merges.find(pair_key(left.id, right.id));
    if (it == merges.end() || it->second.new_id != top.new_id) continue;
    left.id = top.new_id;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) push_pair(left.prev);
    push_pair(top.pos);
  }

  WordPieces result;
  for (const Symbol& s : symbols) {
    if (s.length == 0) continue;
    result.ids.push_back(s.id);
    result.starts.push_back(s.start);
    result.lengths.push_back(s.length);
  }
  return result;
}

void BpeTokenizer::Impl::bpe_cached(std::string_view word, WordPieces& out) const {
  if (word.size() > kMaxCachedWordBytes) {
    out = bpe(word);
    return;
  }
  {
    std::lock_guard lock(cache_mutex);
    const auto it = cache.find(word);
    if (it != cache.end()) {
      out.ids.assign(it->second.ids.begin(), it->second.ids.end());
      out.starts.assign(it->second.starts.begin(), it->second.starts.end());
      out.lengths.assign(it->second.lengths.begin(), it->second.lengths.end());
      return;
    }
  }
  out = bpe(word);
  std::lock_guard lock(cache_mutex);
  if (cache.size() < kCacheCapacity) cache.emplace(std::string(word), out);
}

BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpeTokenizer::BpeTokenizer(BpeTokenizer&&) noexcept = default;
BpeTokenizer& BpeTokenizer::operator=(BpeTokenizer&&) noexcept = default;
BpeTokenizer::~BpeTokenizer() = default;

namespace {

PieceToId vocab_from_json(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) throw ModelError(where + ": the vocabulary is not a JSON object");
  PieceToId vocab;
  vocab.reserve(json.size());
  for (const auto& [piece, id] : json.items()) {
    if (!id.is_number_integer())
      throw ModelError(where + ": the id of \"" + piece + "\" is not an integer");
    vocab.emplace(piece, id.get<int>());
  }
  return vocab;
}

}  // namespace

BpeTokenizer BpeTokenizer::from_files(const std::filesystem::path& vocab_json,
                                      const std::filesystem::path& merges_txt) {
  auto impl = std::make_unique<Impl>();
  impl->set_vocab(read_vocab_json(vocab_json));

  const std::string merges = read_text_file(merges_txt, "merges file");
  impl->merges.reserve(static_cast<std::size_t>(std::count(merges.begin(), merges.end(), '\n')));
  std::size_t line_start = 0;
  int rank = 0;
  int line_number = 0;
  while (line_start < merges.size()) {
    std::size_t line_end = merges.find('\n', line_start);
    if (line_end == std::string::npos) line_end = merges.size();
    std::string_view line(merges.data() + line_start, line_end - line_start);
    line_start = line_end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.starts_with("#version")) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
      throw ModelError(merges_txt.string() + " line " + std::to_string(line_number) +
                       ": expected two tokens separated by one space");
    }
    try {
      impl->add_merge(line.substr(0, space), line.substr(space + 1), rank++);
    } catch (const ModelError& e) {
      throw ModelError(merges_txt.string() + " line " + std::to_string(line_number) + ": " +
                       e.what());
    }
  }
  // GPT2TokenizerFast recognises its end-of-text token in the text when loaded from these files.
  if (const auto it = impl->vocab.find("<|endoftext|>"); it != impl->vocab.end()) {
    impl->add_token({"<|endoftext|>", it->second, false, false});
  }
  return BpeTokenizer(std::move(impl));
}

BpeTokenizer BpeTokenizer::from_tokenizer_json(const std::filesystem::path& tokenizer_json) {
  const nlohmann::json json = read_json_file(tokenizer_json, "tokenizer file");
  const std::string where = tokenizer_json.string();
  const auto& model = json.contains("model") ? json["model"] : nlohmann::json();
  if (!model.is_object() || model.value("type", std::string()) != "BPE") {
    throw ModelError(where + ": the tokenizer model is not BPE");
  }
  // Refuse what this byte-level BPE does not implement rather than give different ids silently.
  if (json.contains("normalizer") && !json["normalizer"].is_null()) {
    throw ModelError(where + ": a normalizer in front of byte-level BPE is not supported");
  }
  const auto prefix = model.value("continuing_subword_prefix", nlohmann::json());
  const auto suffix = model.value("end_of_word_suffix", nlohmann::json());
  if (model.value("byte_fallback", false) || !(prefix.is_null() || prefix == "") ||
      !(suffix.is_null() || suffix == "")) {
    throw ModelError(where +
                     ": only GPT-2 style byte-level BPE is supported (no byte_fallback, "
                     "subword prefix or word suffix)");
  }
  const nlohmann::json pre = json.value("pre_tokenizer", nlohmann::json());
  const nlohmann::json* byte_level = nullptr;
  if (pre.is_object() && pre.value("type", std::string()) == "ByteLevel") {
    byte_level = &pre;
  } else if (pre.is_object() && pre.value("type", std::string()) == "Sequence" &&
             pre.contains("pretokenizers") && pre["pretokenizers"].size() == 1 &&
             pre["pretokenizers"][0].value("type", std::string()) == "ByteLevel") {
    byte_level = &pre["pretokenizers"][0];
  }
  if (byte_level == nullptr || !byte_level->value("use_regex", true)) {
    throw ModelError(where + ": the pre-tokenizer is not GPT-2's ByteLevel one");
  }

  auto impl = std::make_unique<Impl>();
  impl->add_prefix_space = byte_level->value("add_prefix_space", false);
  const nlohmann::json post = json.value("post_processor", nlohmann::json());
  if (post.is_object() && post.value("type", std::string()) == "ByteLevel") {
    impl->trim_offsets = post.value("trim_offsets", false);
  }
  impl->set_vocab(vocab_from_json(model.value("vocab", nlohmann::json()), where));
  const nlohmann::json merges = model.value("merges", nlohmann::json::array());
  int rank = 0;
  for (const auto& merge : merges) {
    try {
      if (merge.is_string()) {
        const std::string text = merge.get<std::string>();
        const std::size_t space = text.find(' ');
        if (space == std::string::npos) throw ModelError("merge \"" + text + "\" has no space");
        impl->add_merge(std::string_view(text).substr(0, space),
                        std::string_view(text).substr(space + 1), rank++);
      } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
                 merge[1].is_string()) {
        impl->add_merge(merge[0].get<std::string>(), merge[1].get<std::string>(), rank++);
      } else {
        throw ModelError("a merge is neither \"a b\" nor [\"a\", \"b\"]");
      }
    } catch (const ModelError& e) {
      throw ModelError(where + ": " + e.what());
    }
  }
  for (const auto& token : json.value("added_tokens", nlohmann::json::array())) {
    impl->add_token({token.value("content", std::string()), token.value("id", -1),
                     token.value("lstrip", false), token.value("rstrip", false)});
  }
  return BpeTokenizer(std::move(impl));
}

std::vector<std::pair<int, int>> BpeTokenizer::pre_tokenize(std::string_view text) {
  // The GPT-2 pattern, applied by hand (leftmost-first alternation, as Rust's regex engines do):
  //   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  std::vector<unicode::CodePoint> cps = unicode::decode_utf8(text);
  std::vector<CharClass> classes(cps.size());
  for (std::size_t i = 0; i < cps.size(); ++i) classes[i] = classify(cps[i].value);
  const std::size_t n = cps.size();
  auto value = [&](std::size_t i) { return i < n ? cps[i].value : char32_t{0}; };

  std::vector<std::pair<int, int>> words;
  auto emit = [&](std::size_t first, std::size_t last) {  // code points [first, last)
    words.emplace_back(cps[first].start, cps[last - 1].start + cps[last - 1].length);
  };
  std::size_t i = 0;
  while (i < n) {
    if (cps[i].value == '\'') {
      const char32_t a = value(i + 1);
      const char32_t b = value(i + 2);
      if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        emit(i, i + 2);
        i += 2;
        continue;
      }
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        emit(i, i + 3);
        i += 3;
        continue;
      }
    }
    // ` ?X+` for the letter, number and "other" classes: one optional U+0020 in front.
    std::size_t run = i;
    if (cps[i].value == ' ' && i + 1 < n && classes[i + 1] != CharClass::kSpace) run = i + 1;
    const CharClass run_class = classes[run];
    if (run_class != CharClass::kSpace) {
      std::size_t end = run + 1;
      while (end < n && classes[end] == run_class) ++end;
      emit(i, end);
      i = end;
      continue;
    }
    // White space: `\s+(?!\S)` keeps the last space for the next word when one follows, else `\s+`.
    std::size_t end = i + 1;
    while (end < n && classes[end] == CharClass::kSpace) ++end;
    if (end < n && end - i >= 2) --end;
    emit(i, end);
    i = end;
  }
  return words;
}

Tokens BpeTokenizer::encode(std::string_view text) const {
  Tokens tokens;
  // Each byte's token offsets cover the whole code point it belongs to, as Hugging Face aligns
  // byte-level characters to the original character: char_start/char_end per byte of `text`.
  std::vector<int> char_start(text.size());
  std::vector<int> char_end(text.size());
  for (std::size_t offset = 0; offset < text.size();) {
    const unicode::CodePoint cp = unicode::decode_at(text, offset);
    for (int k = 0; k < cp.length; ++k) {
      char_start[offset + k] = cp.start;
      char_end[offset + k] = cp.start + cp.length;
    }
    offset += static_cast<std::size_t>(cp.length);
  }

  std::string prefixed_segment;
  WordPieces pieces;
  for (const TextPiece& piece : split_on_added_tokens(text, impl_->added)) {
    if (piece.added_index >= 0) {
      tokens.push_back(added_piece_token(text, piece, impl_->added));
      continue;
    }
    const std::string_view segment = text.substr(piece.start, piece.end - piece.start);
    // add_prefix_space puts a space in front of the segment before the pattern runs, aligned with
    // the segment's first character (as Hugging Face's NormalizedString::prepend aligns it).
    const bool prefixed = impl_->add_prefix_space && !segment.starts_with(' ');
    std::string_view source = segment;
    if (prefixed) {
      prefixed_segment.assign(1, ' ');
      prefixed_segment.append(segment);
      source = prefixed_segment;
    }
    const int shift = prefixed ? 1 : 0;
    // Byte `p` of `source` as a byte of `text`.
    auto text_byte = [&](int p) { return piece.start + std::max(p - shift, 0); };
    for (const auto& [word_start, word_end] : pre_tokenize(source)) {
      impl_->bpe_cached(source.substr(word_start, word_end - word_start), pieces);
      for (std::size_t k = 0; k < pieces.ids.size(); ++k) {
        const int first = word_start + pieces.starts[k];  // bytes of `source`
        const int last = first + pieces.lengths[k] - 1;
        Token token;
        token.id = pieces.ids[k];
        token.text = impl_->pieces[token.id];
        token.start = char_start[text_byte(first)];
        token.end = char_end[text_byte(last)];
        tokens.push_back(std::move(token));
      }
    }
  }
  if (impl_->trim_offsets) trim_space_from_offsets(tokens, impl_->add_prefix_space);
  return tokens;
}

std::string BpeTokenizer::id_to_token(int id) const {
  if (id < 0 || id >= static_cast<int>(impl_->pieces.size())) return {};
  return impl_->pieces[id];
}

std::string BpeTokenizer::decode(int id) const {
  const std::string piece = id_to_token(id);
  for (const AddedToken& added : impl_->added) {
    if (added.id == id) return added.content;
  }
  std::string bytes;
  for (const unicode::CodePoint& cp : unicode::decode_utf8(piece)) {
    const auto it = impl_->piece_char_to_byte.find(cp.value);
    if (it != impl_->piece_char_to_byte.end()) bytes.push_back(static_cast<char>(it->second));
  }
  return bytes;
}

int BpeTokenizer::vocab_size() const {
  return static_cast<int>(impl_->pieces.size());
}

int BpeTokenizer::token_to_id(std::string_view piece) const {
  const auto it = impl_->vocab.find(piece);
  return it == impl_->vocab.end() ? -1 : it->second;
}

}  // namespace attnscope
