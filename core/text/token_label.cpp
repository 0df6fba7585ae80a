#include "core/text/token_label.h"

#include <array>
#include <unordered_map>
#include <vector>

#include "core/text/pipeline/pre_tokenizers.h"
#include "core/text/unicode.h"

namespace attnscope {

namespace {

constexpr std::string_view kSentencePieceSpace = "\xE2\x96\x81";  // ▁ U+2581

// GPT-2's table read backwards: the character each byte is written as → that byte.
const std::unordered_map<char32_t, unsigned char>& byte_of_char() {
  static const std::unordered_map<char32_t, unsigned char> table = [] {
    std::unordered_map<char32_t, unsigned char> m;
    const std::vector<std::string>& chars = text::byte_level_chars();
    for (int b = 0; b < 256; ++b)
      m.emplace(unicode::decode_at(chars[static_cast<std::size_t>(b)], 0).value,
                static_cast<unsigned char>(b));
    return m;
  }();
  return table;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "<0xE8>" → 0xE8; -1 when `piece` is not a byte-fallback piece.
int fallback_byte(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece.back() != '>') return -1;
  const int hi = hex_digit(piece[3]), lo = hex_digit(piece[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string hex_bytes(std::string_view bytes) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (i) out += ' ';
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

// How one code point is shown: visible signs for white space and control characters.
std::string shown_char(char32_t cp, bool whitespace_only) {
  switch (cp) {
    case '\n':
      return "\xE2\x86\xB5";  // ↵
    case '\t':
      return "\xE2\x87\xA5";  // ⇥
    case '\r':
      return "\xE2\x90\x8D";  // ␍
    default:
      break;
  }
  if (cp < 0x20) return unicode::to_utf8(0x2400 + cp);  // Control Pictures: ␀ ␁ …
  if (cp == 0x7F) return "\xE2\x90\xA1";                // ␡
  if (whitespace_only && unicode::is_white_space(cp)) return "\xE2\x90\xA3";  // ␣
  return unicode::to_utf8(cp);
}

// One piece of a label, never cut: a character, a partial character with its marker, hex bytes.
struct Unit {
  std::string text;
  int chars = 1;  // code points it shows, for max_chars
  char32_t cp = 0;
  bool is_char = false;  // a whole character of this token (may be white space)
};

int count_code_points(std::string_view s) {
  int n = 0;
  for (const char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

// `shown` followed by `inner` in single guillemets: "边‹1/3›", "‹E8›".
Unit marker_unit(std::string_view shown, std::string_view inner) {
  Unit u;
  u.text.append(shown);
  u.text += "\xE2\x80\xB9";  // ‹
  u.text.append(inner);
  u.text += "\xE2\x80\xBA";  // ›
  u.chars = count_code_points(u.text);
  return u;
}

// The units of bytes [from, to) of `stream`, decoded as UTF-8 with the bytes around for context.
std::vector<Unit> units_of(std::string_view stream, std::size_t from, std::size_t to) {
  std::vector<Unit> units;
  std::string invalid;  // a run of bytes that form no character, shown as one hex marker
  auto flush_invalid = [&] {
    if (invalid.empty()) return;
    units.push_back(marker_unit("", hex_bytes(invalid)));
    invalid.clear();
  };
  for (const unicode::CodePoint& cp : unicode::decode_utf8(stream)) {
    const auto start = static_cast<std::size_t>(cp.start);
    const std::size_t end = start + static_cast<std::size_t>(cp.length);
    if (end <= from || start >= to) continue;
    if (!cp.valid) {
      invalid += stream[start];
      continue;
    }
    flush_invalid();
    if (start >= from && end <= to) {
      Unit u;
      u.cp = cp.value;
      u.is_char = true;
      units.push_back(u);
      continue;
    }
    // Part of a character that other tokens complete: the character, and which bytes are here.
    const std::size_t first = std::max(start, from) - start + 1, last = std::min(end, to) - start;
    std::string held = std::to_string(first);
    if (last != first) {
      held += '-';  // piece by piece: GCC 12 -Wrestrict (bug 105329) on "-" + s
      held += std::to_string(last);
    }
    held += '/';
    held += std::to_string(cp.length);
    units.push_back(marker_unit(unicode::to_utf8(cp.value), held));
  }
  flush_invalid();
  return units;
}

std::string join(std::vector<Unit>& units, int max_chars) {
  bool whitespace_only = true;
  for (const Unit& u : units)
    if (!u.is_char || !unicode::is_white_space(u.cp)) whitespace_only = false;
  std::size_t first = 0;
  if (!whitespace_only)  // the word's leading space: the views put gaps between tokens
    while (first < units.size() && units[first].is_char && units[first].cp == ' ') ++first;
  std::string out;
  int chars = 0;
  for (std::size_t k = first; k < units.size(); ++k) {
    Unit& u = units[k];
    if (u.is_char) u.text = shown_char(u.cp, whitespace_only);
    if (chars > 0 && chars + u.chars > max_chars) {
      out += "\xE2\x80\xA6";  // …
      break;
    }
    out += u.text;
    chars += u.chars;
  }
  if (out.empty()) out = "\xE2\x88\x85";  // ∅
  return out;
}

bool is_piece_char_of_byte_level(char32_t cp) {
  // The table's characters for unprintable bytes: U+0100..U+0143 (Ġ U+0120, Ċ U+010A, …).
  return cp >= 0x100 && cp <= 0x143;
}

}  // namespace

const char* piece_encoding_name(PieceEncoding encoding) {
  switch (encoding) {
    case PieceEncoding::kByteLevel:
      return "byte_level";
    case PieceEncoding::kSentencePiece:
      return "sentencepiece";
    case PieceEncoding::kPlain:
      break;
  }
  return "plain";
}

std::optional<PieceEncoding> parse_piece_encoding(std::string_view name) {
  for (PieceEncoding e :
       {PieceEncoding::kPlain, PieceEncoding::kByteLevel, PieceEncoding::kSentencePiece})
    if (name == piece_encoding_name(e)) return e;
  return std::nullopt;
}

PieceEncoding guess_piece_encoding(const Tokens& tokens) {
  for (const Token& t : tokens) {
    if (t.special) continue;
    if (t.text.find(kSentencePieceSpace) != std::string::npos || fallback_byte(t.text) >= 0)
      return PieceEncoding::kSentencePiece;
    for (const unicode::CodePoint& cp : unicode::decode_utf8(t.text))
      if (is_piece_char_of_byte_level(cp.value)) return PieceEncoding::kByteLevel;
  }
  return PieceEncoding::kPlain;
}

std::string piece_bytes(std::string_view piece, PieceEncoding encoding) {
  switch (encoding) {
    case PieceEncoding::kPlain:
      return std::string(piece);
    case PieceEncoding::kByteLevel: {
      const auto& table = byte_of_char();
      std::string bytes;
      for (const unicode::CodePoint& cp : unicode::decode_utf8(piece)) {
        const auto it = cp.valid ? table.find(cp.value) : table.end();
        if (it != table.end())
          bytes += static_cast<char>(it->second);
        else  // not from the table (an added token's text): its own bytes
          bytes.append(piece.substr(static_cast<std::size_t>(cp.start),
                                    static_cast<std::size_t>(cp.length)));
      }
      return bytes;
    }
    case PieceEncoding::kSentencePiece: {
      if (const int b = fallback_byte(piece); b >= 0) return std::string(1, static_cast<char>(b));
      std::string out;
      for (std::size_t pos = 0;;) {
        const std::size_t at = piece.find(kSentencePieceSpace, pos);
        out.append(piece.substr(pos, at == std::string_view::npos ? piece.npos : at - pos));
        if (at == std::string_view::npos) return out;
        out += ' ';
        pos = at + kSentencePieceSpace.size();
      }
    }
  }
  return std::string(piece);
}

std::string token_label(const Tokens& tokens, std::size_t i, PieceEncoding encoding,
                        int max_chars) {
  if (i >= tokens.size()) return "?";
  const Token& token = tokens[i];
  // Added special tokens are the tokenizer's own words, not encoded text.
  const PieceEncoding own = token.special ? PieceEncoding::kPlain : encoding;
  const std::string bytes = piece_bytes(token.text, own);
  // A character is at most 4 bytes: 3 bytes of neighbours on each side name any character this
  // token holds part of. Special tokens end the run of text.
  std::string before, after;
  if (!token.special && encoding != PieceEncoding::kPlain) {
    for (std::size_t k = i; k-- > 0 && before.size() < 3 && !tokens[k].special;)
      before.insert(0, piece_bytes(tokens[k].text, encoding));
    for (std::size_t k = i + 1; k < tokens.size() && after.size() < 3 && !tokens[k].special; ++k)
      after += piece_bytes(tokens[k].text, encoding);
  }
  if (before.size() > 3) before.erase(0, before.size() - 3);
  if (after.size() > 3) after.resize(3);
  std::vector<Unit> units =
      units_of(before + bytes + after, before.size(), before.size() + bytes.size());
  return join(units, max_chars);
}

std::string bytes_label(std::string_view bytes, int max_chars) {
  std::vector<Unit> units = units_of(bytes, 0, bytes.size());
  return join(units, max_chars);
}

}  // namespace attnscope
