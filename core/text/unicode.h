#pragma once
// Unicode helpers the tokenizers share: strict UTF-8 decoding with a defined behaviour for invalid
// bytes, and character properties (general category, White_Space, case, canonical decomposition)
// taken from utf8proc's tables (Unicode 15 in Debian 12's libutf8proc 2.8), never hand-typed ones.
// utf8proc stays private to the core: nothing here exposes its headers.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::unicode {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

// One code point decoded from UTF-8 text and the bytes [start, start + length) it came from.
// Invalid UTF-8 (a stray continuation byte, a truncated or overlong sequence, an encoded surrogate,
// anything above U+10FFFF) never throws: each byte that does not begin a well-formed sequence is
// decoded on its own as U+FFFD with length 1 and `valid` false. The tokenizers classify such a byte
// as U+FFFD; the byte-level BPE still encodes the raw byte, so no input byte is ever lost there.
struct CodePoint {
  char32_t value = 0;
  int start = 0;
  int length = 1;
  bool valid = true;
};

// Decodes the code point that begins at byte `offset` (< text.size()).
CodePoint decode_at(std::string_view text, std::size_t offset);
std::vector<CodePoint> decode_utf8(std::string_view text);
// Appends the UTF-8 encoding of `cp` (U+FFFD for surrogates and values above U+10FFFF).
void append_utf8(std::string& out, char32_t cp);
std::string to_utf8(char32_t cp);
bool is_valid_utf8(std::string_view text);
// `bytes` as valid UTF-8, each invalid byte replaced by U+FFFD: a token's bytes may be part of a
// multi-byte character (byte-level BPE splits emoji), while traces are JSON and the UI draws UTF-8.
std::string printable_utf8(std::string_view bytes);

// The two-letter general category, e.g. "Lu", "Nd", "Zs"; "Cn" for unassigned code points.
std::string_view general_category(char32_t cp);

bool is_letter(char32_t cp);                  // L*: Lu Ll Lt Lm Lo (the regex class \p{L})
bool is_number(char32_t cp);                  // N*: Nd Nl No (the regex class \p{N})
bool is_punctuation(char32_t cp);             // P*: Pc Pd Ps Pe Pi Pf Po
bool is_nonspacing_mark(char32_t cp);         // Mn
bool is_control_format_private(char32_t cp);  // Cc Cf Co: what Hugging Face's BERT calls "other"
// The White_Space property, which is what \s means in Hugging Face's (Rust) regexes: U+0085 is
// white space, U+FEFF is not (it is Cf). Equals the Z* categories plus U+0009..U+000D and U+0085.
bool is_white_space(char32_t cp);

// Simple lowercase mapping of one code point, from utf8proc.
char32_t to_lower_simple(char32_t cp);
// Full lowercase mapping as Rust's char::to_lowercase gives it: the simple mapping, except U+0130
// (capital I with dot above), whose only unconditional SpecialCasing entry is "i" + U+0307.
std::u32string to_lower_full(char32_t cp);
// Full canonical decomposition of one code point (Hangul syllables included), not yet reordered.
std::u32string canonical_decomposition(char32_t cp);
// Canonical combining class (0 for starters).
int combining_class(char32_t cp);
// Full decomposition of one code point: canonical, or compatibility (NFKD's) when asked.
std::u32string decomposition(char32_t cp, bool compatibility);
// The primary composite of `starter` followed by `mark` (NFC's pairwise composition), or 0.
char32_t compose_pair(char32_t starter, char32_t mark);

}  // namespace attnscope::unicode
