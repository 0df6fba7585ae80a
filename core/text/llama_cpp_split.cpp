#include "core/text/llama_cpp_split.h"

#include <array>

#include "core/text/unicode.h"

namespace attnscope::llama_cpp {
namespace {

std::uint16_t category_flag(std::string_view category) {
  switch (category[0]) {
    case 'L':
      return kLetter;
    case 'N':
      return kNumber;
    case 'M':
      return kMark;
    case 'P':
      return kPunctuation;
    case 'S':
      return kSymbol;
    case 'Z':
      return kSeparator;
    case 'C':
      return category == "Cn" ? kUndefined : kControl;
    default:
      return kUndefined;
  }
}

// Unicode 15.1's new characters, which llama.cpp's table (generated from 15.1) has and Debian 12's
// utf8proc (15.0) does not: CJK Extension I (Lo) and five ideographic description characters (So).
std::uint16_t unicode_15_1_flag(char32_t cp) {
  if (cp >= 0x2EBF0 && cp <= 0x2EE5D) return kLetter;
  if ((cp >= 0x2FFC && cp <= 0x2FFF) || cp == 0x31EF) return kSymbol;
  return kUndefined;
}

const std::array<std::uint16_t, 0x10000>& bmp_flags() {
  static const auto table = [] {
    std::array<std::uint16_t, 0x10000> t{};
    for (char32_t cp = 0; cp < 0x10000; ++cp) {
      std::uint16_t flags = category_flag(unicode::general_category(cp));
      if (flags == kUndefined) flags = unicode_15_1_flag(cp);
      if (unicode::is_white_space(cp)) flags |= kWhitespace;
      t[cp] = flags;
    }
    return t;
  }();
  return table;
}

}  // namespace

std::uint16_t code_point_flags(char32_t cp) {
  if (cp < 0x10000) return bmp_flags()[cp];
  if (cp > 0x10FFFF) return kUndefined;
  std::uint16_t flags = category_flag(unicode::general_category(cp));
  if (flags == kUndefined) flags = unicode_15_1_flag(cp);
  return flags;  // no White_Space character lies above the BMP
}

std::vector<LlamaCodePoint> decode_like_llama_cpp(std::string_view text) {
  std::vector<LlamaCodePoint> out;
  out.reserve(text.size());
  const std::size_t size = text.size();
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  auto continuation = [&](std::size_t i) { return (byte(i) & 0xC0) == 0x80; };
  for (std::size_t i = 0; i < size;) {
    const unsigned char b = byte(i);
    LlamaCodePoint cp;
    cp.start = static_cast<int>(i);
    cp.value = 0xFFFD;
    cp.length = 1;
    if (b < 0x80) {
      cp.value = b;
    } else if ((b & 0x40) == 0) {
      // a continuation byte where a character should begin
    } else if ((b & 0x20) == 0) {
      if (i + 1 < size && continuation(i + 1)) {
        cp.value = (char32_t(b & 0x1F) << 6) | (byte(i + 1) & 0x3F);
        cp.length = 2;
      }
    } else if ((b & 0x10) == 0) {
      if (i + 2 < size && continuation(i + 1) && continuation(i + 2)) {
        cp.value =
            (char32_t(b & 0x0F) << 12) | (char32_t(byte(i + 1) & 0x3F) << 6) | (byte(i + 2) & 0x3F);
        cp.length = 3;
      }
    } else if ((b & 0x08) == 0) {
      if (i + 3 < size && continuation(i + 1) && continuation(i + 2) && continuation(i + 3)) {
        const char32_t value = (char32_t(b & 0x07) << 18) | (char32_t(byte(i + 1) & 0x3F) << 12) |
                               (char32_t(byte(i + 2) & 0x3F) << 6) | (byte(i + 3) & 0x3F);
        if (value <= 0x10FFFF) {
          cp.value = value;
          cp.length = 4;
        }
      }
    }
    out.push_back(cp);
    i += static_cast<std::size_t>(cp.length);
  }
  return out;
}

void append_utf8_raw(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | ((cp >> 18) & 0x07)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

namespace {

constexpr char32_t kOutOfRange = 0xFFFFFFFF;

// One word being cut: code points outside it read as kOutOfRange with no flags, as llama.cpp's
// _get_cpt/_get_flags do.
class Cutter {
 public:
  Cutter(const std::vector<LlamaCodePoint>& cps, Word word, std::vector<Word>& out)
      : cps_(cps), begin_(word.begin), end_(word.end), previous_(word.begin), out_(out) {}

  char32_t cpt(std::size_t pos) const {
    return pos >= begin_ && pos < end_ ? cps_[pos].value : kOutOfRange;
  }
  std::uint16_t flags(std::size_t pos) const {
    return pos >= begin_ && pos < end_ ? code_point_flags(cps_[pos].value) : 0;
  }
  // Ends a word at `end` (nothing when empty); returns its length.
  std::size_t add(std::size_t end) {
    const std::size_t length = end - previous_;
    if (length > 0) out_.push_back({previous_, end});
    previous_ = end;
    return length;
  }
  std::size_t begin() const { return begin_; }
  std::size_t end() const { return end_; }

 private:
  const std::vector<LlamaCodePoint>& cps_;
  std::size_t begin_, end_, previous_;
  std::vector<Word>& out_;
};

bool is(std::uint16_t flags, std::uint16_t flag) {
  return (flags & flag) != 0;
}

char32_t ascii_lower(char32_t c) {
  return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

// The contractions at `pos` ('s 't 'm 'd, 're 've 'll); case-insensitive for Llama 3 / Qwen2.
// Returns the length matched (0 for none).
std::size_t contraction(const Cutter& c, std::size_t pos, bool any_case) {
  if (c.cpt(pos) != '\'' || pos + 1 >= c.end()) return 0;
  auto fold = [&](char32_t x) { return any_case ? ascii_lower(x) : x; };
  const char32_t next = fold(c.cpt(pos + 1));
  if (next == 's' || next == 't' || next == 'm' || next == 'd') return 2;
  if (pos + 2 < c.end()) {
    const char32_t next2 = fold(c.cpt(pos + 2));
    if ((next == 'r' && next2 == 'e') || (next == 'v' && next2 == 'e') ||
        (next == 'l' && next2 == 'l')) {
      return 3;
    }
  }
  return 0;
}

void split_gpt2(Cutter& c) {
  constexpr std::uint16_t kLN = kLetter | kNumber;
  for (std::size_t pos = c.begin(); pos < c.end();) {
    const char32_t cpt = c.cpt(pos);
    if (const std::size_t n = contraction(c, pos, false)) {
      pos += c.add(pos + n);
      continue;
    }
    std::uint16_t flags2 = cpt == ' ' ? c.flags(pos + 1) : c.flags(pos);
    if (is(flags2, kLetter)) {  // ' ?\p{L}+'
      pos += cpt == ' ';
      while (is(flags2, kLetter)) flags2 = c.flags(++pos);
      c.add(pos);
      continue;
    }
    if (is(flags2, kNumber)) {  // ' ?\p{N}+'
      pos += cpt == ' ';
      while (is(flags2, kNumber)) flags2 = c.flags(++pos);
      c.add(pos);
      continue;
    }
    if (!is(flags2, kWhitespace | kLN) && flags2 != 0) {  // ' ?[^\s\p{L}\p{N}]+'
      pos += cpt == ' ';
      while (!is(flags2, kWhitespace | kLN) && flags2 != 0) flags2 = c.flags(++pos);
      c.add(pos);
      continue;
    }
    std::size_t spaces = 0;
    while (is(c.flags(pos + spaces), kWhitespace)) ++spaces;
    if (spaces > 1 && c.cpt(pos + spaces) != kOutOfRange) {  // '\s+(?!\S)'
      pos += spaces - 1;
      c.add(pos);
      continue;
    }
    if (spaces > 0) {  // '\s+'
      pos += spaces;
      c.add(pos);
      continue;
    }
    c.add(++pos);  // no match: one code point on its own
  }
}

// Llama 3's pattern (max_digits 3) and Qwen2's (max_digits 1), as llama.cpp's matcher runs them.
void split_llama3(Cutter& c, std::size_t max_digits) {
  constexpr std::uint16_t kLN = kLetter | kNumber;
  for (std::size_t pos = c.begin(); pos < c.end();) {
    const char32_t cpt = c.cpt(pos);
    const std::uint16_t flags = c.flags(pos);
    if (const std::size_t n = contraction(c, pos, true)) {
      pos += c.add(pos + n);
      continue;
    }
    // '[^\r\n\p{L}\p{N}]?\p{L}+'
    if (!(cpt == '\r' || cpt == '\n' || is(flags, kNumber))) {
      if (is(flags, kLetter) || is(c.flags(pos + 1), kLetter)) {
        ++pos;
        while (is(c.flags(pos), kLetter)) ++pos;
        c.add(pos);
        continue;
      }
    }
    if (is(flags, kNumber)) {  // '\p{N}{1,3}' or '\p{N}'
      if (max_digits == 1) {
        c.add(++pos);
        continue;
      }
      std::size_t first = pos;
      while (is(c.flags(pos), kNumber)) {
        if (++pos - first >= max_digits) {
          c.add(pos);
          first = pos;
        }
      }
      c.add(pos);
      continue;
    }
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*' (llama.cpp tests the first code point's own flags here)
    std::uint16_t flags2 = cpt == ' ' ? c.flags(pos + 1) : flags;
    if (!is(flags2, kWhitespace | kLN) && flags != 0) {
      pos += cpt == ' ';
      while (!is(flags2, kWhitespace | kLN) && flags2 != 0) flags2 = c.flags(++pos);
      char32_t cpt2 = c.cpt(pos);
      while (cpt2 == '\r' || cpt2 == '\n') cpt2 = c.cpt(++pos);
      c.add(pos);
      continue;
    }
    std::size_t spaces = 0;
    std::size_t last_line_end = 0;
    while (is(c.flags(pos + spaces), kWhitespace)) {
      const char32_t cpt2 = c.cpt(pos + spaces);
      if (cpt2 == '\r' || cpt2 == '\n') last_line_end = pos + spaces + 1;
      ++spaces;
    }
    if (last_line_end > 0) {  // '\s*[\r\n]+'
      pos = last_line_end;
      c.add(pos);
      continue;
    }
    if (spaces > 1 && c.cpt(pos + spaces) != kOutOfRange) {  // '\s+(?!\S)'
      pos += spaces - 1;
      c.add(pos);
      continue;
    }
    if (spaces > 0) {  // '\s+'
      pos += spaces;
      c.add(pos);
      continue;
    }
    c.add(++pos);
  }
}

// The classes llama.cpp's std::regex sees on its collapsed text: ASCII code points as themselves,
// every other White_Space character as \v, and the rest by category (\p{N} -> 0xD1, \p{P} -> 0xD3).
bool collapsed_is_number(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  const std::uint16_t flags = code_point_flags(cp);
  return !is(flags, kWhitespace) && (flags & kCategoryMask) == kNumber;
}

bool collapsed_is_punctuation_class(char32_t cp) {  // [\p{P}\$\+<=>\^~\|]
  if (cp < 0x80) {
    // llama.cpp's ASCII \p{P}: !"#%&'()*,-./:;?@[\]_{} — then the listed $+<=>^~|
    return cp != 0 &&
           std::string_view("!\"#%&'()*,-./:;?@[\\]_{}$+<=>^~|").find(static_cast<char>(cp)) !=
               std::string_view::npos;
  }
  const std::uint16_t flags = code_point_flags(cp);
  return !is(flags, kWhitespace) && (flags & kCategoryMask) == kPunctuation;
}

// A regex of one class, once or as a run: matches and the gaps between them are words.
template <typename InClass>
void split_class(const std::vector<LlamaCodePoint>& cps, Word word, bool run, InClass in_class,
                 std::vector<Word>& out) {
  std::size_t gap = word.begin;
  for (std::size_t pos = word.begin; pos < word.end;) {
    if (!in_class(cps[pos].value)) {
      ++pos;
      continue;
    }
    std::size_t end = pos + 1;
    if (run) {
      while (end < word.end && in_class(cps[end].value)) ++end;
    }
    if (gap < pos) out.push_back({gap, pos});
    out.push_back({pos, end});
    gap = pos = end;
  }
  if (gap < word.end) out.push_back({gap, word.end});
}

void split_three_digits(const std::vector<LlamaCodePoint>& cps, Word word, std::vector<Word>& out) {
  auto digit = [&](std::size_t i) { return cps[i].value >= '0' && cps[i].value <= '9'; };
  std::size_t gap = word.begin;
  for (std::size_t pos = word.begin; pos + 3 <= word.end;) {
    if (digit(pos) && digit(pos + 1) && digit(pos + 2)) {
      if (gap < pos) out.push_back({gap, pos});
      out.push_back({pos, pos + 3});
      gap = pos = pos + 3;
    } else {
      ++pos;
    }
  }
  if (gap < word.end) out.push_back({gap, word.end});
}

}  // namespace

std::vector<Word> split_words(const std::vector<LlamaCodePoint>& cps,
                              const std::vector<Word>& words, SplitKind kind) {
  std::vector<Word> out;
  out.reserve(words.size() * 2);
  for (const Word& word : words) {
    switch (kind) {
      case SplitKind::kGpt2: {
        Cutter cutter(cps, word, out);
        split_gpt2(cutter);
        break;
      }
      case SplitKind::kLlama3:
      case SplitKind::kQwen2: {
        Cutter cutter(cps, word, out);
        split_llama3(cutter, kind == SplitKind::kLlama3 ? 3 : 1);
        break;
      }
      case SplitKind::kNumber:
        split_class(cps, word, false, collapsed_is_number, out);
        break;
      case SplitKind::kNumberRun:
        split_class(cps, word, true, collapsed_is_number, out);
        break;
      case SplitKind::kPunctuationRun:
        split_class(cps, word, true, collapsed_is_punctuation_class, out);
        break;
      case SplitKind::kPunctuationRunBq:
        split_class(
            cps, word, true,
            [](char32_t cp) { return cp == '`' || collapsed_is_punctuation_class(cp); }, out);
        break;
      case SplitKind::kThreeAsciiDigits:
        split_three_digits(cps, word, out);
        break;
    }
  }
  return out;
}

}  // namespace attnscope::llama_cpp
