#include "core/text/pipeline/normalizers.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/text/pipeline/json_fields.h"
#include "core/text/pipeline/regex.h"
#include "core/util/error.h"

namespace attnscope::text {
namespace {

using CharAlignment = NormalizedString::CharAlignment;

bool is_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// A normalized character and how it changes the count of characters, as Hugging Face's
// normalization iterators yield them: 0 replaces the next input character, +1 is inserted after
// it (the rest of a decomposition), -n replaces the next one and removes n more (a composition).
struct Changed {
  char32_t c;
  int change;
};

// Canonical ordering: each run of non-starters stably sorted by combining class (a character
// keeps its change: alignments are then given by position, as Hugging Face gives them).
void reorder(std::vector<Changed>& chars) {
  for (std::size_t i = 0; i < chars.size();) {
    if (unicode::combining_class(chars[i].c) == 0) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < chars.size() && unicode::combining_class(chars[end].c) != 0) ++end;
    std::stable_sort(chars.begin() + static_cast<std::ptrdiff_t>(i),
                     chars.begin() + static_cast<std::ptrdiff_t>(end),
                     [](const Changed& a, const Changed& b) {
                       return unicode::combining_class(a.c) < unicode::combining_class(b.c);
                     });
    i = end;
  }
}

std::vector<Changed> decompose(const std::vector<CharAlignment>& chars, bool compatibility) {
  std::vector<Changed> out;
  out.reserve(chars.size() + 8);
  for (const CharAlignment& c : chars) {
    if (c.c < 0xA0) {
      out.push_back({c.c, 0});
      continue;
    }
    int change = 0;
    for (char32_t d : unicode::decomposition(c.c, compatibility)) {
      out.push_back({d, change});
      change = 1;
    }
  }
  reorder(out);
  return out;
}

// Canonical composition (UAX #15 D117). A composite replaces its starter and removes the mark:
// its change is the starter's + the mark's - 1.
void compose(std::vector<Changed>& chars) {
  if (chars.empty()) return;
  std::vector<Changed> out;
  out.reserve(chars.size());
  int starter = -1;
  int last_class = 0;     // combining class of the last character kept after the starter
  bool adjacent = false;  // nothing kept since the starter
  for (const Changed& c : chars) {
    const int cc = unicode::combining_class(c.c);
    if (starter >= 0 && (adjacent || (last_class != 0 && last_class < cc))) {
      const auto at = static_cast<std::size_t>(starter);
      if (const char32_t composite = unicode::compose_pair(out[at].c, c.c); composite != 0) {
        out[at].c = composite;
        out[at].change += c.change - 1;
        continue;
      }
    }
    if (cc == 0) {
      starter = static_cast<int>(out.size());
      adjacent = true;
    } else {
      adjacent = false;
    }
    last_class = cc;
    out.push_back(c);
  }
  chars = std::move(out);
}

// The alignments of `out`, made from `in` by the changes, as Hugging Face's
// NormalizedString::transform gives them: a replacing character takes the alignment of the next
// input character (and skips those it removes), an inserted one that of the input character
// before it. So "e" + U+0301 composed maps to the "e", and in "Ⅻ" + U+0301 (NFKC "XIÍ") the
// "Í" maps to the accent.
std::vector<CharAlignment> aligned(const std::vector<CharAlignment>& in,
                                   const std::vector<Changed>& out) {
  std::vector<CharAlignment> result;
  result.reserve(out.size());
  std::size_t next = 0;  // the next input character to replace
  const Alignment none{};
  for (const Changed& c : out) {
    if (c.change > 0) {
      result.push_back({c.c, next == 0 ? (in.empty() ? none : in[0].align) : in[next - 1].align});
      continue;
    }
    result.push_back(
        {c.c, next < in.size() ? in[next].align : (in.empty() ? none : in.back().align)});
    next += 1 + static_cast<std::size_t>(-c.change);
  }
  return result;
}

class UnicodeNormalizer final : public Normalizer {
 public:
  UnicodeNormalizer(bool compatibility, bool composed)
      : compatibility_(compatibility), composed_(composed) {}
  void normalize(NormalizedString& s) const override {
    // Nothing below U+00A0 decomposes or composes: ASCII-and-Latin-1-control text stays as it is.
    bool simple = true;
    for (char c : s.text()) simple = simple && static_cast<unsigned char>(c) < 0xC2;
    if (simple) return;
    const std::vector<CharAlignment> in = s.chars();
    std::vector<Changed> chars = decompose(in, compatibility_);
    if (composed_) compose(chars);
    s.assign(aligned(in, chars));
  }

 private:
  bool compatibility_;
  bool composed_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override { s.lowercase(); }
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void normalize(NormalizedString& s) const override { s.strip(left_, right_); }

 private:
  bool left_, right_;
};

// The user's bytes `s` stands for: what its growth is measured against.
std::size_t original_bytes(const NormalizedString& s) {
  return static_cast<std::size_t>(s.original_end() - s.original_start());
}

class PrependNormalizer final : public Normalizer {
 public:
  PrependNormalizer(std::string prefix, std::string where)
      : prefix_(std::move(prefix)), where_(std::move(where)) {}
  void normalize(NormalizedString& s) const override {
    // Once per piece between added tokens: a long prefix times many pieces adds up.
    if (!s.empty()) check_growth(s.text().size() + prefix_.size(), original_bytes(s), where_);
    s.prepend(prefix_);
  }

 private:
  std::string prefix_;
  std::string where_;
};

// Replace: a literal string (the common " " -> "▁") or a regular expression.
class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(std::string literal, std::unique_ptr<Regex> regex, std::string content,
                    std::string where)
      : literal_(std::move(literal)),
        regex_(std::move(regex)),
        content_(std::move(content)),
        where_(std::move(where)) {}
  void normalize(NormalizedString& s) const override {
    if (regex_) {
      replace(s, regex_->find_matches(s.text()));
      return;
    }
    if (literal_.empty() || s.text().find(literal_) == std::string::npos) return;
    std::vector<PatternMatch> matches;
    const std::string& text = s.text();
    int previous = 0;
    for (std::size_t at = text.find(literal_); at != std::string::npos;
         at = text.find(literal_, at + literal_.size())) {
      if (previous < static_cast<int>(at))
        matches.push_back({previous, static_cast<int>(at), false});
      previous = static_cast<int>(at + literal_.size());
      matches.push_back({static_cast<int>(at), previous, true});
    }
    if (previous < static_cast<int>(text.size())) {
      matches.push_back({previous, static_cast<int>(text.size()), false});
    }
    replace(s, matches);
  }

 private:
  // The size of the result is known from the matches: checked before anything is built.
  void replace(NormalizedString& s, const std::vector<PatternMatch>& matches) const {
    std::size_t bytes = s.text().size();
    for (const PatternMatch& m : matches) {
      if (m.is_match) bytes += content_.size() - static_cast<std::size_t>(m.end - m.start);
    }
    check_growth(bytes, original_bytes(s), where_);
    s.replace(matches, content_);
  }

  std::string literal_;
  std::unique_ptr<Regex> regex_;
  std::string content_;
  std::string where_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps, std::string where)
      : steps_(std::move(steps)), where_(std::move(where)) {}
  void normalize(NormalizedString& s) const override {
    // Each step grows the text by a bounded factor (Replace and Prepend check themselves), so a
    // check after each keeps a chain of them (NFKD after NFKD after Replace …) bounded too.
    for (const auto& step : steps_) {
      step->normalize(s);
      check_growth(s.text().size(), original_bytes(s), where_);
    }
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
  std::string where_;
};

// Hugging Face's BERT control: categories Cc, Cf, Co except TAB, LF and CR.
bool is_bert_control(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  return unicode::is_control_format_private(cp);
}

// The CJK blocks of Hugging Face's (Rust) is_chinese_char, with its 0x2B920 bound.
bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

class BertNormalizer final : public Normalizer {
 public:
  explicit BertNormalizer(const BertNormalizerOptions& options) : o_(options) {}
  void normalize(NormalizedString& s) const override {
    if (is_ascii(s.text())) {
      normalize_ascii(s);
      return;
    }
    std::vector<CharAlignment> chars;
    chars.reserve(s.text().size() + 8);
    for (const CharAlignment& c : s.chars()) {
      char32_t value = c.c;
      if (o_.clean_text) {
        if (value == 0 || value == unicode::kReplacementCharacter || is_bert_control(value))
          continue;
        if (unicode::is_white_space(value)) value = ' ';
      }
      if (o_.handle_chinese_chars && is_chinese_char(value)) {
        chars.push_back({' ', c.align});
        chars.push_back({value, c.align});
        chars.push_back({' ', c.align});
        continue;
      }
      chars.push_back({value, c.align});
    }
    if (o_.strip_accents) {
      chars = aligned(chars, decompose(chars, false));
      std::erase_if(chars, [](const CharAlignment& c) { return unicode::is_nonspacing_mark(c.c); });
    }
    s.assign(chars);
    if (o_.lowercase) s.lowercase();
  }

 private:
  // ASCII text needs no tables: controls dropped, TAB/LF/CR made spaces, A-Z lowered.
  void normalize_ascii(NormalizedString& s) const {
    if (o_.clean_text) {
      bool changes = false;
      for (char c : s.text())
        changes = changes || static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
      if (changes) {
        std::vector<CharAlignment> chars;
        for (const CharAlignment& c : s.chars()) {
          const bool tab_or_newline = c.c == '\t' || c.c == '\n' || c.c == '\r';
          if ((c.c < 0x20 && !tab_or_newline) || c.c == 0x7F) continue;
          chars.push_back({tab_or_newline ? U' ' : c.c, c.align});
        }
        s.assign(chars);
      }
    }
    if (o_.lowercase) s.lowercase();
  }

  BertNormalizerOptions o_;
};

}  // namespace

bool is_bert_punctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  return unicode::is_punctuation(cp);
}

std::unique_ptr<Normalizer> make_bert_normalizer(const BertNormalizerOptions& options) {
  return std::make_unique<BertNormalizer>(options);
}

namespace {

std::unique_ptr<Normalizer> make_normalizer_at(const nlohmann::json& json, const std::string& where,
                                               int depth) {
  if (json.is_null()) return nullptr;
  check_nesting(depth, where);
  const std::string type = string_field(json, "type", where);
  const std::string here = where + " " + type;
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(false, true);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(false, false);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(true, true);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(true, false);
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "Strip") {
    return std::make_unique<StripNormalizer>(bool_field(json, "strip_left", true, here),
                                             bool_field(json, "strip_right", true, here));
  }
  if (type == "Prepend")
    return std::make_unique<PrependNormalizer>(string_field(json, "prepend", here), here);
  if (type == "Replace") {
    const std::string content = string_field(json, "content", here);
    const nlohmann::json& pattern = object_field(json, "pattern", here);
    if (pattern.contains("Regex")) {
      return std::make_unique<ReplaceNormalizer>(
          "", std::make_unique<Regex>(string_field(pattern, "Regex", here), here), content, here);
    }
    return std::make_unique<ReplaceNormalizer>(string_field(pattern, "String", here), nullptr,
                                               content, here);
  }
  if (type == "BertNormalizer") {
    BertNormalizerOptions o;
    o.clean_text = bool_field(json, "clean_text", true, here);
    o.handle_chinese_chars = bool_field(json, "handle_chinese_chars", true, here);
    o.lowercase = bool_field(json, "lowercase", true, here);
    o.strip_accents = bool_field(json, "strip_accents", o.lowercase, here);  // null: as lowercase
    return make_bert_normalizer(o);
  }
  if (type == "Precompiled") return make_precompiled_normalizer(json, here);
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const nlohmann::json& step : array_field(json, "normalizers", here)) {
      if (auto n = make_normalizer_at(step, where, depth + 1)) steps.push_back(std::move(n));
    }
    return std::make_unique<SequenceNormalizer>(std::move(steps), here);
  }
  throw ModelError(where + ": normalizer type \"" + type + "\" is not supported");
}

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& json, const std::string& where) {
  return make_normalizer_at(json, where, 0);
}

}  // namespace attnscope::text
