#pragma once
// Hugging Face's NormalizedString: a piece of the user's text after normalization, with, for every
// byte of the normalized text, the bytes [start, end) of the user's text it came from. Token
// offsets are read back through these alignments, so they always refer to the user's text.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text/unicode.h"

namespace attnscope::text {

struct Alignment {
  int start = 0;
  int end = 0;
};

// How a split pattern's matches are kept (Hugging Face's SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// A byte range of a normalized text and whether it is a match of the pattern.
struct PatternMatch {
  int start = 0;
  int end = 0;
  bool is_match = false;
};

class NormalizedString {
 public:
  NormalizedString() = default;
  // `text` is the user's whole text; the piece is its bytes [start, end). Invalid UTF-8 never
  // throws: each byte that does not begin a well-formed sequence becomes U+FFFD aligned to that
  // one byte (as Python's errors="replace" would give Hugging Face), so normalized text is always
  // valid UTF-8.
  NormalizedString(std::string_view text, int start, int end);

  const std::string& text() const { return text_; }
  const std::vector<Alignment>& alignments() const { return align_; }
  bool empty() const { return text_.empty(); }
  // The user's bytes this piece covers (Hugging Face's offsets_original).
  int original_start() const { return original_start_; }
  int original_end() const { return original_end_; }
  // The user's bytes that normalized bytes [start, end) came from.
  Alignment original_range(int start, int end) const;

  // Hugging Face's transform: `dest` replaces the whole text, as (character, change) pairs: change
  // 0 replaces the next source character (keeping its alignment), +1 inserts (aligned as the
  // byte before), -n replaces the next source character and removes n more. The first
  // `initial_removed` source characters are dropped.
  void transform(const std::vector<std::pair<char32_t, int>>& dest, int initial_removed);
  // The same on the normalized bytes [start, end) only.
  void transform_range(int start, int end, const std::vector<std::pair<char32_t, int>>& dest,
                       int initial_removed);

  // One source character and what it becomes (nothing, itself, or several characters), all
  // aligned to it: the alignments Hugging Face's transform gives for filter, map, lowercase and
  // decompositions.
  struct CharAlignment {
    char32_t c;
    Alignment align;
  };
  std::vector<CharAlignment> chars() const;
  void assign(const std::vector<CharAlignment>& chars);

  void prepend(std::string_view s);
  // Replaces each match of the pattern with `content`; the new characters take the alignment of
  // the last byte they replace.
  void replace(const std::vector<PatternMatch>& matches, std::string_view content);
  void lowercase();
  void strip(bool left, bool right);  // white space (Rust's char::is_whitespace)

  // The piece of normalized bytes [start, end) (Hugging Face's slice).
  NormalizedString slice(int start, int end) const;
  // Hugging Face's split: the pieces the behaviour keeps, empty ones left out.
  std::vector<NormalizedString> split(std::vector<PatternMatch> matches,
                                      SplitBehavior behavior) const;

  // For the byte-level pre-tokenizer: whether normalized bytes [start, start + 3) are a U+FFFD
  // that stands for one invalid byte of the user's text, and that byte.
  bool is_invalid_byte(int start, unsigned char& byte) const;

 private:
  std::string text_;
  std::vector<Alignment> align_;
  int original_start_ = 0;
  int original_end_ = 0;
  std::string_view user_text_;  // the whole text given to encode(), for is_invalid_byte
};

// Normalizers and pre-tokenizers may grow a text (NFKD makes "\uFDFA" 11 times its bytes,
// ByteLevel doubles non-ASCII bytes), but never beyond this many bytes for `original` bytes of the
// user's text: a Replace of one character by 1,000, or a Sequence of ByteLevels, would otherwise
// take gigabytes for a short text. Below 2^31 always, since offsets are ints.
inline constexpr std::size_t kMaxGrowth = 64;
inline constexpr std::size_t kGrowthSlack = 64 << 10;
std::size_t max_grown_bytes(std::size_t original);
// Throws ModelError "<where>: its output would be N bytes for M bytes of text, over the limit of
// 64 x the text + 65536 bytes" when `bytes` is over max_grown_bytes(original).
void check_growth(std::size_t bytes, std::size_t original, const std::string& where);

// Matches of a predicate on characters: each character for which it holds is its own match, with
// the runs between as non-matches (Hugging Face's Pattern for Fn(char) -> bool).
template <typename Predicate>
std::vector<PatternMatch> char_matches(std::string_view text, Predicate predicate) {
  std::vector<PatternMatch> matches;
  if (text.empty()) return {{0, 0, false}};
  int last = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const unicode::CodePoint cp = unicode::decode_at(text, pos);
    const int start = static_cast<int>(pos);
    pos += static_cast<std::size_t>(cp.length);
    if (predicate(cp.value)) {
      if (last < start) matches.push_back({last, start, false});
      matches.push_back({start, static_cast<int>(pos), true});
      last = static_cast<int>(pos);
    }
  }
  if (last < static_cast<int>(text.size())) {
    matches.push_back({last, static_cast<int>(text.size()), false});
  }
  return matches;
}

}  // namespace attnscope::text
