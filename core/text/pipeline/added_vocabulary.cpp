#include "core/text/pipeline/added_vocabulary.h"

#include <algorithm>

#include "core/text/unicode.h"

namespace attnscope::text {
namespace {

// Rust's char::is_whitespace.
bool is_space_at(std::string_view text, std::size_t pos, int& length) {
  const unicode::CodePoint cp = unicode::decode_at(text, pos);
  length = cp.length;
  return unicode::is_white_space(cp.value);
}

// Start of the white space that ends `text`.
std::size_t trailing_space_start(std::string_view text) {
  std::size_t start = text.size();
  while (start > 0) {
    std::size_t prev = start - 1;
    while (prev > 0 && (static_cast<unsigned char>(text[prev]) & 0xC0) == 0x80) --prev;
    const unicode::CodePoint cp = unicode::decode_at(text, prev);
    if (!unicode::is_white_space(cp.value)) break;
    start = prev;
  }
  return start;
}

std::size_t leading_space_length(std::string_view text) {
  std::size_t end = 0;
  int length = 0;
  while (end < text.size() && is_space_at(text, end, length))
    end += static_cast<std::size_t>(length);
  return end;
}

// regex-syntax's \w, which Hugging Face's single_word test uses: letters, marks, decimal digits,
// connector punctuation (and the joiners).
bool is_word_char(char32_t c) {
  if (c < 0x80)
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  const std::string_view cat = unicode::general_category(c);
  return cat[0] == 'L' || cat[0] == 'M' || cat == "Nd" || cat == "Pc" || c == 0x200C || c == 0x200D;
}

bool ends_with_word(std::string_view text) {
  if (text.empty()) return false;
  std::size_t prev = text.size() - 1;
  while (prev > 0 && (static_cast<unsigned char>(text[prev]) & 0xC0) == 0x80) --prev;
  return is_word_char(unicode::decode_at(text, prev).value);
}

bool starts_with_word(std::string_view text) {
  return !text.empty() && is_word_char(unicode::decode_at(text, 0).value);
}

}  // namespace

int AddedTokenMatcher::Node::child(unsigned char b) const {
  const auto it = std::lower_bound(children.begin(), children.end(), b,
                                   [](const auto& c, unsigned char v) { return c.first < v; });
  return it != children.end() && it->first == b ? it->second : -1;
}

void AddedTokenMatcher::build(const std::vector<AddedTokenSpec>& tokens,
                              const std::vector<std::string>& contents,
                              const std::vector<int>& which) {
  (void)tokens;
  for (int index : which) {
    const std::string& content = contents[static_cast<std::size_t>(index)];
    if (content.empty()) continue;
    can_start_[static_cast<unsigned char>(content[0])] = true;
    int node = 0;
    for (char ch : content) {
      const auto b = static_cast<unsigned char>(ch);
      int next = nodes_[static_cast<std::size_t>(node)].child(b);
      if (next < 0) {
        next = static_cast<int>(nodes_.size());
        nodes_.push_back({});
        auto& children = nodes_[static_cast<std::size_t>(node)].children;
        children.insert(
            std::lower_bound(children.begin(), children.end(), b,
                             [](const auto& c, unsigned char v) { return c.first < v; }),
            {b, next});
      }
      node = next;
    }
    // The first token of a content wins, as in Hugging Face's pattern list.
    if (nodes_[static_cast<std::size_t>(node)].token < 0)
      nodes_[static_cast<std::size_t>(node)].token = index;
  }
}

void AddedTokenMatcher::split(const NormalizedString& s, const std::vector<AddedTokenSpec>& tokens,
                              std::vector<AddedSplit>& out) const {
  const std::string_view text = s.text();
  if (empty() || text.empty()) {
    out.push_back({s, -1});
    return;
  }
  std::size_t start_offset = 0;  // end of the previous match
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (!can_start_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    // Longest match starting at pos.
    int node = 0;
    int best = -1;
    std::size_t best_end = 0;
    for (std::size_t k = pos; k < text.size(); ++k) {
      node = nodes_[static_cast<std::size_t>(node)].child(static_cast<unsigned char>(text[k]));
      if (node < 0) break;
      if (nodes_[static_cast<std::size_t>(node)].token >= 0) {
        best = nodes_[static_cast<std::size_t>(node)].token;
        best_end = k + 1;
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    const AddedTokenSpec& token = tokens[static_cast<std::size_t>(best)];
    std::size_t start = pos;
    std::size_t stop = best_end;
    pos = best_end;  // the search goes on after this match even when it is discarded
    if (token.single_word) {
      const bool start_space = start == 0 || !ends_with_word(text.substr(0, start));
      const bool stop_space = stop == text.size() || !starts_with_word(text.substr(stop));
      if (!start_space || !stop_space) continue;
    }
    if (token.lstrip) start = std::max(trailing_space_start(text.substr(0, start)), start_offset);
    if (token.rstrip) stop += leading_space_length(text.substr(stop));
    if (start_offset < start) {
      out.push_back({s.slice(static_cast<int>(start_offset), static_cast<int>(start)), -1});
    }
    out.push_back({s.slice(static_cast<int>(start), static_cast<int>(stop)), best});
    start_offset = stop;
    pos = std::max(pos, stop);
  }
  if (start_offset < text.size()) {
    out.push_back({s.slice(static_cast<int>(start_offset), static_cast<int>(text.size())), -1});
  }
}

}  // namespace attnscope::text
