#include "core/text/added_tokens.h"

#include <array>

#include "core/text/unicode.h"

namespace attnscope {
namespace {

// Byte length of the white space (White_Space, as Rust's char::is_whitespace) ending at `end`.
std::size_t white_space_before(std::string_view text, std::size_t begin, std::size_t end) {
  std::size_t start = end;
  while (start > begin) {
    std::size_t prev = start - 1;
    while (prev > begin && (static_cast<unsigned char>(text[prev]) & 0xC0) == 0x80) --prev;
    const unicode::CodePoint cp = unicode::decode_at(text, prev);
    if (prev + static_cast<std::size_t>(cp.length) != start || !cp.valid ||
        !unicode::is_white_space(cp.value)) {
      break;
    }
    start = prev;
  }
  return end - start;
}

std::size_t white_space_after(std::string_view text, std::size_t begin) {
  std::size_t end = begin;
  while (end < text.size()) {
    const unicode::CodePoint cp = unicode::decode_at(text, end);
    if (!cp.valid || !unicode::is_white_space(cp.value)) break;
    end += static_cast<std::size_t>(cp.length);
  }
  return end - begin;
}

}  // namespace

std::vector<TextPiece> split_on_added_tokens(std::string_view text,
                                             const std::vector<AddedToken>& added) {
  std::vector<TextPiece> pieces;
  // Most bytes cannot start an added token: skip those without comparing anything.
  std::array<bool, 256> can_start{};
  for (const AddedToken& token : added) {
    if (!token.content.empty()) can_start[static_cast<unsigned char>(token.content[0])] = true;
  }
  std::size_t plain_start = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (!can_start[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    int best = -1;
    std::size_t best_length = 0;
    for (std::size_t i = 0; i < added.size(); ++i) {
      const std::string& content = added[i].content;
      if (content.empty() || content.size() <= best_length) continue;
      if (text.compare(pos, content.size(), content) == 0) {
        best = static_cast<int>(i);
        best_length = content.size();
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    std::size_t match_start = pos;
    std::size_t match_end = pos + best_length;
    if (added[best].lstrip) match_start -= white_space_before(text, plain_start, match_start);
    if (added[best].rstrip) match_end += white_space_after(text, match_end);
    if (match_start > plain_start) {
      pieces.push_back({static_cast<int>(plain_start), static_cast<int>(match_start), -1});
    }
    pieces.push_back({static_cast<int>(match_start), static_cast<int>(match_end), best});
    plain_start = pos = match_end;
  }
  if (plain_start < text.size()) {
    pieces.push_back({static_cast<int>(plain_start), static_cast<int>(text.size()), -1});
  }
  return pieces;
}

Token added_piece_token(std::string_view text, const TextPiece& piece,
                        const std::vector<AddedToken>& added) {
  return {added[piece.added_index].id,
          std::string(text.substr(piece.start, piece.end - piece.start)),
          piece.start,
          piece.end,
          false,
          false};
}

}  // namespace attnscope
