#include "core/text/pipeline/pipeline.h"

#include <cctype>
#include <unordered_map>

#include "core/text/unicode.h"

namespace attnscope::text {
namespace {

// The byte where the code point before byte `at` of `text` starts (an invalid byte counts alone).
int previous_char(std::string_view text, int at) {
  int p = at - 1;
  while (p > 0 && at - p < 4 && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80) --p;
  return unicode::decode_at(text, static_cast<std::size_t>(p)).length == at - p ? p : at - 1;
}

// Hugging Face's ByteLevel process_offsets: a token's offsets leave out the spaces at its ends
// ("Ġ" or white space), except one leading space of the first token with add_prefix_space.
// Hugging Face trims after converting offsets to characters (what its bindings and transformers
// return), so a count of spaces moves an offset by that many characters of `text`, not bytes: a
// prepended "Ġ" fused with the first byte of "İ" leaves (end, end), not the middle of "İ".
void trim_offsets(std::string_view text, Tokens& tokens, bool add_prefix_space) {
  auto is_space = [](char32_t c) { return c == 0x120 || unicode::is_white_space(c); };
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    Token& token = tokens[i];
    if (token.start < 0) continue;
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
      for (; leading > 0 && token.start < token.end; --leading)
        token.start += unicode::decode_at(text, static_cast<std::size_t>(token.start)).length;
      token.start = std::min(token.start, token.end);
    }
    if (trailing > 0) {
      // Only when `trailing` characters precede the end in the whole text (HF: end >= trailing).
      int end = token.end, stepped = 0;
      for (; stepped < trailing && end > 0; ++stepped) end = previous_char(text, end);
      if (stepped == trailing) token.end = std::max(end, token.start);
    }
  }
}

class PipelineTokenizer final : public Tokenizer {
 public:
  explicit PipelineTokenizer(PipelineParts parts) : p_(std::move(parts)) {
    // Raw-text and normalized-text matchers; a normalized token is searched for as normalized.
    std::vector<std::string> contents;
    std::vector<int> raw, normalized;
    for (std::size_t i = 0; i < p_.added_tokens.size(); ++i) {
      const AddedTokenSpec& t = p_.added_tokens[i];
      std::string content = t.content;
      if (t.normalized && p_.normalizer && !content.empty()) {
        NormalizedString s(content, 0, static_cast<int>(content.size()));
        p_.normalizer->normalize(s);
        content = s.text();
      }
      contents.push_back(content);
      (t.normalized ? normalized : raw).push_back(static_cast<int>(i));
      added_by_id_.emplace(t.id, static_cast<int>(i));
      added_by_content_.emplace(t.content, t.id);
      size_ = std::max(size_, t.id + 1);
    }
    raw_.build(p_.added_tokens, contents, raw);
    normalized_.build(p_.added_tokens, contents, normalized);
    size_ = std::max(size_, p_.model->size());
  }

  Tokens encode(std::string_view text, bool add_special_tokens) const override {
    Tokens tokens;
    if (text.size() > 0x7FFFFFF0) text = text.substr(0, 0x7FFFFFF0);  // offsets are ints
    const NormalizedString whole(text, 0, static_cast<int>(text.size()));
    std::vector<AddedSplit> segments;
    raw_.split(whole, p_.added_tokens, segments);
    std::vector<AddedSplit> pieces;
    std::vector<NormalizedString> words;
    std::vector<ModelToken> model_tokens;
    for (AddedSplit& segment : segments) {
      if (segment.token >= 0) {
        push_added(segment, tokens);
        continue;
      }
      if (p_.normalizer) p_.normalizer->normalize(segment.text);
      pieces.clear();
      normalized_.split(segment.text, p_.added_tokens, pieces);
      for (AddedSplit& piece : pieces) {
        if (piece.token >= 0) {
          push_added(piece, tokens);
          continue;
        }
        if (piece.text.empty()) continue;
        words.clear();
        words.push_back(std::move(piece.text));
        if (p_.pre_tokenizer) p_.pre_tokenizer->pre_tokenize(words);
        for (const NormalizedString& word : words) {
          if (word.empty()) continue;
          model_tokens.clear();
          p_.model->tokenize(word.text(), model_tokens);
          for (const ModelToken& m : model_tokens) {
            const Alignment original = word.original_range(m.start, m.end);
            Token t;
            t.id = m.id;
            const std::string* piece_text = p_.model->id_to_token(m.id);
            t.text = piece_text ? *piece_text : std::string();
            if (m.id == p_.model->unk_id() && p_.model->unknown_shows_text())
              t.text = word.text().substr(static_cast<std::size_t>(m.start),
                                          static_cast<std::size_t>(m.end - m.start));
            t.start = original.start;
            t.end = original.end;
            t.unknown = m.id == p_.model->unk_id();
            tokens.push_back(std::move(t));
          }
        }
      }
    }
    post_process(text, tokens, add_special_tokens);
    return tokens;
  }

  std::string decode(int id) const override {
    if (const auto it = added_by_id_.find(id); it != added_by_id_.end()) {
      return p_.added_tokens[static_cast<std::size_t>(it->second)].content;
    }
    const std::string* piece = p_.model->id_to_token(id);
    if (!piece) return {};
    std::string s = *piece;
    for (const DecoderStep& step : p_.decoder) s = apply(step, s);
    return s;
  }

  std::string id_to_token(int id) const override {
    if (const auto it = added_by_id_.find(id); it != added_by_id_.end()) {
      return p_.added_tokens[static_cast<std::size_t>(it->second)].content;
    }
    const std::string* piece = p_.model->id_to_token(id);
    return piece ? *piece : std::string();
  }
  int token_to_id(std::string_view piece) const override {
    if (const auto it = added_by_content_.find(piece); it != added_by_content_.end()) {
      return it->second;
    }
    return p_.model->token_to_id(piece);
  }
  int vocab_size() const override { return size_; }
  int bos_id() const override { return p_.bos_id; }
  int eos_id() const override { return p_.eos_id; }
  std::string description() const override { return p_.description; }
  PieceEncoding piece_encoding() const override {
    bool spaces = false;
    for (const DecoderStep& step : p_.decoder) {
      if (step.kind == DecodeStep::kByteLevel) return PieceEncoding::kByteLevel;
      if (step.kind == DecodeStep::kByteFallback ||
          (step.kind == DecodeStep::kReplace && step.from == "\xE2\x96\x81"))  // ▁
        spaces = true;
    }
    return spaces ? PieceEncoding::kSentencePiece : PieceEncoding::kPlain;
  }

 private:
  void push_added(const AddedSplit& split, Tokens& tokens) const {
    const AddedTokenSpec& spec = p_.added_tokens[static_cast<std::size_t>(split.token)];
    Token t;
    t.id = spec.id;
    t.text = split.text.text();
    t.start = split.text.original_start();
    t.end = split.text.original_end();
    tokens.push_back(std::move(t));
  }

  void post_process(std::string_view text, Tokens& tokens, bool add_special_tokens) const {
    for (const PostStep& step : p_.post_processor) {
      if (step.trim_offsets) trim_offsets(text, tokens, step.add_prefix_space);
      if (!add_special_tokens || (step.prefix.empty() && step.suffix.empty())) continue;
      Tokens all;
      all.reserve(tokens.size() + step.prefix.size() + step.suffix.size());
      auto special = [&](const std::pair<int, std::string>& s) {
        Token t;
        t.id = s.first;
        t.text = s.second;
        t.special = true;
        all.push_back(std::move(t));
      };
      for (const auto& s : step.prefix) special(s);
      for (Token& t : tokens) all.push_back(std::move(t));
      for (const auto& s : step.suffix) special(s);
      tokens = std::move(all);
    }
  }

  static std::string apply(const DecoderStep& step, const std::string& s) {
    switch (step.kind) {
      case DecodeStep::kByteLevel: {
        static const std::unordered_map<char32_t, char> byte_of = [] {
          std::unordered_map<char32_t, char> m;
          const auto& chars = byte_level_chars();
          for (int b = 0; b < 256; ++b) {
            m.emplace(unicode::decode_at(chars[b], 0).value, static_cast<char>(b));
          }
          return m;
        }();
        std::string bytes;
        for (const unicode::CodePoint& cp : unicode::decode_utf8(s)) {
          const auto it = byte_of.find(cp.value);
          if (it != byte_of.end()) {
            bytes.push_back(it->second);
          } else {
            bytes.append(s, static_cast<std::size_t>(cp.start),
                         static_cast<std::size_t>(cp.length));
          }
        }
        return bytes;
      }
      case DecodeStep::kByteFallback:
        if (s.size() == 6 && s.starts_with("<0x") && s.back() == '>' &&
            std::isxdigit(static_cast<unsigned char>(s[3])) &&
            std::isxdigit(static_cast<unsigned char>(s[4]))) {
          return std::string(1, static_cast<char>(std::stoi(s.substr(3, 2), nullptr, 16)));
        }
        return s;
      case DecodeStep::kReplace: {
        if (step.from.empty()) return s;
        std::string out;
        for (std::size_t pos = 0;;) {
          const std::size_t at = s.find(step.from, pos);
          if (at == std::string::npos) {
            out.append(s, pos);
            return out;
          }
          out.append(s, pos, at - pos);
          out.append(step.to);
          pos = at + step.from.size();
        }
      }
      case DecodeStep::kWordPiece:
        return s.starts_with(step.from) ? s.substr(step.from.size()) : s;
    }
    return s;
  }

  PipelineParts p_;
  AddedTokenMatcher raw_, normalized_;
  std::unordered_map<int, int> added_by_id_;
  PieceToId added_by_content_;
  int size_ = 0;
};

}  // namespace

std::shared_ptr<const Tokenizer> make_pipeline_tokenizer(PipelineParts parts) {
  return std::make_shared<PipelineTokenizer>(std::move(parts));
}

}  // namespace attnscope::text
