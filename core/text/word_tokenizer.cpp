#include "core/text/word_tokenizer.h"

#include <utf8proc.h>

namespace attnscope {

namespace {

enum class CharClass { kWord, kApostrophe, kSpace, kOther, kInvalid };

struct Decoded {
  utf8proc_int32_t cp = 0;
  int bytes = 1;
  CharClass cls = CharClass::kInvalid;
};

Decoded decode(std::string_view text, size_t at) {
  Decoded d;
  utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + at),
                                        static_cast<utf8proc_ssize_t>(text.size() - at), &d.cp);
  if (n <= 0) return d;  // invalid: one byte, kInvalid
  d.bytes = static_cast<int>(n);
  if (d.cp == '\'' || d.cp == 0x2019) {
    d.cls = CharClass::kApostrophe;
    return d;
  }
  switch (utf8proc_category(d.cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      d.cls = CharClass::kWord;
      break;
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
      d.cls = CharClass::kSpace;
      break;
    default:
      d.cls = CharClass::kOther;
  }
  return d;
}

void append_utf8(std::string& out, utf8proc_int32_t cp) {
  utf8proc_uint8_t buf[4];
  utf8proc_ssize_t n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

}  // namespace

WordTokenization word_tokenize(std::string_view text, int max_tokens) {
  WordTokenization result;
  size_t at = 0;
  while (at < text.size()) {
    Decoded d = decode(text, at);
    if (d.cls == CharClass::kSpace) {
      at += d.bytes;
      continue;
    }
    if (max_tokens >= 0 && static_cast<int>(result.tokens.size()) >= max_tokens) {
      result.truncated_at_byte = static_cast<int>(at);
      break;
    }
    Token t;
    t.start = static_cast<int>(at);
    if (d.cls == CharClass::kWord) {
      // Extend over word characters and apostrophes that sit between two word characters.
      while (true) {
        if (d.cls == CharClass::kWord) {
          append_utf8(t.text, utf8proc_tolower(d.cp));
        } else if (d.cls == CharClass::kApostrophe) {
          size_t next = at + d.bytes;
          if (next >= text.size() || decode(text, next).cls != CharClass::kWord) break;
          t.text += '\'';  // ’ and ' are the same apostrophe for lookup
        } else {
          break;
        }
        at += d.bytes;
        if (at >= text.size()) break;
        d = decode(text, at);
      }
    } else {
      if (d.cls == CharClass::kInvalid)
        t.text = "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      else
        t.text.assign(text.substr(at, d.bytes));
      at += d.bytes;
    }
    t.end = static_cast<int>(at);
    result.tokens.push_back(std::move(t));
  }
  return result;
}

}  // namespace attnscope
