#pragma once
// The text llama.cpp's BPE tokenizer sees, and how it cuts it into words (src/unicode.cpp's
// unicode_cpts_from_utf8 and unicode_regex_split): not a regex engine's answer but llama.cpp's own
// — its lenient UTF-8 decoding, its hand-written matchers for the GPT-2, Llama 3 and Qwen2
// patterns, and its character categories. Internal to core/text/llama_cpp_tokenizer.cpp (and its
// tests).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::llama_cpp {

// llama.cpp's unicode_cpt_flags bits (src/unicode.h), which its splitters test.
enum CpFlag : std::uint16_t {
  kUndefined = 0x0001,
  kNumber = 0x0002,
  kLetter = 0x0004,
  kSeparator = 0x0008,
  kMark = 0x0010,
  kPunctuation = 0x0020,
  kSymbol = 0x0040,
  kControl = 0x0080,
  kCategoryMask = 0x00FF,
  kWhitespace = 0x0100,
};

// The flags of one code point: its general category (from utf8proc, Unicode 15.0, plus the
// characters Unicode 15.1 assigned, which llama.cpp's generated table has) and White_Space.
// Code points above U+10FFFF are kUndefined, as llama.cpp has them.
std::uint16_t code_point_flags(char32_t cp);

// One code point as llama.cpp decodes the text: ASCII, or a lead byte with the continuation bytes
// its length asks for (overlong forms and surrogates accepted as llama.cpp accepts them); any byte
// that begins no such sequence is U+FFFD on its own (llama.cpp's "silently ignore invalid UTF-8").
// A sequence whose value lies above U+10FFFF (F4 90.., F5-F7 lead bytes), on which llama.cpp
// throws out of llama_tokenize, is treated here as an invalid lead byte.
struct LlamaCodePoint {
  char32_t value = 0;
  int start = 0;   // byte offset in the text
  int length = 1;  // bytes it came from
};
std::vector<LlamaCodePoint> decode_like_llama_cpp(std::string_view text);

// Appends the UTF-8 of `cp` (<= U+10FFFF; surrogates encoded as they are, as llama.cpp does).
void append_utf8_raw(std::string& out, char32_t cp);

// A word: code points [begin, end) of the decoded text.
struct Word {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// How a pre-tokenizer regex is run. kGpt2/kLlama3/kQwen2 are llama.cpp's hand-written matchers
// (unicode_regex_split_custom_*); the others are regexes llama.cpp runs with std::regex on its
// "collapsed" text, written out here as the exact character-class matchers they amount to.
enum class SplitKind {
  kGpt2,       // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
  kLlama3,     // (?:'[sS]|…)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|…
  kQwen2,      // as kLlama3 with \p{N} instead of \p{N}{1,3}
  kNumber,     // \p{N}
  kNumberRun,  // \p{N}+
  kPunctuationRun,    // [\p{P}\$\+<=>\^~\|]+   (pre "default")
  kPunctuationRunBq,  // [\p{P}\$\+<=>\^~\|`]+  (pre "falcon": a backquote too)
  kThreeAsciiDigits,  // [0-9][0-9][0-9]
};

// One step of unicode_regex_split: every word of `words` cut by `kind` (matches and the text
// between them each a word, in order).
std::vector<Word> split_words(const std::vector<LlamaCodePoint>& cps,
                              const std::vector<Word>& words, SplitKind kind);

}  // namespace attnscope::llama_cpp
