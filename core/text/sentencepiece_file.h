#pragma once
// SentencePiece model files (.model / .spm: the ModelProto of
// sentencepiece_model.proto), read with a small wire-format decoder, and an
// encoder that gives what SentencePieceProcessor's encode(text, out_type=str)
// gives for a UNIGRAM model (Marian's source.spm / target.spm).
//
// A model file is untrusted input: every varint, length and field is checked
// against the bytes that are there, nothing is allocated from a count the file
// declares, and anything malformed is one ModelError line naming the file
// ("FILE: not a SentencePiece model: …").
//
// The encoder follows SentencePiece itself (normalizer.cc, unigram_model.cc), not Hugging Face's
// tokenizers: its normalizer takes the LONGEST rule of the precompiled charsmap at each position
// (tokenizers' Precompiled takes the shortest within a grapheme), strips and collapses white space
// as remove_extra_whitespaces says, adds the dummy "▁" prefix and escapes spaces as "▁". The
// segmentation is SentencePiece's Viterbi over the whole normalized text (unigram_model.cc's
// EncodeOptimized) in its float arithmetic: the pipeline's Unigram model (Hugging Face's, which
// sums in double) breaks near-ties between the same pieces in another order ("ff" + "f" against
// "f" + "ff") the other way. CONTROL, UNKNOWN, BYTE and UNUSED pieces are never matched; unknown
// characters score min(NORMAL scores) - 10 and consecutive ones merge into one piece; USER_DEFINED
// pieces pass the normalizer untouched and score bytes x max(NORMAL scores) - 0.1, as there.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/tokenizer_common.h"

namespace attnscope {

struct SentencePieceModelFile {
  // sentencepiece_model.proto's SentencePiece.Type and TrainerSpec.ModelType.
  enum class PieceType {
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,
    kUserDefined = 4,
    kUnused = 5,
    kByte = 6
  };
  enum class ModelType { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 };
  struct Piece {
    std::string piece;
    float score = 0.0f;
    PieceType type = PieceType::kNormal;
  };

  std::vector<Piece> pieces;  // in id order
  // trainer_spec
  ModelType model_type = ModelType::kUnigram;
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  int unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  // normalizer_spec
  std::string normalizer_name;
  std::string precompiled_charsmap;  // raw bytes; empty: no rules
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// Bounds on what a model file may hold (real ones: < 10 MB, < 300k pieces of a
// few dozen bytes).
inline constexpr std::uint64_t kSentencePieceMaxFileBytes = 64ull << 20;
inline constexpr std::size_t kSentencePieceMaxPieces = 1u << 21;
inline constexpr std::size_t kSentencePieceMaxPieceBytes = 1024;

// Parses the ModelProto bytes and checks them as SentencePieceProcessor::Load
// does (pieces not empty, valid UTF-8, unique; exactly one UNKNOWN piece;
// finite scores). `name` starts every message. Throws ModelError.
SentencePieceModelFile parse_sentencepiece_model(std::string_view bytes, const std::string& name);
// Reads a regular file (at most kSentencePieceMaxFileBytes) and parses it.
// Throws ModelError.
SentencePieceModelFile read_sentencepiece_model(const std::filesystem::path& path);

// One piece of an encoding: its SentencePiece id, the piece as
// encode(out_type=str) gives it (the normalized text itself for an unknown run)
// and the bytes [start, end) of the original text it came from (start == end
// for the "▁" the dummy prefix adds).
struct SentencePiecePiece {
  int id = -1;
  std::string piece;
  int start = 0;
  int end = 0;
  bool unknown = false;
};

class SentencePieceEncoder {
 public:
  // Refuses models other than UNIGRAM (BPE, WORD, CHAR) with a ModelError
  // naming `name`, and a malformed charsmap.
  SentencePieceEncoder(SentencePieceModelFile file, const std::string& name);
  ~SentencePieceEncoder();
  SentencePieceEncoder(const SentencePieceEncoder&) = delete;
  SentencePieceEncoder& operator=(const SentencePieceEncoder&) = delete;

  // Never throws for odd text: invalid UTF-8 bytes become U+FFFD as
  // SentencePiece makes them. Safe to call from several threads at once.
  std::vector<SentencePiecePiece> encode(std::string_view text) const;

  const SentencePieceModelFile& file() const { return file_; }
  int piece_to_id(std::string_view piece) const;  // -1 if absent

 private:
  struct Normalized;
  Normalized normalize(std::string_view text) const;
  // The longest charsmap rule at the start of `text`: its length and result, or
  // length 0.
  std::pair<std::size_t, std::string_view> longest_rule(std::string_view text) const;

  SentencePieceModelFile file_;
  struct Segment {
    int id;
    std::size_t start, end;  // bytes of the normalized text
  };
  std::vector<Segment> segment(std::string_view normalized) const;

  std::vector<int> sorted_;        // ids of the NORMAL and USER_DEFINED pieces, by their bytes
  std::vector<int> user_defined_;  // ids of the USER_DEFINED pieces, by their bytes
  float min_score_ = 0.0f, max_score_ = 0.0f;
  std::vector<std::uint32_t> trie_;  // the charsmap's double array (empty: no rules)
  std::string results_;              // its NUL-ended results
  PieceToId ids_;                    // every piece's id
  std::array<int, 256> byte_ids_{};  // the BYTE piece of each byte, -1 when none
};

}  // namespace attnscope
