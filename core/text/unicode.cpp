#include "core/text/unicode.h"

#include <utf8proc.h>

#include <array>
#include <cstdint>

namespace attnscope::unicode {
namespace {

// The tokenizers ask for the category of every character on every keystroke: keep the Basic
// Multilingual Plane's categories in a 64 KiB table, filled once from utf8proc.
const std::array<std::uint8_t, 0x10000>& bmp_categories() {
  static const auto table = [] {
    std::array<std::uint8_t, 0x10000> t{};
    for (std::size_t cp = 0; cp < t.size(); ++cp) {
      t[cp] = static_cast<std::uint8_t>(utf8proc_category(static_cast<utf8proc_int32_t>(cp)));
    }
    return t;
  }();
  return table;
}

utf8proc_category_t category_of(char32_t cp) {
  if (cp < 0x10000) return static_cast<utf8proc_category_t>(bmp_categories()[cp]);
  if (cp > 0x10FFFF) return UTF8PROC_CATEGORY_CN;
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

}  // namespace

CodePoint decode_at(std::string_view text, std::size_t offset) {
  CodePoint result;
  result.start = static_cast<int>(offset);
  const auto first = static_cast<unsigned char>(text[offset]);
  if (first < 0x80) {  // the common case, without a call into utf8proc
    result.value = first;
    return result;
  }
  utf8proc_int32_t value = 0;
  // utf8proc_iterate is strict: it rejects overlong forms, surrogates and values above U+10FFFF.
  const utf8proc_ssize_t length =
      utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + offset),
                       static_cast<utf8proc_ssize_t>(text.size() - offset), &value);
  if (length <= 0 || value < 0) {
    result.value = kReplacementCharacter;
    result.valid = false;
    return result;
  }
  result.value = static_cast<char32_t>(value);
  result.length = static_cast<int>(length);
  return result;
}

std::vector<CodePoint> decode_utf8(std::string_view text) {
  std::vector<CodePoint> result;
  result.reserve(text.size());
  for (std::size_t offset = 0; offset < text.size();) {
    result.push_back(decode_at(text, offset));
    offset += static_cast<std::size_t>(result.back().length);
  }
  return result;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacementCharacter;
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
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string to_utf8(char32_t cp) {
  std::string out;
  append_utf8(out, cp);
  return out;
}

std::string printable_utf8(std::string_view bytes) {
  if (is_valid_utf8(bytes)) return std::string(bytes);
  std::string out;
  for (const CodePoint& cp : decode_utf8(bytes))
    append_utf8(out, cp.valid ? cp.value : kReplacementCharacter);
  return out;
}

bool is_valid_utf8(std::string_view text) {
  for (std::size_t offset = 0; offset < text.size();) {
    const CodePoint cp = decode_at(text, offset);
    if (!cp.valid) return false;
    offset += static_cast<std::size_t>(cp.length);
  }
  return true;
}

std::string_view general_category(char32_t cp) {
  if (cp > 0x10FFFF) return "Cn";
  return utf8proc_category_string(static_cast<utf8proc_int32_t>(cp));
}

bool is_letter(char32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  const auto c = category_of(cp);
  return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}

bool is_number(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  const auto c = category_of(cp);
  return c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO;
}

bool is_punctuation(char32_t cp) {
  const auto c = category_of(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool is_nonspacing_mark(char32_t cp) {
  return category_of(cp) == UTF8PROC_CATEGORY_MN;
}

bool is_control_format_private(char32_t cp) {
  const auto c = category_of(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CO;
}

bool is_white_space(char32_t cp) {
  // White_Space is not in utf8proc's property record, but it is exactly the separators (Z*) plus
  // six controls: TAB, LF, VT, FF, CR and NEL (U+0085). The unit test checks this against the full
  // PropList list.
  if (cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85) return true;
  if (cp < 0x80) return false;
  const auto c = category_of(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

char32_t to_lower_simple(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (cp > 0x10FFFF) return cp;
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

std::u32string to_lower_full(char32_t cp) {
  if (cp == 0x130) return U"i\u0307";
  return std::u32string(1, to_lower_simple(cp));
}

std::u32string canonical_decomposition(char32_t cp) {
  if (cp < 0xC0 || cp > 0x10FFFF) return std::u32string(1, cp);  // nothing below U+00C0 decomposes
  utf8proc_int32_t buffer[32];
  const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buffer, 32,
                                                     UTF8PROC_DECOMPOSE, nullptr);
  if (n <= 0 || n > 32) return std::u32string(1, cp);
  std::u32string result;
  for (utf8proc_ssize_t i = 0; i < n; ++i) result.push_back(static_cast<char32_t>(buffer[i]));
  return result;
}

std::u32string decomposition(char32_t cp, bool compatibility) {
  if (cp < 0xA0 || cp > 0x10FFFF) return std::u32string(1, cp);  // nothing below U+00A0 decomposes
  utf8proc_int32_t buffer[32];
  const int options = UTF8PROC_DECOMPOSE | (compatibility ? UTF8PROC_COMPAT : 0);
  const utf8proc_ssize_t n =
      utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buffer, 32,
                              static_cast<utf8proc_option_t>(options), nullptr);
  if (n <= 0 || n > 32) return std::u32string(1, cp);
  std::u32string result;
  for (utf8proc_ssize_t i = 0; i < n; ++i) result.push_back(static_cast<char32_t>(buffer[i]));
  return result;
}

char32_t compose_pair(char32_t starter, char32_t mark) {
  if (mark < 0x300 || starter > 0x10FFFF || mark > 0x10FFFF) return 0;
  utf8proc_int32_t buffer[2] = {static_cast<utf8proc_int32_t>(starter),
                                static_cast<utf8proc_int32_t>(mark)};
  const utf8proc_ssize_t n = utf8proc_normalize_utf32(buffer, 2, UTF8PROC_COMPOSE);
  if (n != 1) return 0;
  // Composition exclusions (e.g. U+1D15E..U+1D164) never recompose in NFC.
  if (utf8proc_get_property(buffer[0])->comp_exclusion) return 0;
  return static_cast<char32_t>(buffer[0]);
}

int combining_class(char32_t cp) {
  if (cp < 0x300 || cp > 0x10FFFF) return 0;
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

}  // namespace attnscope::unicode
