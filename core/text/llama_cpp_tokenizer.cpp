#include "core/text/llama_cpp_tokenizer.h"

// llama.cpp's llama_vocab (src/llama-vocab.cpp) for the two models attnscope reads: what it does,
// including its quirks, is the specification here. The references in comments name its functions.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "core/text/llama_cpp_pre.h"
#include "core/text/llama_cpp_split.h"
#include "core/text/pipeline/pre_tokenizers.h"
#include "core/text/tokenizer_common.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

using llama_cpp::PreSpec;
using llama_cpp::SplitKind;

// llama_token_attr bits (llama.h) and the token types of tokenizer.ggml.token_type.
enum Attr : std::uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
};

std::uint32_t attr_of_type(int type) {
  switch (type) {
    case 1:
      return kAttrNormal;
    case 2:
      return kAttrUnknown;
    case 3:
      return kAttrControl;
    case 4:
      return kAttrUserDefined;
    case 5:
      return kAttrUnused;
    case 6:
      return kAttrByte;
    default:
      return kAttrUndefined;
  }
}

// A span of the user's text that processed bytes stand for; start == end for the "▁" SentencePiece
// prepends.
struct Span {
  int start = 0;
  int end = 0;
};

Span join(Span a, Span b) {
  return {std::min(a.start, b.start), std::max(a.end, b.end)};
}

// A piece of the text after special tokens are taken out (tokenizer_st_partition).
struct Fragment {
  int token = -1;  // a special token, or -1 for text
  int offset = 0;
  int length = 0;
};

class LlamaCppTokenizer final : public Tokenizer {
 public:
  LlamaCppTokenizer(LlamaCppVocab vocab, const std::string& where);

  Tokens encode(std::string_view text, bool add_special_tokens) const override;
  std::string decode(int id) const override;
  std::string id_to_token(int id) const override {
    return id >= 0 && id < vocab_size() ? texts_[static_cast<std::size_t>(id)] : std::string();
  }
  int token_to_id(std::string_view piece) const override {
    const auto it = to_id_.find(piece);
    return it == to_id_.end() ? -1 : it->second;
  }
  int vocab_size() const override { return static_cast<int>(texts_.size()); }
  int bos_id() const override { return bos_; }
  int eos_id() const override { return eos_; }
  std::string description() const override { return description_; }
  PieceEncoding piece_encoding() const override {
    return spm_ ? PieceEncoding::kSentencePiece : PieceEncoding::kByteLevel;
  }

 private:
  std::vector<Fragment> partition(std::string_view text) const;
  void push(Tokens& out, int id, Span span) const;
  void encode_spm(std::string_view text, const Fragment& fragment, bool space_prefix,
                  Tokens& out) const;
  void encode_bpe(std::string_view text, const Fragment& fragment, Tokens& out) const;
  int spm_byte_token(unsigned char byte) const;
  int merge_rank(std::string_view left, std::string_view right) const;

  bool spm_ = false;
  PreSpec pre_;
  std::vector<std::string> texts_;
  std::vector<float> scores_;
  std::vector<std::uint32_t> attrs_;
  PieceToId to_id_;
  PieceToId merge_ranks_;            // key: 4 bytes of the left part's length, left, right
  std::vector<int> special_tokens_;  // tokenizer_st_partition's order: longest text first
  std::vector<bool> rstrip_;         // white space after the token is dropped (Phi-3)
  // The special texts as a byte trie (node 0 the root), to find which occur in a text.
  struct TrieNode {
    std::vector<std::pair<unsigned char, std::size_t>> children;
    bool terminal = false;
  };
  std::vector<TrieNode> trie_;
  std::size_t trie_child(std::size_t node, unsigned char byte) const {
    for (const auto& [b, child] : trie_[node].children) {
      if (b == byte) return child;
    }
    return 0;
  }
  std::size_t max_token_length_ = 0;
  int bos_ = -1, eos_ = -1, unk_ = -1;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false;
  std::string description_;
};

std::string merge_key(std::string_view left, std::string_view right) {
  std::string key;
  key.reserve(4 + left.size() + right.size());
  const auto n = static_cast<std::uint32_t>(left.size());
  for (int i = 0; i < 4; ++i) key.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  key.append(left);
  key.append(right);
  return key;
}

LlamaCppTokenizer::LlamaCppTokenizer(LlamaCppVocab v, const std::string& where) {
  if (v.model == "llama") {
    spm_ = true;
  } else if (v.model != "gpt2") {
    throw ModelError(where + ": tokenizer.ggml.model '" + v.model +
                     "' is not one attnscope reads (it reads 'gpt2' and 'llama')");
  }
  const std::size_t n = v.tokens.size();
  if (n == 0) throw ModelError(where + ": tokenizer.ggml.tokens is empty");
  if (n > 0x7FFFFFFF) throw ModelError(where + ": tokenizer.ggml.tokens has too many entries");
  if (!v.scores.empty() && v.scores.size() < n) {
    throw ModelError(where + ": tokenizer.ggml.scores has " + std::to_string(v.scores.size()) +
                     " entries for " + std::to_string(n) + " tokens");
  }
  if (!v.token_types.empty() && v.token_types.size() < n) {
    throw ModelError(where + ": tokenizer.ggml.token_type has " +
                     std::to_string(v.token_types.size()) + " entries for " + std::to_string(n) +
                     " tokens");
  }

  int default_bos = -1, default_eos = -1, default_unk = -1;
  if (spm_) {
    pre_ = PreSpec{};
    add_bos_ = true;
    add_space_prefix_ = true;
    default_bos = 1;
    default_eos = 2;
    default_unk = 0;
    description_ = "GGUF: SentencePiece (llama)";
  } else {
    const auto spec = llama_cpp::pre_spec(v.pre);
    if (!spec) {
      throw ModelError(where + ": tokenizer.ggml.pre '" + v.pre +
                       "' is a pre-tokenizer attnscope does not know (llama.cpp refuses unknown "
                       "ones too)");
    }
    pre_ = *spec;
    add_bos_ = pre_.add_bos;
    default_bos = pre_.no_bos ? -1 : 11;
    default_eos = 11;
    description_ = "GGUF: BPE (" + (v.pre.empty() ? std::string("default") : v.pre) + ")";
    for (std::size_t i = 0; i < v.merges.size(); ++i) {
      const std::string& merge = v.merges[i];
      const std::size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string::npos;
      std::string_view left, right;
      if (space != std::string::npos) {
        left = std::string_view(merge).substr(0, space);
        right = std::string_view(merge).substr(space + 1);
      }
      merge_ranks_.emplace(merge_key(left, right), static_cast<int>(i));  // the first rank stays
    }
  }
  if (v.add_space_prefix >= 0) add_space_prefix_ = v.add_space_prefix != 0;

  texts_ = std::move(v.tokens);
  scores_.assign(n, 0.0f);
  attrs_.assign(n, kAttrNormal);
  to_id_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (texts_[i].empty()) texts_[i] = "[EMPTY_" + std::to_string(i) + "]";
    to_id_[texts_[i]] = static_cast<int>(i);  // a repeated text: the last id, as llama.cpp's map
    max_token_length_ = std::max(max_token_length_, texts_[i].size());
    if (!v.scores.empty()) scores_[i] = v.scores[i];
    if (!v.token_types.empty()) attrs_[i] = attr_of_type(v.token_types[i]);
  }

  // Special ids: the model's default unless the file names one in range.
  auto resolve = [&](int given, int fallback) {
    if (fallback >= static_cast<int>(n)) fallback = -1;
    return given >= 0 && given < static_cast<int>(n) ? given : fallback;
  };
  bos_ = resolve(v.bos_id, default_bos);
  eos_ = resolve(v.eos_id, default_eos);
  unk_ = resolve(v.unk_id, default_unk);
  if (v.add_bos >= 0) add_bos_ = v.add_bos != 0;
  if (v.add_eos >= 0) add_eos_ = v.add_eos != 0;

  // Control-looking names become control tokens; gpt-oss's channel tokens user-defined.
  std::uint32_t eog_end = 0;
  bool has_return = false, has_call = false, has_flush = false, has_tool_response = false;
  int end_id = -1, s_id = -1;
  for (const auto& [text, id] : to_id_) {
    std::uint32_t& attr = attrs_[static_cast<std::size_t>(id)];
    if (llama_cpp::control_by_name(text)) attr |= kAttrControl;
    if (text == "<|channel|>" || text == "<|message|>" || text == "<|start|>" ||
        text == "<|constrain|>") {
      attr = kAttrUserDefined;
    }
    has_return |= text == "<|return|>";
    has_call |= text == "<|call|>" || text == "<|calls|>";
    has_flush |= text == "<|flush|>";
    has_tool_response |= text == "<|tool_response>";
    if (text == "<|end|>") end_id = id, ++eog_end;
    if (text == "</s>") s_id = id;
  }
  if (end_id >= 0 && has_call && (has_return || has_flush)) {
    attrs_[static_cast<std::size_t>(end_id)] = kAttrUserDefined;
  }
  if (s_id >= 0 && has_tool_response) attrs_[static_cast<std::size_t>(s_id)] = kAttrNormal;

  trie_.emplace_back();
  for (std::size_t i = 0; i < n; ++i) {
    if (attrs_[i] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
      special_tokens_.push_back(static_cast<int>(i));
      std::size_t node = 0;
      for (const char c : texts_[i]) {
        std::size_t child = trie_child(node, static_cast<unsigned char>(c));
        if (child == 0) {
          child = trie_.size();
          trie_[node].children.emplace_back(static_cast<unsigned char>(c), child);
          trie_.emplace_back();
        }
        node = child;
      }
      trie_[node].terminal = true;
    }
  }
  std::stable_sort(special_tokens_.begin(), special_tokens_.end(), [&](int a, int b) {
    return texts_[static_cast<std::size_t>(a)].size() > texts_[static_cast<std::size_t>(b)].size();
  });

  // Per-model token attributes llama.cpp sets by general.name: Phi-3's special tokens and </s>
  // take the white space after them, except <unk>, <s> and <|endoftext|>.
  rstrip_.assign(n, false);
  std::string name = v.name;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (const int id : special_tokens_) rstrip_[static_cast<std::size_t>(id)] = true;
    auto set = [&](const char* text, bool value) {
      const auto it = to_id_.find(std::string_view(text));
      if (it != to_id_.end()) rstrip_[static_cast<std::size_t>(it->second)] = value;
    };
    set("</s>", true);
    for (const char* text : {"<unk>", "<s>", "<|endoftext|>"}) set(text, false);
  }
}

// tokenizer_st_partition with parse_special: each special token in turn (longest first) is cut
// out of the text that is left, at its first occurrence and again to its right. Only tokens that
// occur in the text at all are tried, which gives the same pieces without scanning the text once
// per special token (Gemma has thousands).
std::vector<Fragment> LlamaCppTokenizer::partition(std::string_view text) const {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({-1, 0, static_cast<int>(text.size())});
  if (special_tokens_.empty()) return fragments;
  // Which special texts occur anywhere: a walk of the trie from every byte.
  std::unordered_set<std::string_view> present;
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::size_t node = 0;
    for (std::size_t k = i; k < text.size(); ++k) {
      node = trie_child(node, static_cast<unsigned char>(text[k]));
      if (node == 0) break;
      if (trie_[node].terminal) present.insert(text.substr(i, k + 1 - i));
    }
  }
  if (present.empty()) return fragments;
  for (const int id : special_tokens_) {
    const std::string& special = texts_[static_cast<std::size_t>(id)];
    if (!present.count(special)) continue;
    std::vector<Fragment> next;
    next.reserve(fragments.size() + 2);
    for (const Fragment& f : fragments) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      std::size_t begin = static_cast<std::size_t>(f.offset);
      const std::size_t end = begin + static_cast<std::size_t>(f.length);
      while (begin < end) {
        const std::size_t match = text.substr(0, end).find(special, begin);
        if (match == std::string_view::npos) break;
        if (match > begin)
          next.push_back({-1, static_cast<int>(begin), static_cast<int>(match - begin)});
        next.push_back({id, static_cast<int>(match), static_cast<int>(special.size())});
        begin = match + special.size();
        if (rstrip_[static_cast<std::size_t>(id)]) {
          while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
        }
      }
      if (begin < end) next.push_back({-1, static_cast<int>(begin), static_cast<int>(end - begin)});
    }
    fragments.swap(next);
  }
  return fragments;
}

void LlamaCppTokenizer::push(Tokens& out, int id, Span span) const {
  Token token;
  token.id = id;
  token.text = texts_[static_cast<std::size_t>(id)];
  token.start = span.start;
  token.end = span.end;
  token.unknown = id == unk_;
  out.push_back(std::move(token));
}

Tokens LlamaCppTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  Tokens out;
  auto add_special = [&](int id) {
    if (id < 0) return;  // llama.cpp asserts here; attnscope adds nothing
    Token token;
    token.id = id;
    token.text = texts_[static_cast<std::size_t>(id)];
    token.special = true;
    out.push_back(std::move(token));
  };
  if (add_special_tokens && add_bos_) add_special(bos_);
  bool previous_special = true;  // SentencePiece: a space before the text, and after each special
  for (const Fragment& fragment : partition(text)) {
    if (fragment.token >= 0) {
      push(out, fragment.token, {fragment.offset, fragment.offset + fragment.length});
      previous_special = true;
      continue;
    }
    if (spm_) {
      encode_spm(text, fragment, add_space_prefix_ && previous_special, out);
    } else {
      encode_bpe(text, fragment, out);
    }
    previous_special = false;
  }
  if (add_special_tokens && add_eos_) add_special(eos_);
  return out;
}

int LlamaCppTokenizer::spm_byte_token(unsigned char byte) const {
  static const char* hex = "0123456789ABCDEF";
  const char name[7] = {'<', '0', 'x', hex[byte >> 4], hex[byte & 15], '>', 0};
  auto it = to_id_.find(std::string_view(name, 6));
  if (it != to_id_.end()) return it->second;
  it = to_id_.find(std::string_view(reinterpret_cast<const char*>(&byte), 1));
  if (it != to_id_.end()) return it->second;
  return unk_;  // llama.cpp throws std::out_of_range here (a vocabulary without byte tokens)
}

// llm_tokenizer_spm_session: the text (spaces as "▁") split into UTF-8 characters by their lead
// byte, then the pair whose joined text is the best-scoring token merged first (ties: leftmost),
// until no pair forms a token; what is left is a token or its bytes (<0xXX>).
void LlamaCppTokenizer::encode_spm(std::string_view text, const Fragment& fragment,
                                   bool space_prefix, Tokens& out) const {
  std::string s;
  std::vector<Span> spans;  // per byte of s
  const std::size_t fragment_end = static_cast<std::size_t>(fragment.offset + fragment.length);
  s.reserve(static_cast<std::size_t>(fragment.length) + 3);
  if (space_prefix) {
    s += "\xe2\x96\x81";
    spans.insert(spans.end(), 3, Span{fragment.offset, fragment.offset});
  }
  for (std::size_t i = static_cast<std::size_t>(fragment.offset); i < fragment_end;) {
    const unicode::CodePoint cp = unicode::decode_at(text.substr(0, fragment_end), i);
    const Span span{cp.start, cp.start + cp.length};
    for (int k = 0; k < cp.length; ++k) {
      if (text[i + static_cast<std::size_t>(k)] == ' ') {
        s += "\xe2\x96\x81";
        spans.insert(spans.end(), 3, span);
      } else {
        s.push_back(text[i + static_cast<std::size_t>(k)]);
        spans.push_back(span);
      }
    }
    i += static_cast<std::size_t>(cp.length);
  }

  struct Symbol {
    int prev, next;
    std::size_t start, n;
  };
  std::vector<Symbol> symbols;
  for (std::size_t offset = 0; offset < s.size();) {
    const auto lead = static_cast<unsigned char>(s[offset]);
    const std::size_t length = std::min<std::size_t>(lead < 0xC0   ? 1
                                                     : lead < 0xE0 ? 2
                                                     : lead < 0xF0 ? 3
                                                                   : 4,
                                                     s.size() - offset);
    const int index = static_cast<int>(symbols.size());
    offset += length;
    symbols.push_back({index - 1, offset == s.size() ? -1 : index + 1, offset - length, length});
  }
  struct Bigram {
    int left, right;
    float score;
    std::size_t size;
  };
  auto lower = [](const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(lower)> queue(lower);
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const std::size_t size = symbols[left].n + symbols[right].n;
    if (size > max_token_length_) return;
    const auto it = to_id_.find(std::string_view(s).substr(symbols[left].start, size));
    if (it == to_id_.end()) return;
    queue.push({left, right, scores_[static_cast<std::size_t>(it->second)], size});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<std::size_t>(b.left)];
    Symbol& right = symbols[static_cast<std::size_t>(b.right)];
    if (left.n == 0 || right.n == 0 || left.n + right.n != b.size) continue;
    left.n += right.n;
    right.n = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }
  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[static_cast<std::size_t>(i)].next) {
    const Symbol& sym = symbols[static_cast<std::size_t>(i)];
    const std::string_view piece = std::string_view(s).substr(sym.start, sym.n);
    const auto it = to_id_.find(piece);
    if (it != to_id_.end()) {
      Span span = spans[sym.start];
      for (std::size_t k = sym.start; k < sym.start + sym.n; ++k) span = join(span, spans[k]);
      push(out, it->second, span);
      continue;
    }
    for (std::size_t k = sym.start; k < sym.start + sym.n; ++k) {
      const int id = spm_byte_token(static_cast<unsigned char>(s[k]));
      if (id >= 0) push(out, id, spans[k]);
    }
  }
}

int LlamaCppTokenizer::merge_rank(std::string_view left, std::string_view right) const {
  const auto it = merge_ranks_.find(merge_key(left, right));
  return it == merge_ranks_.end() ? -1 : it->second;
}

// llm_tokenizer_bpe_session: llama.cpp's word split (unicode_regex_split), each word byte-level
// encoded; a word that is a token stays whole (ignore_merges), else the lowest-ranked merge first
// (ties: leftmost). A piece that is no token falls back to its single bytes where those are tokens.
void LlamaCppTokenizer::encode_bpe(std::string_view text, const Fragment& fragment,
                                   Tokens& out) const {
  const std::string_view part = text.substr(static_cast<std::size_t>(fragment.offset),
                                            static_cast<std::size_t>(fragment.length));
  const std::vector<llama_cpp::LlamaCodePoint> cps = llama_cpp::decode_like_llama_cpp(part);
  std::vector<llama_cpp::Word> words = {{0, cps.size()}};
  for (const SplitKind kind : pre_.splits) words = llama_cpp::split_words(cps, words, kind);
  const std::vector<std::string>& byte_chars = text::byte_level_chars();

  struct Symbol {
    int prev, next;
    std::size_t start, n;           // bytes of `encoded`
    std::size_t first_char, chars;  // encoded characters (= bytes of the text) it holds
  };
  std::string encoded;
  std::vector<Span> char_spans;
  std::vector<std::size_t> char_offsets;  // where each encoded character begins in `encoded`
  std::vector<Symbol> symbols;
  struct Bigram {
    int left, right;
    int rank;
    std::size_t size;
  };
  auto higher = [](const Bigram& a, const Bigram& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::string raw;
  for (const llama_cpp::Word& word : words) {
    encoded.clear();
    char_spans.clear();
    char_offsets.clear();
    symbols.clear();
    for (std::size_t c = word.begin; c < word.end; ++c) {
      raw.clear();
      llama_cpp::append_utf8_raw(raw, cps[c].value);
      const Span span{fragment.offset + cps[c].start,
                      fragment.offset + cps[c].start + cps[c].length};
      for (const char byte : raw) {
        char_offsets.push_back(encoded.size());
        encoded += byte_chars[static_cast<unsigned char>(byte)];
        char_spans.push_back(span);
      }
    }
    if (encoded.empty()) continue;
    char_offsets.push_back(encoded.size());
    auto span_of = [&](std::size_t first, std::size_t count) {
      Span s = char_spans[first];
      for (std::size_t k = first; k < first + count; ++k) s = join(s, char_spans[k]);
      return s;
    };
    const std::size_t n_chars = char_spans.size();
    if (pre_.ignore_merges) {
      const auto it = to_id_.find(std::string_view(encoded));
      if (it != to_id_.end()) {
        push(out, it->second, span_of(0, n_chars));
        continue;
      }
    }
    for (std::size_t c = 0; c < n_chars; ++c) {
      const int index = static_cast<int>(c);
      symbols.push_back({index - 1, c + 1 == n_chars ? -1 : index + 1, char_offsets[c],
                         char_offsets[c + 1] - char_offsets[c], c, 1});
    }
    std::priority_queue<Bigram, std::vector<Bigram>, decltype(higher)> queue(higher);
    auto piece = [&](const Symbol& sym) {
      return std::string_view(encoded).substr(sym.start, sym.n);
    };
    auto try_add = [&](int left, int right) {
      if (left < 0 || right < 0) return;
      const Symbol& l = symbols[static_cast<std::size_t>(left)];
      const Symbol& r = symbols[static_cast<std::size_t>(right)];
      const int rank = merge_rank(piece(l), piece(r));
      if (rank < 0) return;
      queue.push({left, right, rank, l.n + r.n});
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);
    while (!queue.empty()) {
      const Bigram b = queue.top();
      queue.pop();
      Symbol& left = symbols[static_cast<std::size_t>(b.left)];
      Symbol& right = symbols[static_cast<std::size_t>(b.right)];
      // Symbols are contiguous, so an unchanged pair is one whose sizes still add up.
      if (left.n == 0 || right.n == 0 || left.n + right.n != b.size) continue;
      left.n += right.n;
      left.chars += right.chars;
      right.n = 0;
      left.next = right.next;
      if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = b.left;
      try_add(left.prev, b.left);
      try_add(b.left, left.next);
    }
    for (const Symbol& sym : symbols) {
      if (sym.n == 0) continue;
      const auto it = to_id_.find(piece(sym));
      if (it != to_id_.end()) {
        push(out, it->second, span_of(sym.first_char, sym.chars));
        continue;
      }
      // Not a token: each byte of the encoded piece on its own, where that is a token.
      for (std::size_t c = sym.first_char; c < sym.first_char + sym.chars; ++c) {
        for (std::size_t k = char_offsets[c]; k < char_offsets[c + 1]; ++k) {
          const auto byte = to_id_.find(std::string_view(encoded).substr(k, 1));
          if (byte != to_id_.end()) push(out, byte->second, char_spans[c]);
        }
      }
    }
  }
}

// llama_token_to_piece with special = true.
std::string LlamaCppTokenizer::decode(int id) const {
  if (id < 0 || id >= vocab_size()) return {};
  const std::string& piece = texts_[static_cast<std::size_t>(id)];
  const std::uint32_t attr = attrs_[static_cast<std::size_t>(id)];
  if (attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return piece;
  if (attr & kAttrNormal) {
    std::string out;
    if (spm_) {
      for (std::size_t i = 0; i < piece.size();) {
        if (piece.compare(i, 3, "\xe2\x96\x81") == 0) {
          out.push_back(' ');
          i += 3;
        } else {
          out.push_back(piece[i++]);
        }
      }
      return out;
    }
    // llama_decode_text: each character back to its byte; one outside GPT-2's table as llama.cpp
    // writes it.
    static const std::unordered_map<char32_t, unsigned char> to_byte = [] {
      std::unordered_map<char32_t, unsigned char> map;
      const auto& chars = text::byte_level_chars();
      for (int b = 0; b < 256; ++b)
        map[unicode::decode_at(chars[b], 0).value] = static_cast<unsigned char>(b);
      return map;
    }();
    for (const llama_cpp::LlamaCodePoint& cp : llama_cpp::decode_like_llama_cpp(piece)) {
      const auto it = to_byte.find(cp.value);
      if (it != to_byte.end()) {
        out.push_back(static_cast<char>(it->second));
        continue;
      }
      std::string utf8;
      llama_cpp::append_utf8_raw(utf8, cp.value);
      out += "[UNK_BYTE_0x";
      static const char* hex = "0123456789abcdef";
      for (const char c : utf8) {
        out.push_back(hex[static_cast<unsigned char>(c) >> 4]);
        out.push_back(hex[static_cast<unsigned char>(c) & 15]);
      }
      out += piece + "]";
    }
    return out;
  }
  if (attr & kAttrByte) {
    if (piece.size() < 4) return {};
    const std::string digits = piece.substr(3, 2);
    return std::string(1, static_cast<char>(std::strtol(digits.c_str(), nullptr, 16)));
  }
  return {};
}

}  // namespace

std::shared_ptr<const Tokenizer> make_llama_cpp_tokenizer(LlamaCppVocab vocab,
                                                          const std::string& where) {
  return std::make_shared<LlamaCppTokenizer>(std::move(vocab), where);
}

}  // namespace attnscope
