#include "core/text/pipeline/normalized_string.h"

#include <algorithm>

#include "core/util/error.h"

namespace attnscope::text {

std::size_t max_grown_bytes(std::size_t original) {
  constexpr std::size_t kIntLimit = 0x7FFFFFF0;
  if (original >= (kIntLimit - kGrowthSlack) / kMaxGrowth) return kIntLimit;
  return kMaxGrowth * original + kGrowthSlack;
}

void check_growth(std::size_t bytes, std::size_t original, const std::string& where) {
  if (bytes <= max_grown_bytes(original)) return;
  throw ModelError(where + ": its output would be " + std::to_string(bytes) + " bytes for " +
                   std::to_string(original) + " bytes of text, over the limit of " +
                   std::to_string(kMaxGrowth) + " x the text + " + std::to_string(kGrowthSlack) +
                   " bytes");
}
NormalizedString::NormalizedString(std::string_view text, int start, int end)
    : original_start_(start), original_end_(end), user_text_(text) {
  const std::string_view piece = text.substr(start, end - start);
  text_.reserve(piece.size());
  align_.reserve(piece.size());
  for (std::size_t pos = 0; pos < piece.size();) {
    const unsigned char first = static_cast<unsigned char>(piece[pos]);
    if (first < 0x80) {  // ASCII: the common case
      text_.push_back(static_cast<char>(first));
      const int at = start + static_cast<int>(pos);
      align_.push_back({at, at + 1});
      ++pos;
      continue;
    }
    const unicode::CodePoint cp = unicode::decode_at(piece, pos);
    const int at = start + static_cast<int>(pos);
    const std::size_t before = text_.size();
    if (cp.valid) {
      text_.append(piece.substr(pos, static_cast<std::size_t>(cp.length)));
    } else {
      unicode::append_utf8(text_, unicode::kReplacementCharacter);
    }
    align_.insert(align_.end(), text_.size() - before, Alignment{at, at + cp.length});
    pos += static_cast<std::size_t>(cp.length);
  }
}

Alignment NormalizedString::original_range(int start, int end) const {
  if (start >= end) {
    // Hugging Face: an empty range stays as it is; on an empty text it is the whole original.
    if (text_.empty()) return {original_start_, original_end_};
    const int at = start < static_cast<int>(align_.size()) ? align_[start].start : original_end_;
    return {at, at};
  }
  return {align_[start].start, align_[end - 1].end};
}

void NormalizedString::transform(const std::vector<std::pair<char32_t, int>>& dest,
                                 int initial_removed) {
  transform_range(0, static_cast<int>(text_.size()), dest, initial_removed);
}

void NormalizedString::transform_range(int start, int end,
                                       const std::vector<std::pair<char32_t, int>>& dest,
                                       int initial_removed) {
  // Follows Hugging Face's transform_range: `offset` walks the source bytes, each new character
  // takes the alignment of the source character it replaces, or of the byte before when inserted.
  const std::string_view source(text_.data() + start, static_cast<std::size_t>(end - start));
  std::size_t source_pos = 0;
  auto next_source_length = [&]() -> int {
    if (source_pos >= source.size()) return 0;
    const int length = unicode::decode_at(source, source_pos).length;
    source_pos += static_cast<std::size_t>(length);
    return length;
  };
  int offset = start;
  for (int i = 0; i < initial_removed; ++i) offset += next_source_length();
  std::string out;
  out.reserve(source.size() + dest.size());
  std::vector<Alignment> out_align;
  out_align.reserve(source.size() + dest.size());
  for (const auto& [c, change] : dest) {
    Alignment align;
    if (change > 0) {
      align = offset >= 1 ? align_[offset - 1] : Alignment{0, 0};
    } else {
      align = offset < static_cast<int>(align_.size()) ? align_[offset] : Alignment{0, 0};
      offset += next_source_length();
      for (int k = 0; k < -change; ++k) offset += next_source_length();
    }
    const std::size_t before = out.size();
    unicode::append_utf8(out, c);
    out_align.insert(out_align.end(), out.size() - before, align);
  }
  text_.replace(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start), out);
  align_.erase(align_.begin() + start, align_.begin() + end);
  align_.insert(align_.begin() + start, out_align.begin(), out_align.end());
}

std::vector<NormalizedString::CharAlignment> NormalizedString::chars() const {
  std::vector<CharAlignment> out;
  out.reserve(text_.size());
  for (std::size_t pos = 0; pos < text_.size();) {
    const unicode::CodePoint cp = unicode::decode_at(text_, pos);
    out.push_back({cp.value, align_[pos]});
    pos += static_cast<std::size_t>(cp.length);
  }
  return out;
}

void NormalizedString::assign(const std::vector<CharAlignment>& chars) {
  text_.clear();
  align_.clear();
  for (const CharAlignment& c : chars) {
    const std::size_t before = text_.size();
    unicode::append_utf8(text_, c.c);
    align_.insert(align_.end(), text_.size() - before, c.align);
  }
}

void NormalizedString::prepend(std::string_view s) {
  if (text_.empty() || s.empty()) return;
  const unicode::CodePoint first = unicode::decode_at(text_, 0);
  std::vector<std::pair<char32_t, int>> dest;
  int i = 0;
  for (const unicode::CodePoint& cp : unicode::decode_utf8(s))
    dest.emplace_back(cp.value, i++ != 0);
  dest.emplace_back(first.value, 1);
  transform_range(0, first.length, dest, 0);
}

void NormalizedString::replace(const std::vector<PatternMatch>& matches, std::string_view content) {
  // Built in one pass: each match becomes `content`, aligned to the last byte of the match (what
  // Hugging Face's transform_range with every character inserted gives).
  std::string out;
  std::vector<Alignment> out_align;
  out.reserve(text_.size());
  out_align.reserve(text_.size());
  for (const PatternMatch& m : matches) {
    if (!m.is_match) {
      out.append(text_, static_cast<std::size_t>(m.start),
                 static_cast<std::size_t>(m.end - m.start));
      out_align.insert(out_align.end(), align_.begin() + m.start, align_.begin() + m.end);
      continue;
    }
    const Alignment align = m.end >= 1 ? align_[m.end - 1] : Alignment{0, 0};
    out.append(content);
    out_align.insert(out_align.end(), content.size(), align);
  }
  text_ = std::move(out);
  align_ = std::move(out_align);
}

void NormalizedString::lowercase() {
  bool ascii = true;
  for (char c : text_) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {
    for (char& c : text_) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return;
  }
  std::vector<std::pair<char32_t, int>> dest;
  dest.reserve(text_.size());
  for (const unicode::CodePoint& cp : unicode::decode_utf8(text_)) {
    int index = 0;
    for (char32_t l : unicode::to_lower_full(cp.value)) dest.emplace_back(l, index++ > 0);
  }
  transform(dest, 0);
}

void NormalizedString::strip(bool left, bool right) {
  const std::vector<unicode::CodePoint> chars = unicode::decode_utf8(text_);
  std::size_t first = 0;
  std::size_t last = chars.size();
  if (left) {
    while (first < last && unicode::is_white_space(chars[first].value)) ++first;
  }
  if (right) {
    while (last > first && unicode::is_white_space(chars[last - 1].value)) --last;
  }
  if (first == 0 && last == chars.size()) return;
  const int start = first < chars.size() ? chars[first].start : static_cast<int>(text_.size());
  const int end = last > first ? chars[last - 1].start + chars[last - 1].length : start;
  text_ = text_.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start));
  align_ = std::vector<Alignment>(align_.begin() + start, align_.begin() + end);
}

NormalizedString NormalizedString::slice(int start, int end) const {
  NormalizedString piece;
  piece.user_text_ = user_text_;
  piece.text_.assign(text_, static_cast<std::size_t>(start), static_cast<std::size_t>(end - start));
  piece.align_.assign(align_.begin() + start, align_.begin() + end);
  const Alignment original = original_range(start, end);
  piece.original_start_ = original.start;
  piece.original_end_ = original.end;
  return piece;
}

std::vector<NormalizedString> NormalizedString::split(std::vector<PatternMatch> matches,
                                                      SplitBehavior behavior) const {
  // Hugging Face's SplitDelimiterBehavior, rule for rule; `is_match` then means "remove".
  std::vector<PatternMatch> kept;
  kept.reserve(matches.size());
  switch (behavior) {
    case SplitBehavior::kRemoved:
      kept = std::move(matches);
      break;
    case SplitBehavior::kIsolated:
      for (PatternMatch m : matches) kept.push_back({m.start, m.end, false});
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const PatternMatch& m : matches) {
        if (m.is_match && !previous_match && !kept.empty()) {
          kept.back().end = m.end;
        } else {
          kept.push_back({m.start, m.end, false});
        }
        previous_match = m.is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous_match = false;
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        if (it->is_match && !previous_match && !kept.empty()) {
          kept.back().start = it->start;
        } else {
          kept.push_back({it->start, it->end, false});
        }
        previous_match = it->is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
    }
    case SplitBehavior::kContiguous: {
      bool previous_match = false;
      for (const PatternMatch& m : matches) {
        if (m.is_match == previous_match && !kept.empty()) {
          kept.back().end = m.end;
        } else {
          kept.push_back({m.start, m.end, false});
        }
        previous_match = m.is_match;
      }
      break;
    }
  }
  std::vector<NormalizedString> pieces;
  pieces.reserve(kept.size());
  for (const PatternMatch& m : kept) {
    if (!m.is_match && m.end > m.start) pieces.push_back(slice(m.start, m.end));
  }
  return pieces;
}

bool NormalizedString::is_invalid_byte(int start, unsigned char& byte) const {
  if (start + 3 > static_cast<int>(text_.size()) || text_.compare(start, 3, "\xEF\xBF\xBD") != 0) {
    return false;
  }
  const Alignment a = align_[start];
  if (a.end - a.start != 1 || a.start < 0 || a.start >= static_cast<int>(user_text_.size())) {
    return false;
  }
  byte = static_cast<unsigned char>(user_text_[a.start]);
  return byte >= 0x80;  // a lone byte >= 0x80 aligned alone: it was invalid
}

}  // namespace attnscope::text
