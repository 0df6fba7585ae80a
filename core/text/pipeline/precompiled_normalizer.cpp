// tokenizer.json's Precompiled normalizer: SentencePiece's compiled normalization rules
// (normalizer_spec.precompiled_charsmap), applied as Hugging Face's tokenizers applies them
// (its normalizers/precompiled.rs over the spm_precompiled crate).
//
// The charsmap (SentencePiece's normalizer.cc, builder.cc):
//   uint32 little-endian   size of the trie in bytes
//   uint32[size / 4]       a Darts-clone double array: source byte strings -> offset of the result
//   char[]                 the results, each ended by a NUL byte
// A unit of the double array: bits 0-7 the label (the byte that leads to it), bit 8 "a key ends
// here", bits 10-31 the offset to its children (shifted left by 8 more when bit 9 is set); the
// children of the unit at p sit at (p ^ offset) ^ byte, a key's value at (p ^ offset) with bit 31
// set (so that no byte's label matches it).
//
// tokenizers does not run SentencePiece's longest-match loop: it looks up each extended
// grapheme cluster shorter than 6 bytes whole, and takes the SHORTEST rule that is a prefix of it;
// otherwise each character alone. That is what this file does, with the same alignments.
#include <utf8proc.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "core/text/pipeline/json_fields.h"
#include "core/text/pipeline/normalizers.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope::text {
namespace {

std::optional<std::string> decode_base64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int padding = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++padding;
        continue;
      }
      if (padding > 0) return std::nullopt;  // a character after '='
      v[k] = value(c);
      if (v[k] < 0) return std::nullopt;
    }
    const std::uint32_t bits =
        (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
        (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
    out.push_back(static_cast<char>(bits >> 16));
    if (padding < 2) out.push_back(static_cast<char>((bits >> 8) & 0xFF));
    if (padding < 1) out.push_back(static_cast<char>(bits & 0xFF));
  }
  return out;
}

// Darts-clone's unit accessors.
bool has_leaf(std::uint32_t unit) {
  return ((unit >> 8) & 1) == 1;
}
std::uint32_t unit_value(std::uint32_t unit) {
  return unit & 0x7FFFFFFFu;
}
std::uint32_t unit_label(std::uint32_t unit) {
  return unit & (0x80000000u | 0xFFu);
}
std::uint32_t unit_offset(std::uint32_t unit) {
  return (unit >> 10) << ((unit & (1u << 9)) >> 6);
}

std::uint32_t read_le32(std::string_view bytes, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 3])) << 24;
}

class PrecompiledNormalizer final : public Normalizer {
 public:
  PrecompiledNormalizer(std::string_view charsmap, std::string where) : where_(std::move(where)) {
    if (charsmap.empty()) return;  // no rules: the text stays as it is
    if (charsmap.size() < 4) throw ModelError(where_ + ": precompiled_charsmap is truncated");
    const std::uint32_t trie_bytes = read_le32(charsmap, 0);
    const std::size_t units = trie_bytes / 4;
    if (units == 0) throw ModelError(where_ + ": precompiled_charsmap has an empty trie");
    if (units > (charsmap.size() - 4) / 4) {
      throw ModelError(where_ + ": precompiled_charsmap says its trie is " +
                       std::to_string(trie_bytes) + " bytes, but only " +
                       std::to_string(charsmap.size() - 4) + " follow");
    }
    array_.resize(units);
    for (std::size_t i = 0; i < units; ++i) array_[i] = read_le32(charsmap, 4 + 4 * i);
    normalized_ = std::string(charsmap.substr(4 + 4 * units));
    if (!unicode::is_valid_utf8(normalized_)) {
      throw ModelError(where_ + ": precompiled_charsmap's normalized strings are not valid UTF-8");
    }
    validate();
  }

  void normalize(NormalizedString& s) const override {
    if (array_.empty() || s.empty()) return;
    const std::string& text = s.text();
    std::vector<std::pair<char32_t, int>> changes;
    changes.reserve(text.size());
    std::size_t bytes = 0;  // of the result, checked against the growth limit as it grows
    bool modified = false;
    auto replace = [&](std::string_view old_part, std::string_view new_part) {
      // tokenizers' replace(): the new characters replace the old ones one for one; extra ones
      // are insertions, and a shorter result removes the rest through the last change so far
      // (one of an earlier grapheme's, or none at the very start: tokenizers drops it too).
      const std::vector<unicode::CodePoint> now = unicode::decode_utf8(new_part);
      const int diff =
          static_cast<int>(now.size()) - static_cast<int>(unicode::decode_utf8(old_part).size());
      for (const unicode::CodePoint& cp : now) changes.emplace_back(cp.value, 0);
      if (diff > 0) {
        for (int k = 0; k < diff; ++k) changes[changes.size() - 1 - k].second = 1;
      } else if (diff < 0 && !changes.empty()) {
        changes.back().second += diff;
      }
      bytes += new_part.size();
      check_growth(bytes, static_cast<std::size_t>(s.original_end() - s.original_start()), where_);
      modified = true;
    };
    utf8proc_int32_t state = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
      // One extended grapheme cluster [pos, end) (UAX #29, as unicode-segmentation's graphemes).
      unicode::CodePoint cp = unicode::decode_at(text, pos);
      std::size_t end = pos + static_cast<std::size_t>(cp.length);
      while (end < text.size()) {
        const unicode::CodePoint next = unicode::decode_at(text, end);
        if (utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(cp.value),
                                             static_cast<utf8proc_int32_t>(next.value), &state))
          break;
        cp = next;
        end += static_cast<std::size_t>(next.length);
      }
      const std::string_view grapheme(text.data() + pos, end - pos);
      pos = end;
      if (grapheme.size() < 6) {
        if (const auto rule = transform(grapheme)) {
          replace(grapheme, *rule);
          continue;
        }
      }
      for (std::size_t at = 0; at < grapheme.size();) {
        const unicode::CodePoint c = unicode::decode_at(grapheme, at);
        const std::string_view part = grapheme.substr(at, static_cast<std::size_t>(c.length));
        at += static_cast<std::size_t>(c.length);
        if (const auto rule = transform(part)) {
          replace(part, *rule);
        } else {
          changes.emplace_back(c.value, 0);
          bytes += part.size();
        }
      }
    }
    if (modified) s.transform(changes, 0);
  }

 private:
  // The result of the shortest rule whose source is a prefix of `chunk` (tokenizers takes the
  // first of common_prefix_search's results), if any. A NUL byte ends the search, as in Darts.
  std::optional<std::string_view> transform(std::string_view chunk) const {
    const std::size_t n = array_.size();
    std::size_t node = unit_offset(array_[0]);
    for (const char ch : chunk) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == 0) break;
      node ^= c;
      if (node >= n) return std::nullopt;  // validate() allows no entry there
      const std::uint32_t unit = array_[node];
      if (unit_label(unit) != c) return std::nullopt;
      node ^= unit_offset(unit);
      if (has_leaf(unit)) {
        // validate() checked both indices of every reachable entry.
        const std::size_t start = unit_value(array_[node]);
        const std::size_t stop = normalized_.find('\0', start);
        return std::string_view(normalized_)
            .substr(start, stop == std::string::npos ? std::string::npos : stop - start);
      }
    }
    return std::nullopt;
  }

  // Every entry a lookup can reach (from the root, through units whose label is the byte that
  // leads to them) must have its value inside the array and its result inside the strings, at
  // the start of a character: a hostile charsmap is refused here, never read out of bounds later.
  void validate() const {
    const std::size_t n = array_.size();
    std::vector<bool> seen(n, false);
    std::vector<std::size_t> todo = {unit_offset(array_[0])};  // bases of nodes to visit
    auto fail = [&](const std::string& what) {
      throw ModelError(where_ + ": precompiled_charsmap is corrupt (" + what + ")");
    };
    while (!todo.empty()) {
      const std::size_t base = todo.back();
      todo.pop_back();
      for (std::size_t c = 1; c < 256; ++c) {
        const std::size_t child = base ^ c;
        if (child >= n || seen[child] || unit_label(array_[child]) != c) continue;
        seen[child] = true;
        const std::size_t next = child ^ unit_offset(array_[child]);
        if (has_leaf(array_[child])) {
          if (next >= n) fail("an entry's value lies outside the trie");
          const std::size_t start = unit_value(array_[next]);
          if (start > normalized_.size()) fail("an entry points past the normalized strings");
          if (start < normalized_.size() &&
              (static_cast<unsigned char>(normalized_[start]) & 0xC0) == 0x80) {
            fail("an entry points inside a character");
          }
        }
        todo.push_back(next);
      }
    }
  }

  std::vector<std::uint32_t> array_;  // empty: the identity
  std::string normalized_;
  std::string where_;
};

}  // namespace

std::unique_ptr<Normalizer> make_precompiled_charsmap_normalizer(std::string_view charsmap,
                                                                 const std::string& where) {
  return std::make_unique<PrecompiledNormalizer>(charsmap, where);
}

std::unique_ptr<Normalizer> make_precompiled_normalizer(const nlohmann::json& json,
                                                        const std::string& where) {
  const std::string encoded = string_field(json, "precompiled_charsmap", where);
  const std::optional<std::string> bytes = decode_base64(encoded);
  if (!bytes) throw ModelError(where + ": precompiled_charsmap is not valid base64");
  return make_precompiled_charsmap_normalizer(*bytes, where);
}

}  // namespace attnscope::text
