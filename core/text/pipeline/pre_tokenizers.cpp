#include "core/text/pipeline/pre_tokenizers.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "core/text/pipeline/json_fields.h"
#include "core/text/pipeline/normalizers.h"
#include "core/text/pipeline/regex.h"
#include "core/util/error.h"
#include "core/util/file_read.h"

namespace attnscope::text {
namespace {

// Applies `split_one` to every piece, keeping the order.
template <typename F>
void split_each(std::vector<NormalizedString>& pieces, F split_one) {
  std::vector<NormalizedString> out;
  out.reserve(pieces.size() * 2);
  for (const NormalizedString& piece : pieces) {
    for (NormalizedString& p : split_one(piece)) out.push_back(std::move(p));
  }
  pieces = std::move(out);
}

SplitBehavior parse_behavior(const std::string& name, const std::string& where) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  throw ModelError(where + ": split behavior \"" + name + "\" is unknown");
}

std::vector<PatternMatch> literal_matches(const std::string& text, const std::string& literal) {
  std::vector<PatternMatch> matches;
  if (text.empty()) return {{0, 0, false}};
  int previous = 0;
  for (std::size_t at = text.find(literal); at != std::string::npos;
       at = text.find(literal, at + literal.size())) {
    if (previous < static_cast<int>(at)) matches.push_back({previous, static_cast<int>(at), false});
    previous = static_cast<int>(at + literal.size());
    matches.push_back({static_cast<int>(at), previous, true});
  }
  if (previous < static_cast<int>(text.size())) {
    matches.push_back({previous, static_cast<int>(text.size()), false});
  }
  return matches;
}

void invert(std::vector<PatternMatch>& matches) {
  for (PatternMatch& m : matches) m.is_match = !m.is_match;
}

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(std::string literal, std::unique_ptr<Regex> regex, SplitBehavior behavior,
                    bool inverted)
      : literal_(std::move(literal)),
        regex_(std::move(regex)),
        behavior_(behavior),
        invert_(inverted) {}
  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    split_each(pieces, [&](const NormalizedString& s) {
      std::vector<PatternMatch> matches =
          regex_ ? regex_->find_matches(s.text()) : literal_matches(s.text(), literal_);
      if (invert_) invert(matches);
      return s.split(std::move(matches), behavior_);
    });
  }

 private:
  std::string literal_;
  std::unique_ptr<Regex> regex_;
  SplitBehavior behavior_;
  bool invert_;
};

class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space) {
    if (use_regex) regex_ = std::make_unique<Regex>(kGpt2Pattern, "the ByteLevel pattern");
  }
  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    if (add_prefix_space_ || regex_) {
      split_each(pieces, [&](const NormalizedString& piece) {
        NormalizedString s = piece;
        if (add_prefix_space_ && !s.text().starts_with(' ')) s.prepend(" ");
        if (!regex_) return std::vector<NormalizedString>{std::move(s)};
        return s.split(regex_->find_matches(s.text()), SplitBehavior::kIsolated);
      });
    }
    for (NormalizedString& s : pieces) to_byte_level(s);
  }

 private:
  // Each byte becomes its byte-level character, aligned to the character it belongs to. A U+FFFD
  // that stands for one invalid byte of the user's text is that byte, so no input byte is lost.
  static void to_byte_level(NormalizedString& s) {
    std::vector<NormalizedString::CharAlignment> chars;
    const std::string& text = s.text();
    chars.reserve(text.size() + 8);
    for (std::size_t pos = 0; pos < text.size();) {
      const int length = unicode::decode_at(text, pos).length;
      const Alignment align = s.alignments()[pos];
      unsigned char invalid = 0;
      if (length == 3 && s.is_invalid_byte(static_cast<int>(pos), invalid)) {
        chars.push_back({byte_char(invalid), align});
      } else {
        for (int k = 0; k < length; ++k) {
          chars.push_back({byte_char(static_cast<unsigned char>(text[pos + k])), align});
        }
      }
      pos += static_cast<std::size_t>(length);
    }
    s.assign(chars);
  }
  static char32_t byte_char(unsigned char b) {
    static const std::vector<char32_t> codes = [] {
      std::vector<char32_t> t(256);
      char32_t next_free = 256;
      for (int c = 0; c < 256; ++c) {
        const bool printable = (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE;
        t[c] = printable ? static_cast<char32_t>(c) : next_free++;
      }
      return t;
    }();
    return codes[b];
  }

  bool add_prefix_space_;
  std::unique_ptr<Regex> regex_;
};

enum class PrependScheme { kFirst, kAlways, kNever };

class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    split_each(pieces, [&](const NormalizedString& piece) {
      NormalizedString s = piece;
      s.replace(char_matches(s.text(), [](char32_t c) { return c == U' '; }), replacement_);
      const bool prepend = scheme_ == PrependScheme::kAlways ||
                           (scheme_ == PrependScheme::kFirst && s.original_start() == 0);
      if (prepend && !s.text().starts_with(replacement_)) s.prepend(replacement_);
      if (!split_) return std::vector<NormalizedString>{std::move(s)};
      return s.split(literal_matches(s.text(), replacement_), SplitBehavior::kMergedWithNext);
    });
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

// A pre-tokenizer that splits on a character class with a fixed behaviour.
template <typename Predicate>
class CharClassPreTokenizer final : public PreTokenizer {
 public:
  CharClassPreTokenizer(Predicate predicate, SplitBehavior behavior)
      : predicate_(predicate), behavior_(behavior) {}
  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    split_each(pieces, [&](const NormalizedString& s) {
      return s.split(char_matches(s.text(), predicate_), behavior_);
    });
  }

 private:
  Predicate predicate_;
  SplitBehavior behavior_;
};

template <typename Predicate>
std::unique_ptr<PreTokenizer> char_class(Predicate predicate, SplitBehavior behavior) {
  return std::make_unique<CharClassPreTokenizer<Predicate>>(predicate, behavior);
}

class SequencePreTokenizer final : public PreTokenizer {
 public:
  SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps, std::string where)
      : steps_(std::move(steps)), where_(std::move(where)) {}
  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    // One step grows the pieces by a bounded factor (ByteLevel 2x, Metaspace's one character per
    // space): a check after each keeps a chain of them bounded too.
    std::size_t original = 0;
    for (const NormalizedString& p : pieces)
      original += static_cast<std::size_t>(p.original_end() - p.original_start());
    for (const auto& step : steps_) {
      step->pre_tokenize(pieces);
      std::size_t bytes = 0;
      for (const NormalizedString& p : pieces) bytes += p.text().size();
      check_growth(bytes, original, where_);
    }
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
  std::string where_;
};

bool is_white_space(char32_t c) {
  return unicode::is_white_space(c);
}
bool is_numeric(char32_t c) {
  return unicode::is_number(c);
}
bool is_punctuation(char32_t c) {
  // Rust's char::is_ascii_punctuation (which includes ASCII symbols) or a P* category.
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126) || unicode::is_punctuation(c);
}

}  // namespace

const std::vector<std::string>& byte_level_chars() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    char32_t next_free = 256;
    for (int c = 0; c < 256; ++c) {
      const bool printable = (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE;
      t[c] = unicode::to_utf8(printable ? static_cast<char32_t>(c) : next_free++);
    }
    return t;
  }();
  return table;
}

std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex) {
  return std::make_unique<ByteLevelPreTokenizer>(add_prefix_space, use_regex);
}

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer() {
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  steps.push_back(char_class(is_white_space, SplitBehavior::kRemoved));
  steps.push_back(char_class(is_bert_punctuation, SplitBehavior::kIsolated));
  return std::make_unique<SequencePreTokenizer>(std::move(steps), "BertPreTokenizer");
}

namespace {

std::unique_ptr<PreTokenizer> make_pre_tokenizer_at(const nlohmann::json& json,
                                                    const std::string& where, int depth) {
  if (json.is_null()) return nullptr;
  check_nesting(depth, where);
  const std::string type = string_field(json, "type", where);
  const std::string here = where + " " + type;
  if (type == "ByteLevel") {
    return make_byte_level_pre_tokenizer(bool_field(json, "add_prefix_space", true, here),
                                         bool_field(json, "use_regex", true, here));
  }
  if (type == "Split") {
    const nlohmann::json& pattern = object_field(json, "pattern", here);
    const SplitBehavior behavior = parse_behavior(string_field(json, "behavior", here), here);
    const bool inverted = bool_field(json, "invert", false, here);
    if (pattern.contains("Regex")) {
      return std::make_unique<SplitPreTokenizer>(
          "", std::make_unique<Regex>(string_field(pattern, "Regex", here), here), behavior,
          inverted);
    }
    const std::string literal = string_field(pattern, "String", here);
    if (literal.empty()) {
      return std::make_unique<SplitPreTokenizer>("", std::make_unique<Regex>("", here), behavior,
                                                 inverted);
    }
    return std::make_unique<SplitPreTokenizer>(literal, nullptr, behavior, inverted);
  }
  if (type == "Metaspace") {
    const std::string replacement = optional_string(json, "replacement", "\u2581", here);
    // One character, as Hugging Face (a Rust char; it refuses "" and "ab" alike): an empty one
    // would split the text at every byte without end.
    const std::vector<unicode::CodePoint> chars = unicode::decode_utf8(replacement);
    if (chars.size() != 1 || !chars[0].valid) {
      throw ModelError(here + ": key \"replacement\" must be one character, found \"" +
                       quote_excerpt(replacement, 40) + "\"");
    }
    PrependScheme scheme = bool_field(json, "add_prefix_space", true, here) ? PrependScheme::kAlways
                                                                            : PrependScheme::kNever;
    const std::string name = optional_string(json, "prepend_scheme", "", here);
    if (name == "first") scheme = PrependScheme::kFirst;
    if (name == "always") scheme = PrependScheme::kAlways;
    if (name == "never") scheme = PrependScheme::kNever;
    return std::make_unique<MetaspacePreTokenizer>(replacement, scheme,
                                                   bool_field(json, "split", true, here));
  }
  if (type == "Whitespace") {
    // \w+|[^\w\s]+, the runs kept: Hugging Face's Whitespace (its \w is Rust regex's; see README).
    return std::make_unique<SplitPreTokenizer>("", std::make_unique<Regex>(R"(\w+|[^\w\s]+)", here),
                                               SplitBehavior::kRemoved, true);
  }
  if (type == "WhitespaceSplit") return char_class(is_white_space, SplitBehavior::kRemoved);
  if (type == "Digits") {
    return char_class(is_numeric, bool_field(json, "individual_digits", false, here)
                                      ? SplitBehavior::kIsolated
                                      : SplitBehavior::kContiguous);
  }
  if (type == "Punctuation") {
    const std::string behavior = optional_string(json, "behavior", "Isolated", here);
    return char_class(is_punctuation, parse_behavior(behavior, here));
  }
  if (type == "BertPreTokenizer") return make_bert_pre_tokenizer();
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const nlohmann::json& step : array_field(json, "pretokenizers", here)) {
      if (auto p = make_pre_tokenizer_at(step, where, depth + 1)) steps.push_back(std::move(p));
    }
    return std::make_unique<SequencePreTokenizer>(std::move(steps), here);
  }
  throw ModelError(where + ": pre_tokenizer type \"" + type + "\" is not supported");
}

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& json,
                                                 const std::string& where) {
  return make_pre_tokenizer_at(json, where, 0);
}

}  // namespace attnscope::text
