// Fuzz target: SentencePiece model files (.spm / .model: Marian's source.spm and target.spm),
// the whole input being the file. A file that parses is built into the encoder, which encodes a
// fixed sample with odd characters and the file's own first bytes as text.
// Invariants checked (std::abort otherwise): anything refused is a ModelError (never another
// exception, never a crash); the pieces of a text have ids of the file, offsets inside the text in
// order, and each piece is valid UTF-8; a parsed file holds at most kSentencePieceMaxPieces pieces.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/text/sentencepiece_file.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace {
using namespace attnscope;

constexpr std::string_view kSample =
    "  Hello, world! \xEF\xBC\xA8\xEF\xBD\x85llo caf\xC3\xA9 e\xCC\x81 \xEF\xAC\x81 "
    "\xF0\x9F\x98\x80 \xE2\x80\x8B\xC2\xA0\t\n  \xE4\xB8\xAD\xE6\x96\x87 \xFF\xFE >>de<< ";

void encode_checked(const SentencePieceEncoder& encoder, std::string_view text) {
  int previous = 0;
  for (const SentencePiecePiece& p : encoder.encode(text)) {
    if (p.id < 0 || p.id >= static_cast<int>(encoder.file().pieces.size())) std::abort();
    if (p.start < previous || p.end < p.start || p.end > static_cast<int>(text.size())) {
      std::abort();
    }
    if (p.piece.empty() || !unicode::is_valid_utf8(p.piece)) std::abort();
    previous = p.start;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;  // the reader's bounds are unit-tested with generated files
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    SentencePieceModelFile file = parse_sentencepiece_model(bytes, "fuzz.spm");
    if (file.pieces.empty() || file.pieces.size() > kSentencePieceMaxPieces) std::abort();
    const SentencePieceEncoder encoder(std::move(file), "fuzz.spm");
    encode_checked(encoder, kSample);
    encode_checked(encoder, bytes.substr(0, 512));
  } catch (const ModelError&) {
  }
  return 0;
}
