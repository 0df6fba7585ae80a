// Fuzz target: every tokenizer's encode on arbitrary bytes (invalid UTF-8 included): the lesson
// model's words, GPT-2's byte-level BPE and BERT's WordPiece, loaded once from the real
// vocabularies (the fixture models'). Checks what every caller relies on: offsets inside the text
// and in order, and BPE's ids decoding back to exactly the input bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "core/text/tokenizer.h"
#include "core/text/word_tokenizer.h"

namespace {
std::shared_ptr<const attnscope::Tokenizer> bpe, wordpiece;

void check_offsets(const attnscope::Tokens& tokens, std::size_t size) {
  int last_start = 0;
  for (const auto& t : tokens) {
    if (t.start < 0) continue;  // special tokens
    if (t.end < t.start || static_cast<std::size_t>(t.end) > size || t.start < last_start)
      std::abort();
    last_start = t.start;
  }
}
}  // namespace

// The fixture models hold the real GPT-2 and BERT vocabularies (from tests/data/npm).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  bpe = attnscope::load_tokenizer(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32");
  wordpiece = attnscope::load_tokenizer(ATTNSCOPE_FIXTURES "/bert-tiny-uncased-f32");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const attnscope::Tokens pieces = bpe->encode(text, false);
  check_offsets(pieces, size);
  std::string round_trip;
  for (const auto& t : pieces) round_trip += bpe->decode(t.id);
  if (round_trip != text) std::abort();  // byte-level BPE loses nothing
  check_offsets(wordpiece->encode(text, true), size);
  check_offsets(attnscope::word_tokenize(text).tokens, size);
  (void)attnscope::word_tokenize(text, 3);
  return 0;
}
