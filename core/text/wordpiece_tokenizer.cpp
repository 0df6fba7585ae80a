#include "core/text/wordpiece_tokenizer.h"

#include <algorithm>

#include "core/text/added_tokens.h"
#include "core/text/tokenizer_common.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// A character of the normalized text and the bytes [start, end) of the original text it came from.
struct NormalizedChar {
  char32_t cp;
  int start;
  int end;
};

// Hugging Face's BERT white space: TAB, LF, CR and everything with the White_Space property.
bool is_bert_white_space(char32_t cp) {
  return unicode::is_white_space(cp);
}

// Hugging Face's BERT "control": categories Cc, Cf, Co, except TAB, LF and CR (white space there).
bool is_bert_control(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  return unicode::is_control_format_private(cp);
}

// The CJK Unified Ideographs blocks, exactly the ranges of Hugging Face's (Rust) is_chinese_char,
// including its 0x2B920 lower bound of the sixth range (Python's BERT has 0x2B820).
bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// BertPreTokenizer's punctuation: the ASCII symbol ranges, or any Unicode P* category.
bool is_bert_punctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  return unicode::is_punctuation(cp);
}

// NFD with canonical reordering: each run of non-starters is stably sorted by combining class.
void canonical_decompose(std::vector<NormalizedChar>& chars) {
  std::vector<NormalizedChar> out;
  out.reserve(chars.size() + 8);
  for (const NormalizedChar& c : chars) {
    if (c.cp < 0xC0) {
      out.push_back(c);
      continue;
    }
    for (char32_t d : unicode::canonical_decomposition(c.cp)) out.push_back({d, c.start, c.end});
  }
  for (std::size_t i = 0; i < out.size();) {
    if (unicode::combining_class(out[i].cp) == 0) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < out.size() && unicode::combining_class(out[end].cp) != 0) ++end;
    std::stable_sort(out.begin() + i, out.begin() + end, [](const auto& a, const auto& b) {
      return unicode::combining_class(a.cp) < unicode::combining_class(b.cp);
    });
    i = end;
  }
  chars = std::move(out);
}

}  // namespace

struct WordPieceTokenizer::Impl {
  WordPieceOptions options;
  PieceToId vocab;
  PieceToId continuations;  // "##aff" stored under "aff", so a lookup builds no string
  std::vector<std::string> pieces;
  std::string continuing_prefix = "##";
  std::string unk_token = "[UNK]";
  int unk_id = -1;
  std::vector<int> prefix_ids = {};  // [CLS]
  std::vector<int> suffix_ids = {};  // [SEP]
  std::vector<AddedToken> added;

  void set_vocab(PieceToId vocab_in, const std::string& where);
  std::vector<NormalizedChar> normalize(std::string_view text, int offset) const;
  // Scratch space one encode() call reuses for every word, so words cost no allocation.
  struct Scratch {
    std::string bytes;
    std::vector<std::size_t> char_offset;
  };
  void word_pieces(const std::vector<NormalizedChar>& word, Scratch& scratch, Tokens& out) const;
  Token special_token(int id) const {
    Token t;
    t.id = id;
    t.text = id < static_cast<int>(pieces.size()) ? pieces[id] : std::string();
    t.special = true;
    return t;
  }
};

void WordPieceTokenizer::Impl::set_vocab(PieceToId vocab_in, const std::string& where) {
  vocab = std::move(vocab_in);
  int max_id = -1;
  for (const auto& [piece, id] : vocab) {
    if (id < 0) throw ModelError(where + ": negative id for \"" + piece + "\"");
    max_id = std::max(max_id, id);
  }
  pieces.assign(static_cast<std::size_t>(max_id + 1), std::string());
  for (const auto& [piece, id] : vocab) {
    pieces[static_cast<std::size_t>(id)] = piece;
    if (piece.size() > continuing_prefix.size() && piece.starts_with(continuing_prefix)) {
      continuations.emplace(piece.substr(continuing_prefix.size()), id);
    }
  }
  const auto unk = vocab.find(unk_token);
  if (unk == vocab.end()) {
    throw ModelError(where + ": the vocabulary has no " + unk_token + " token");
  }
  unk_id = unk->second;
}

std::vector<NormalizedChar> WordPieceTokenizer::Impl::normalize(std::string_view text,
                                                                int offset) const {
  // The steps of Hugging Face's BertNormalizer, in its order: clean-up, CJK spacing, NFD + drop Mn,
  // lowercase. Every output character keeps the original bytes of the character it came from.
  std::vector<NormalizedChar> chars;
  chars.reserve(text.size() + 8);
  bool needs_nfd = false;
  for (std::size_t pos = 0; pos < text.size();) {
    const unicode::CodePoint cp = unicode::decode_at(text, pos);
    pos += static_cast<std::size_t>(cp.length);
    const int start = offset + cp.start;
    const int end = start + cp.length;
    char32_t c = cp.value;
    if (c < 0x80) {  // the common case, decided without any table
      if (options.clean_text) {
        const bool tab_or_newline = c == '\t' || c == '\n' || c == '\r';
        if ((c < 0x20 && !tab_or_newline) || c == 0x7F) continue;  // NUL and the other controls
        if (tab_or_newline) c = ' ';
      }
      chars.push_back({c, start, end});
      continue;
    }
    if (options.clean_text) {
      if (c == 0 || c == unicode::kReplacementCharacter || is_bert_control(c)) continue;
      if (is_bert_white_space(c)) c = ' ';
    }
    // CJK compatibility ideographs (U+F900..U+FAFF) decompose too: check before the CJK spacing.
    needs_nfd = needs_nfd || c >= 0xC0;
    if (options.split_cjk && is_chinese_char(c)) {
      chars.push_back({' ', start, end});
      chars.push_back({c, start, end});
      chars.push_back({' ', start, end});
      continue;
    }
    chars.push_back({c, start, end});
  }
  if (options.strip_accents && needs_nfd) {
    canonical_decompose(chars);
    std::erase_if(chars, [](const NormalizedChar& c) { return unicode::is_nonspacing_mark(c.cp); });
  }
  if (options.lowercase) {
    // Only U+0130 lowercases to two characters; without it the mapping is done in place.
    const bool expands = std::any_of(chars.begin(), chars.end(),
                                     [](const NormalizedChar& c) { return c.cp == 0x130; });
    if (!expands) {
      for (NormalizedChar& c : chars) c.cp = unicode::to_lower_simple(c.cp);
    } else {
      std::vector<NormalizedChar> lowered;
      lowered.reserve(chars.size() + 8);
      for (const NormalizedChar& c : chars) {
        for (char32_t l : unicode::to_lower_full(c.cp)) lowered.push_back({l, c.start, c.end});
      }
      chars = std::move(lowered);
    }
  }
  return chars;
}

void WordPieceTokenizer::Impl::word_pieces(const std::vector<NormalizedChar>& word,
                                           Scratch& scratch, Tokens& out) const {
  auto unknown = [&] {
    Token t;
    t.id = unk_id;
    t.text = unk_token;
    t.start = word.front().start;
    t.end = word.back().end;
    t.unknown = true;
    out.push_back(std::move(t));
  };
  if (static_cast<int>(word.size()) > options.max_chars_per_word) return unknown();
  std::string& bytes = scratch.bytes;
  std::vector<std::size_t>& char_offset = scratch.char_offset;  // of each character, plus the end
  bytes.clear();
  char_offset.clear();
  for (const NormalizedChar& c : word) {
    char_offset.push_back(bytes.size());
    unicode::append_utf8(bytes, c.cp);
  }
  char_offset.push_back(bytes.size());

  // Greedy longest-match-first, shortening one character at a time.
  const std::size_t first_new = out.size();
  std::size_t start = 0;
  while (start < word.size()) {
    std::size_t end = word.size();
    int id = -1;
    for (; end > start; --end) {
      const std::string_view candidate(bytes.data() + char_offset[start],
                                       char_offset[end] - char_offset[start]);
      const PieceToId& table = start == 0 ? vocab : continuations;
      const auto it = table.find(candidate);
      if (it != table.end()) {
        id = it->second;
        break;
      }
    }
    if (id < 0) {
      out.resize(first_new);
      return unknown();
    }
    Token t;
    t.id = id;
    t.text = pieces[id];
    t.start = word[start].start;
    t.end = word[end - 1].end;
    out.push_back(std::move(t));
    start = end;
  }
}

WordPieceTokenizer::WordPieceTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WordPieceTokenizer::WordPieceTokenizer(WordPieceTokenizer&&) noexcept = default;
WordPieceTokenizer& WordPieceTokenizer::operator=(WordPieceTokenizer&&) noexcept = default;
WordPieceTokenizer::~WordPieceTokenizer() = default;

WordPieceTokenizer WordPieceTokenizer::from_vocab_txt(const std::filesystem::path& vocab_txt,
                                                      const WordPieceOptions& options) {
  const std::string text = read_text_file(vocab_txt, "vocabulary");
  PieceToId vocab;
  int id = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    // As transformers' load_vocab: the line number is the id, the line end is stripped.
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    vocab.insert_or_assign(std::string(line), id++);  // a repeated piece: the later id wins
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->set_vocab(std::move(vocab), vocab_txt.string());
  // BertTokenizerFast's special tokens; it recognises them in the text and wraps with [CLS]/[SEP].
  for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    const auto it = impl->vocab.find(special);
    if (it != impl->vocab.end()) impl->added.push_back({special, it->second, false, false});
  }
  if (const auto it = impl->vocab.find("[CLS]"); it != impl->vocab.end()) {
    impl->prefix_ids = {it->second};
  }
  if (const auto it = impl->vocab.find("[SEP]"); it != impl->vocab.end()) {
    impl->suffix_ids = {it->second};
  }
  return WordPieceTokenizer(std::move(impl));
}

WordPieceTokenizer WordPieceTokenizer::from_tokenizer_json(
    const std::filesystem::path& tokenizer_json) {
  const nlohmann::json json = read_json_file(tokenizer_json, "tokenizer file");
  const std::string where = tokenizer_json.string();
  const nlohmann::json model = json.value("model", nlohmann::json());
  if (!model.is_object() || model.value("type", std::string()) != "WordPiece") {
    throw ModelError(where + ": the tokenizer model is not WordPiece");
  }
  auto impl = std::make_unique<Impl>();
  WordPieceOptions& options = impl->options;
  const nlohmann::json normalizer = json.value("normalizer", nlohmann::json());
  if (normalizer.is_null()) {
    options = {false, false, false, 100, false};
  } else if (normalizer.value("type", std::string()) == "BertNormalizer") {
    options.clean_text = normalizer.value("clean_text", true);
    options.split_cjk = normalizer.value("handle_chinese_chars", true);
    options.lowercase = normalizer.value("lowercase", true);
    const nlohmann::json strip = normalizer.value("strip_accents", nlohmann::json());
    options.strip_accents = strip.is_boolean() ? strip.get<bool>() : options.lowercase;
  } else {
    throw ModelError(where + ": only the BertNormalizer is supported in front of WordPiece");
  }
  const nlohmann::json pre = json.value("pre_tokenizer", nlohmann::json());
  if (!pre.is_object() || pre.value("type", std::string()) != "BertPreTokenizer") {
    throw ModelError(where + ": only the BertPreTokenizer is supported in front of WordPiece");
  }
  options.max_chars_per_word = model.value("max_input_chars_per_word", 100);
  impl->unk_token = model.value("unk_token", std::string("[UNK]"));
  impl->continuing_prefix = model.value("continuing_subword_prefix", std::string("##"));
  PieceToId vocab;
  const nlohmann::json vocab_json = model.value("vocab", nlohmann::json());
  if (!vocab_json.is_object()) throw ModelError(where + ": the WordPiece vocab is not an object");
  for (const auto& [piece, id] : vocab_json.items()) {
    if (!id.is_number_integer())
      throw ModelError(where + ": the id of \"" + piece + "\" is not an integer");
    vocab.emplace(piece, id.get<int>());
  }
  impl->set_vocab(std::move(vocab), where);
  for (const auto& token : json.value("added_tokens", nlohmann::json::array())) {
    const int id = token.value("id", -1);
    if (id < 0) continue;
    impl->added.push_back({token.value("content", std::string()), id, token.value("lstrip", false),
                           token.value("rstrip", false)});
    if (id >= static_cast<int>(impl->pieces.size())) impl->pieces.resize(id + 1);
    if (impl->pieces[id].empty()) impl->pieces[id] = impl->added.back().content;
  }
  // [CLS]/[SEP] from the post-processor: BertProcessing, or TemplateProcessing's single template.
  const nlohmann::json post = json.value("post_processor", nlohmann::json());
  const std::string post_type = post.is_object() ? post.value("type", std::string()) : "";
  if (post_type == "BertProcessing") {
    impl->prefix_ids = {post.at("cls").at(1).get<int>()};
    impl->suffix_ids = {post.at("sep").at(1).get<int>()};
  } else if (post_type == "TemplateProcessing") {
    bool after_sequence = false;
    for (const auto& item : post.value("single", nlohmann::json::array())) {
      if (item.contains("Sequence")) {
        after_sequence = true;
      } else if (item.contains("SpecialToken")) {
        const std::string name = item["SpecialToken"].value("id", std::string());
        const auto& ids = post.at("special_tokens").at(name).at("ids");
        for (const auto& id : ids) {
          (after_sequence ? impl->suffix_ids : impl->prefix_ids).push_back(id.get<int>());
        }
      }
    }
  }
  return WordPieceTokenizer(std::move(impl));
}

Tokens WordPieceTokenizer::encode(std::string_view text) const {
  Tokens tokens;
  std::vector<NormalizedChar> word;
  Impl::Scratch scratch;
  for (const TextPiece& piece : split_on_added_tokens(text, impl_->added)) {
    if (piece.added_index >= 0) {
      tokens.push_back(added_piece_token(text, piece, impl_->added));
      continue;
    }
    const auto chars =
        impl_->normalize(text.substr(piece.start, piece.end - piece.start), piece.start);
    // BertPreTokenizer: split on white space (dropped) and punctuation (each its own word).
    word.clear();
    for (const NormalizedChar& c : chars) {
      if (unicode::is_white_space(c.cp)) {
        if (!word.empty()) impl_->word_pieces(word, scratch, tokens);
        word.clear();
      } else if (is_bert_punctuation(c.cp)) {
        if (!word.empty()) impl_->word_pieces(word, scratch, tokens);
        word.assign(1, c);
        impl_->word_pieces(word, scratch, tokens);
        word.clear();
      } else {
        word.push_back(c);
      }
    }
    if (!word.empty()) impl_->word_pieces(word, scratch, tokens);
  }
  return tokens;
}

Tokens WordPieceTokenizer::encode_with_specials(std::string_view text) const {
  Tokens tokens;
  for (int id : impl_->prefix_ids) tokens.push_back(impl_->special_token(id));
  Tokens body = encode(text);
  tokens.insert(tokens.end(), std::make_move_iterator(body.begin()),
                std::make_move_iterator(body.end()));
  for (int id : impl_->suffix_ids) tokens.push_back(impl_->special_token(id));
  return tokens;
}

int WordPieceTokenizer::token_to_id(const std::string& piece) const {
  const auto it = impl_->vocab.find(piece);
  return it == impl_->vocab.end() ? -1 : it->second;
}

std::string WordPieceTokenizer::id_to_token(int id) const {
  if (id < 0 || id >= static_cast<int>(impl_->pieces.size())) return {};
  return impl_->pieces[id];
}

int WordPieceTokenizer::vocab_size() const {
  return static_cast<int>(impl_->pieces.size());
}

const WordPieceOptions& WordPieceTokenizer::options() const {
  return impl_->options;
}

}  // namespace attnscope
