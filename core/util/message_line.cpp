#include "core/util/message_line.h"

#include <algorithm>
#include <cstddef>

namespace attnscope {
namespace {

std::size_t utf8_cut(const std::string& s,
                     std::size_t at) {  // step back to a character start
  while (at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}
std::size_t utf8_cut_forward(const std::string& s, std::size_t at) {
  while (at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) ++at;
  return at;
}

}  // namespace

std::string one_line_message(const std::string& message) {
  constexpr std::size_t kLongWord = 160, kHead = 100, kTail = 40, kMaxLine = 1000;
  std::string flat = message;
  for (char& c : flat)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  std::string out;
  for (std::size_t at = 0; at < flat.size();) {
    const std::size_t end = std::min(flat.find(' ', at), flat.size());
    if (end - at > kLongWord) {
      out.append(flat, at, utf8_cut(flat, at + kHead) - at);
      out += "…";
      const std::size_t tail = utf8_cut_forward(flat, end - kTail);
      out.append(flat, tail, end - tail);
    } else {
      out.append(flat, at, end - at);
    }
    if (end < flat.size()) out += ' ';
    at = end + 1;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > kMaxLine) {
    out.resize(utf8_cut(out, kMaxLine));
    out += "…";
  }
  return out;
}

}  // namespace attnscope
