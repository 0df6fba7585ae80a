// SentencePiece model files: a wire-format decoder for the ModelProto (only
// what encoding needs is kept; every other field is skipped after its length is
// checked) and the encoder of a UNIGRAM model as SentencePiece runs it
// (normalizer.cc's Normalize, unigram_model.cc's lattice), the segmentation
// itself done by the pipeline's Unigram model.
#include "core/text/sentencepiece_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/text/pipeline/normalizers.h"
#include "core/text/unicode.h"
#include "core/util/error.h"
#include "core/util/file_read.h"

namespace attnscope {
namespace {

using File = SentencePieceModelFile;

// Protobuf's wire format over bytes that may be anything: each read checks what
// is left.
class WireReader {
 public:
  WireReader(std::string_view bytes, const std::string& name, std::size_t base)
      : bytes_(bytes), name_(name), base_(base) {}

  bool done() const { return pos_ >= bytes_.size(); }

  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError(name_ + ": not a SentencePiece model: " + what + " (at byte " +
                     std::to_string(base_ + pos_) + ")");
  }

  std::uint64_t varint(const char* what) {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (done()) fail(std::string("the file ends inside a varint (") + what + ")");
      const auto b = static_cast<unsigned char>(bytes_[pos_++]);
      if (shift == 63 && b > 1) fail(std::string("a varint longer than 64 bits (") + what + ")");
      value |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (b < 0x80) return value;
    }
    fail(std::string("a varint longer than 10 bytes (") + what + ")");
  }

  // A field's key: its number and wire type.
  std::pair<std::uint32_t, int> key() {
    const std::uint64_t k = varint("field key");
    const std::uint64_t number = k >> 3;
    if (number == 0 || number > 536870911) fail("field number " + std::to_string(number));
    return {static_cast<std::uint32_t>(number), static_cast<int>(k & 7)};
  }

  std::string_view bytes(const char* what, std::size_t* start = nullptr) {
    const std::uint64_t length = varint(what);
    if (length > bytes_.size() - pos_) {
      fail(std::string(what) + " of " + std::to_string(length) + " bytes, but only " +
           std::to_string(bytes_.size() - pos_) + " remain");
    }
    if (start) *start = base_ + pos_;
    const std::string_view out = bytes_.substr(pos_, static_cast<std::size_t>(length));
    pos_ += static_cast<std::size_t>(length);
    return out;
  }

  std::uint32_t fixed32(const char* what) {
    if (bytes_.size() - pos_ < 4) fail(std::string("the file ends inside ") + what);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += 4;
    return v;
  }

  void skip(int wire_type, std::uint32_t number) {
    const std::string what = "field " + std::to_string(number);
    switch (wire_type) {
      case 0:
        varint(what.c_str());
        return;
      case 1:
        if (bytes_.size() - pos_ < 8) fail("the file ends inside " + what);
        pos_ += 8;
        return;
      case 2:
        bytes(what.c_str());
        return;
      case 5:
        fixed32(what.c_str());
        return;
      default:
        fail(what + " has wire type " + std::to_string(wire_type) +
             " (groups and unknown types are not accepted)");
    }
  }

  // A field's value must have the wire type its declaration gives.
  void expect(int wire_type, int expected, const char* field) const {
    if (wire_type != expected) {
      fail(std::string(field) + " has wire type " + std::to_string(wire_type) + ", expected " +
           std::to_string(expected));
    }
  }

  int int32(int wire_type, const char* field) {
    expect(wire_type, 0, field);
    // int32 is written as a sign-extended 64-bit varint; keep the low 32 bits
    // as protobuf does.
    return static_cast<int>(
        static_cast<std::int32_t>(static_cast<std::uint32_t>(varint(field) & 0xFFFFFFFFu)));
  }
  bool boolean(int wire_type, const char* field) {
    expect(wire_type, 0, field);
    return varint(field) != 0;
  }
  std::size_t position() const { return base_ + pos_; }

 private:
  std::string_view bytes_;
  const std::string& name_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

void parse_piece(std::string_view bytes, std::size_t base, const std::string& name, File& file) {
  WireReader r(bytes, name, base);
  File::Piece p;
  while (!r.done()) {
    const auto [number, wire] = r.key();
    if (number == 1) {
      r.expect(wire, 2, "pieces.piece");
      p.piece = std::string(r.bytes("pieces.piece"));
    } else if (number == 2) {
      r.expect(wire, 5, "pieces.score");
      const std::uint32_t bits = r.fixed32("pieces.score");
      std::memcpy(&p.score, &bits, 4);
    } else if (number == 3) {
      const int type = r.int32(wire, "pieces.type");
      if (type < 1 || type > 6) r.fail("piece type " + std::to_string(type));
      p.type = static_cast<File::PieceType>(type);
    } else {
      r.skip(wire, number);
    }
  }
  file.pieces.push_back(std::move(p));
}

void parse_trainer_spec(std::string_view bytes, std::size_t base, const std::string& name,
                        File& file) {
  WireReader r(bytes, name, base);
  while (!r.done()) {
    const auto [number, wire] = r.key();
    switch (number) {
      case 3: {
        const int type = r.int32(wire, "trainer_spec.model_type");
        if (type < 1 || type > 4) r.fail("model_type " + std::to_string(type));
        file.model_type = static_cast<File::ModelType>(type);
        break;
      }
      case 24:
        file.treat_whitespace_as_suffix =
            r.boolean(wire, "trainer_spec.treat_whitespace_as_suffix");
        break;
      case 35:
        file.byte_fallback = r.boolean(wire, "trainer_spec.byte_fallback");
        break;
      case 40:
        file.unk_id = r.int32(wire, "trainer_spec.unk_id");
        break;
      case 41:
        file.bos_id = r.int32(wire, "trainer_spec.bos_id");
        break;
      case 42:
        file.eos_id = r.int32(wire, "trainer_spec.eos_id");
        break;
      case 43:
        file.pad_id = r.int32(wire, "trainer_spec.pad_id");
        break;
      default:
        r.skip(wire, number);
    }
  }
}

void parse_normalizer_spec(std::string_view bytes, std::size_t base, const std::string& name,
                           File& file) {
  WireReader r(bytes, name, base);
  while (!r.done()) {
    const auto [number, wire] = r.key();
    switch (number) {
      case 1:
        r.expect(wire, 2, "normalizer_spec.name");
        file.normalizer_name = std::string(r.bytes("normalizer_spec.name"));
        break;
      case 2:
        r.expect(wire, 2, "normalizer_spec.precompiled_charsmap");
        file.precompiled_charsmap = std::string(r.bytes("normalizer_spec.precompiled_charsmap"));
        break;
      case 3:
        file.add_dummy_prefix = r.boolean(wire, "normalizer_spec.add_dummy_prefix");
        break;
      case 4:
        file.remove_extra_whitespaces = r.boolean(wire, "normalizer_spec.remove_extra_whitespaces");
        break;
      case 5:
        file.escape_whitespaces = r.boolean(wire, "normalizer_spec.escape_whitespaces");
        break;
      default:
        r.skip(wire, number);
    }
  }
}

// SentencePiece's string_util::DecodeUTF8: the length of the valid character at
// the start of `s`, or 0 for a malformed one (which the normalizer replaces,
// one byte at a time, by U+FFFD).
std::size_t valid_char_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto trail = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const auto valid = [](std::uint32_t cp) {
    return cp < 0xD800 || (cp >= 0xE000 && cp <= 0x10FFFF);
  };
  if (b(0) < 0x80) return 1;
  if ((b(0) & 0xE0) == 0xC0 && trail(1)) {
    const std::uint32_t cp = ((b(0) & 0x1Fu) << 6) | (b(1) & 0x3Fu);
    if (cp >= 0x80) return 2;
  } else if ((b(0) & 0xF0) == 0xE0 && trail(1) && trail(2)) {
    const std::uint32_t cp = ((b(0) & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
    if (cp >= 0x800 && valid(cp)) return 3;
  } else if ((b(0) & 0xF8) == 0xF0 && trail(1) && trail(2) && trail(3)) {
    const std::uint32_t cp =
        ((b(0) & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
    if (cp >= 0x10000 && valid(cp)) return 4;
  }
  return 0;
}

constexpr std::string_view kSpaceSymbol = "\u2581";
constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

std::uint32_t read_le32(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return v;
}

// Visits the ids in `sorted` (piece ids, by their bytes) whose pieces are prefixes of `text`,
// shortest first, walking the sorted list as a trie: the pieces sharing the first d bytes of the
// text are one range of it, and the one of exactly d + 1 bytes, if any, sorts first among those
// that continue with the next byte. O(prefix length x log pieces).
template <typename Visit>
void prefixes_of(const std::vector<File::Piece>& pieces, const std::vector<int>& sorted,
                 std::string_view text, Visit visit) {
  auto lo = sorted.begin(), hi = sorted.end();
  for (std::size_t d = 0; d < text.size() && lo != hi; ++d) {
    const int c = static_cast<unsigned char>(text[d]);
    auto byte_at = [&](int id) {
      const std::string& s = pieces[static_cast<std::size_t>(id)].piece;
      return s.size() > d ? static_cast<int>(static_cast<unsigned char>(s[d])) : -1;
    };
    lo = std::lower_bound(lo, hi, c, [&](int id, int value) { return byte_at(id) < value; });
    hi = std::upper_bound(lo, hi, c, [&](int value, int id) { return value < byte_at(id); });
    if (lo != hi && pieces[static_cast<std::size_t>(*lo)].piece.size() == d + 1) visit(*lo, d + 1);
  }
}

}  // namespace

SentencePieceModelFile parse_sentencepiece_model(std::string_view bytes, const std::string& name) {
  File file;
  WireReader r(bytes, name, 0);
  if (bytes.empty()) r.fail("the file is empty");
  bool trainer_seen = false;
  while (!r.done()) {
    const auto [number, wire] = r.key();
    std::size_t start = 0;
    if (number == 1) {
      r.expect(wire, 2, "pieces");
      if (file.pieces.size() >= kSentencePieceMaxPieces) {
        r.fail("more than " + std::to_string(kSentencePieceMaxPieces) + " pieces");
      }
      const std::string_view piece = r.bytes("pieces", &start);
      parse_piece(piece, start, name, file);
    } else if (number == 2) {
      r.expect(wire, 2, "trainer_spec");
      const std::string_view spec = r.bytes("trainer_spec", &start);
      parse_trainer_spec(spec, start, name, file);
      trainer_seen = true;
    } else if (number == 3) {
      r.expect(wire, 2, "normalizer_spec");
      const std::string_view spec = r.bytes("normalizer_spec", &start);
      parse_normalizer_spec(spec, start, name, file);
    } else {
      r.skip(wire, number);
    }
  }
  (void)trainer_seen;
  auto refuse = [&](const std::string& what) { throw ModelError(name + ": " + what); };
  if (file.pieces.empty()) refuse("not a SentencePiece model: it has no pieces");
  std::unordered_map<std::string_view, std::size_t> seen;
  seen.reserve(file.pieces.size());
  int unknown = -1;
  for (std::size_t i = 0; i < file.pieces.size(); ++i) {
    const File::Piece& p = file.pieces[i];
    const std::string here = "piece " + std::to_string(i);
    if (p.piece.empty()) refuse(here + " is empty");
    if (p.piece.size() > kSentencePieceMaxPieceBytes) {
      refuse(here + " has " + std::to_string(p.piece.size()) + " bytes; at most " +
             std::to_string(kSentencePieceMaxPieceBytes) + " are accepted");
    }
    if (!unicode::is_valid_utf8(p.piece)) refuse(here + " is not valid UTF-8");
    if (!std::isfinite(p.score))
      refuse(here + " (\"" + p.piece + "\") has a score that is not finite");
    if (const auto [it, added] = seen.emplace(p.piece, i); !added) {
      refuse(here + " (\"" + unicode::printable_utf8(p.piece) + "\") repeats piece " +
             std::to_string(it->second));
    }
    if (p.type == File::PieceType::kUnknown) {
      if (unknown >= 0)
        refuse(here + " is a second UNKNOWN piece (piece " + std::to_string(unknown) + " is one)");
      unknown = static_cast<int>(i);
    }
  }
  if (unknown < 0) refuse("no piece has the type UNKNOWN (SentencePiece requires one)");
  // SentencePiece takes the UNKNOWN piece's id, whatever trainer_spec.unk_id
  // says.
  file.unk_id = unknown;
  return file;
}

SentencePieceModelFile read_sentencepiece_model(const std::filesystem::path& path) {
  const std::string bytes =
      read_regular_file(path, "SentencePiece model", kSentencePieceMaxFileBytes);
  return parse_sentencepiece_model(bytes, path.string());
}

// The normalized text and, for each of its bytes, the bytes of the original
// text it came from.
struct SentencePieceEncoder::Normalized {
  std::string text;
  std::vector<int> start, end;
  void append(std::string_view s, int from, int to) {
    text.append(s);
    start.insert(start.end(), s.size(), from);
    end.insert(end.end(), s.size(), to);
  }
  void pop(std::size_t bytes) {
    // erase, not resize: GCC 12 cannot see that resize never grows here (-Wstringop-overflow).
    const std::size_t keep = bytes < text.size() ? text.size() - bytes : 0;
    text.erase(keep);
    start.resize(keep);
    end.resize(keep);
  }
};

SentencePieceEncoder::SentencePieceEncoder(SentencePieceModelFile file, const std::string& name)
    : file_(std::move(file)) {
  const char* type = file_.model_type == File::ModelType::kBpe    ? "BPE"
                     : file_.model_type == File::ModelType::kWord ? "WORD"
                     : file_.model_type == File::ModelType::kChar ? "CHAR"
                                                                  : nullptr;
  if (type) {
    throw ModelError(name + ": a " + type +
                     " SentencePiece model; only UNIGRAM models (Marian's, "
                     "T5's) are supported");
  }
  if (!file_.precompiled_charsmap.empty()) {
    // The pipeline's Precompiled normalizer checks every reachable entry of a
    // hostile charsmap; the lookups below then stay inside it (and check their
    // indices anyway).
    text::make_precompiled_charsmap_normalizer(file_.precompiled_charsmap,
                                               name + " normalizer_spec");
    const std::string_view blob = file_.precompiled_charsmap;
    const std::size_t units = read_le32(blob, 0) / 4;
    trie_.resize(units);
    for (std::size_t i = 0; i < units; ++i) trie_[i] = read_le32(blob, 4 + 4 * i);
    results_ = std::string(blob.substr(4 + 4 * units));
  }
  // SentencePiece's min_score_ / max_score_: over NORMAL pieces, from FLT_MAX / FLT_MIN.
  min_score_ = std::numeric_limits<float>::max();
  max_score_ = std::numeric_limits<float>::min();
  for (std::size_t i = 0; i < file_.pieces.size(); ++i) {
    const File::Piece& p = file_.pieces[i];
    if (p.type == File::PieceType::kNormal) {
      min_score_ = std::min(min_score_, p.score);
      max_score_ = std::max(max_score_, p.score);
    }
    if (p.type == File::PieceType::kNormal || p.type == File::PieceType::kUserDefined) {
      sorted_.push_back(static_cast<int>(i));
    }
    if (p.type == File::PieceType::kUserDefined) user_defined_.push_back(static_cast<int>(i));
  }
  const auto by_bytes = [&](int a, int b) {
    return file_.pieces[static_cast<std::size_t>(a)].piece <
           file_.pieces[static_cast<std::size_t>(b)].piece;
  };
  std::sort(sorted_.begin(), sorted_.end(), by_bytes);
  std::sort(user_defined_.begin(), user_defined_.end(), by_bytes);
  byte_ids_.fill(-1);
  static const char* kHex = "0123456789ABCDEF";
  for (std::size_t i = 0; i < file_.pieces.size(); ++i) {
    const File::Piece& p = file_.pieces[i];
    ids_.emplace(p.piece, static_cast<int>(i));
    if (p.type != File::PieceType::kByte || p.piece.size() != 6 || !p.piece.starts_with("<0x"))
      continue;
    for (int b = 0; b < 256; ++b) {
      if (p.piece == std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">") {
        byte_ids_[static_cast<std::size_t>(b)] = static_cast<int>(i);
      }
    }
  }
  if (file_.byte_fallback) {
    // As SentencePiece's loader: byte fallback needs every byte's <0xXX> piece.
    const auto missing = std::count(byte_ids_.begin(), byte_ids_.end(), -1);
    if (missing > 0) {
      throw ModelError(name + ": trainer_spec.byte_fallback is on, but " + std::to_string(missing) +
                       " of the 256 byte pieces (<0x00> … <0xFF>, type BYTE) are missing");
    }
  }
}

SentencePieceEncoder::~SentencePieceEncoder() = default;

int SentencePieceEncoder::piece_to_id(std::string_view piece) const {
  const auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

std::pair<std::size_t, std::string_view> SentencePieceEncoder::longest_rule(
    std::string_view text) const {
  if (trie_.empty()) return {0, {}};
  auto offset = [](std::uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); };
  auto label = [](std::uint32_t unit) { return unit & (0x80000000u | 0xFFu); };
  const std::size_t n = trie_.size();
  std::size_t node = offset(trie_[0]);
  std::size_t best_length = 0, best_value = 0;
  int results = 0;  // SentencePiece looks at the first 32 (shortest) matches only
  for (std::size_t i = 0; i < text.size() && results < 32; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) break;
    node ^= c;
    if (node >= n || label(trie_[node]) != c) break;
    const bool leaf = ((trie_[node] >> 8) & 1) == 1;
    node ^= offset(trie_[node]);
    if (leaf) {
      if (node >= n) break;
      best_length = i + 1;
      best_value = trie_[node] & 0x7FFFFFFFu;
      ++results;
    }
  }
  if (best_length == 0 || best_value > results_.size()) return {0, {}};
  const std::size_t stop = results_.find('\0', best_value);
  return {best_length,
          std::string_view(results_).substr(
              best_value, stop == std::string::npos ? std::string::npos : stop - best_value)};
}

// normalizer.cc's Normalize: each prefix of the input becomes the longest
// rule's result or itself (a malformed byte: U+FFFD); white space at the ends
// is dropped and runs of it become one space when remove_extra_whitespaces is
// on; "▁" goes in front (add_dummy_prefix) and for every space
// (escape_whitespaces).
SentencePieceEncoder::Normalized SentencePieceEncoder::normalize(std::string_view input) const {
  Normalized out;
  const int total = static_cast<int>(input.size());
  auto prefix = [&](std::string_view rest) -> std::pair<std::string_view, std::size_t> {
    // A user-defined symbol passes through as it is (its longest match), before any rule.
    std::size_t symbol = 0;
    prefixes_of(file_.pieces, user_defined_, rest,
                [&](int, std::size_t length) { symbol = length; });
    if (symbol > 0) return {rest.substr(0, symbol), symbol};
    const auto [length, result] = longest_rule(rest);
    if (length > 0) return {result, length};
    const std::size_t n = valid_char_length(rest);
    if (n == 0) return {kReplacementChar, 1};
    return {rest.substr(0, n), n};
  };
  const bool remove_ws = file_.remove_extra_whitespaces;
  const std::string_view space = file_.escape_whitespaces ? kSpaceSymbol : std::string_view(" ");
  std::size_t consumed = 0;
  if (remove_ws) {
    while (consumed < input.size()) {
      const auto [result, length] = prefix(input.substr(consumed));
      if (result != " ") break;
      consumed += length;
    }
  }
  if (consumed >= input.size()) return out;
  const int here = static_cast<int>(consumed);
  if (!file_.treat_whitespace_as_suffix && file_.add_dummy_prefix) out.append(space, here, here);
  bool previous_space = remove_ws;
  while (consumed < input.size()) {
    auto [result, length] = prefix(input.substr(consumed));
    if (previous_space) {
      while (!result.empty() && result.front() == ' ') result.remove_prefix(1);
    }
    const int from = static_cast<int>(consumed), to = static_cast<int>(consumed + length);
    if (!result.empty()) {
      for (const char c : result) {
        if (c == ' ' && file_.escape_whitespaces) {
          out.append(kSpaceSymbol, from, to);
        } else {
          out.append(std::string_view(&c, 1), from, to);
        }
      }
      previous_space = result.back() == ' ';
    }
    consumed += length;
    if (!remove_ws) previous_space = false;
  }
  if (remove_ws) {
    while (out.text.size() >= space.size() && std::string_view(out.text).ends_with(space)) {
      out.pop(space.size());
    }
  }
  if (file_.treat_whitespace_as_suffix && file_.add_dummy_prefix) out.append(space, total, total);
  return out;
}

// unigram_model.cc's EncodeOptimized: for each character position in order, every matched
// piece starting there offers a path to where it ends (shorter pieces first), the first best
// offer kept; where no piece of exactly one character starts, an unknown character is offered
// at min_score - 10. Path scores are floats, as there.
std::vector<SentencePieceEncoder::Segment> SentencePieceEncoder::segment(
    std::string_view text) const {
  struct Node {
    float score = 0.0f;
    int id = -1;
    std::size_t start = 0;
    bool reached = false;
  };
  const std::size_t size = text.size();
  std::vector<Node> best(size + 1);
  const float unk_score = min_score_ - 10.0f;
  // The candidate in double (EncodeOptimized's `score` is a double: its user-defined branch
  // subtracts the double 0.1), compared with and stored into the float of the node.
  auto offer = [&](std::size_t end, int id, double score, std::size_t start) {
    Node& node = best[end];
    if (!node.reached || score > static_cast<double>(node.score)) {
      node = {static_cast<float>(score), id, start, true};
    }
  };
  for (std::size_t start = 0; start < size;) {
    const float here = best[start].score;
    const std::size_t char_length = std::min<std::size_t>(
        static_cast<std::size_t>(unicode::decode_at(text, start).length), size - start);
    bool single = false;
    // The matched pieces that are prefixes of the rest, shortest first.
    prefixes_of(file_.pieces, sorted_, text.substr(start), [&](int id, std::size_t length) {
      const File::Piece& p = file_.pieces[static_cast<std::size_t>(id)];
      const double score = p.type == File::PieceType::kUserDefined
                               ? static_cast<double>(static_cast<float>(length) * max_score_) - 0.1
                               : static_cast<double>(p.score);
      offer(start + length, id, score + static_cast<double>(here), start);
      single = single || length == char_length;
    });
    if (!single) {
      offer(start + char_length, file_.unk_id,
            static_cast<double>(unk_score) + static_cast<double>(here), start);
    }
    start += char_length;
  }
  std::vector<Segment> out;
  for (std::size_t end = size; end > 0; end = best[end].start) {
    out.push_back({best[end].id, best[end].start, end});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<SentencePiecePiece> SentencePieceEncoder::encode(std::string_view text) const {
  std::vector<SentencePiecePiece> pieces;
  const Normalized normalized = normalize(text);
  if (normalized.text.empty()) return pieces;
  // SentencePiece merges consecutive unknown pieces into one (sentencepiece_processor.cc).
  std::vector<Segment> merged;
  for (const Segment& s : segment(normalized.text)) {
    if (!merged.empty() && s.id == file_.unk_id && merged.back().id == file_.unk_id) {
      merged.back().end = s.end;
    } else {
      merged.push_back(s);
    }
  }
  for (const Segment& t : merged) {
    const std::size_t first = t.start;
    const std::size_t last = t.end - 1;
    const int start = normalized.start[first], end = normalized.end[last];
    if (t.id != file_.unk_id) {
      pieces.push_back(
          {t.id, file_.pieces[static_cast<std::size_t>(t.id)].piece, start, end, false});
      continue;
    }
    const std::string surface = normalized.text.substr(first, last + 1 - first);
    if (file_.byte_fallback) {
      // Byte fallback: each byte of the unknown run as its <0xXX> piece, when
      // all have one.
      std::vector<int> ids;
      for (const char c : surface) {
        const int id = byte_ids_[static_cast<unsigned char>(c)];
        if (id < 0) break;
        ids.push_back(id);
      }
      if (ids.size() == surface.size()) {
        for (const int id : ids) {
          pieces.push_back(
              {id, file_.pieces[static_cast<std::size_t>(id)].piece, start, end, false});
        }
        continue;
      }
    }
    pieces.push_back({t.id, surface, start, end, true});
  }
  return pieces;
}

}  // namespace attnscope
