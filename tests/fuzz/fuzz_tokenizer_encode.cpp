// Fuzz target: every tokenizer's encode on arbitrary bytes (invalid UTF-8 included): the lesson
// model's words, GPT-2's byte-level BPE and BERT's WordPiece, loaded once from the real
// vocabularies (the fixture models'). Checks what every caller relies on: offsets inside the text
// and in order, and BPE's ids decoding back to exactly the input bytes. Two tokenizer.json
// pipelines too (issue 23): Mistral's (Prepend + Replace normalizer, byte fallback; the fixture's
// file) and Llama 3's Split regex before ByteLevel (over the 256 byte pieces alone, written here:
// the real 9 MB file takes ~20 s to load under ASan). Their token count stays within the growth
// limit and their only allowed error is the regex engine giving up (a ModelError naming the
// pattern), never a silent "no match". Texts over kMaxTextBytes are skipped (over
// kMaxPipelineTextBytes for the two pipelines).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/text/pipeline/normalized_string.h"
#include "core/text/pipeline/pre_tokenizers.h"
#include "core/text/tokenizer.h"
#include "core/text/word_tokenizer.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
std::shared_ptr<const attnscope::Tokenizer> bpe, wordpiece, mistral, split_regex;

// Llama 3's pre-tokenizer (Split with its regex, then ByteLevel) over a vocabulary of the 256
// byte pieces and no merges: every byte one token, so ids decode back to the text.
std::shared_ptr<const attnscope::Tokenizer> split_regex_tokenizer() {
  nlohmann::json tokenizer = nlohmann::json::parse(R"json({
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "behavior": "Isolated", "invert": false, "pattern": {"Regex":
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {}, "merges": []}})json");
  const auto& pieces = attnscope::text::byte_level_chars();
  for (int b = 0; b < 256; ++b) tokenizer["model"]["vocab"][pieces[b]] = b;
  const auto dir = attnscope::fuzz::scratch_dir() / "split-regex";
  std::filesystem::create_directories(dir);
  attnscope::fuzz::write_file(dir / "tokenizer.json", tokenizer.dump());
  return attnscope::load_tokenizer(dir);
}

void check_offsets(const attnscope::Tokens& tokens, std::size_t size) {
  int last_start = 0;
  for (const auto& t : tokens) {
    if (t.start < 0) continue;  // special tokens
    if (t.end < t.start || static_cast<std::size_t>(t.end) > size || t.start < last_start)
      std::abort();
    last_start = t.start;
  }
}

// Bounds each run's time and memory: the tokenizers are linear or so, but a regex may backtrack.
constexpr std::size_t kMaxTextBytes = 64 << 10;
constexpr std::size_t kMaxPipelineTextBytes = 4 << 10;

// At most 4 x the grown text of each piece between added tokens (see fuzz_tokenizer_files.cpp).
std::size_t max_tokens(std::size_t size) {
  using attnscope::text::kGrowthSlack, attnscope::text::kMaxGrowth;
  return 4 * (kMaxGrowth * size + (size + 1) * kGrowthSlack) + 16;
}

void check_pipeline(const attnscope::Tokenizer& tokenizer, std::string_view text,
                    bool byte_level = false) {
  try {
    const attnscope::Tokens tokens = tokenizer.encode(text, true);
    if (tokens.size() > max_tokens(text.size())) std::abort();
    check_offsets(tokens, text.size());
    if (!byte_level) return;
    std::string round_trip;
    for (const auto& t : tokens) round_trip += tokenizer.decode(t.id);
    if (round_trip != text) std::abort();  // a byte lost or a piece left unmatched
  } catch (const attnscope::ModelError& e) {
    // Oniguruma's retry limit on this text is said, as Hugging Face's tokenizers does; nothing
    // else may fail on a text.
    if (std::strstr(e.what(), "retry limit") == nullptr) std::abort();
  }
}
}  // namespace

// The fixture models hold the real GPT-2 and BERT vocabularies (from tests/data/npm).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  bpe = attnscope::load_tokenizer(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32");
  wordpiece = attnscope::load_tokenizer(ATTNSCOPE_FIXTURES "/bert-tiny-uncased-f32");
  mistral = attnscope::load_tokenizer(ATTNSCOPE_FIXTURES "/mistral-tiny");
  split_regex = split_regex_tokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxTextBytes) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const attnscope::Tokens pieces = bpe->encode(text, false);
  check_offsets(pieces, size);
  std::string round_trip;
  for (const auto& t : pieces) round_trip += bpe->decode(t.id);
  if (round_trip != text) std::abort();  // byte-level BPE loses nothing
  check_offsets(wordpiece->encode(text, true), size);
  check_offsets(attnscope::word_tokenize(text).tokens, size);
  (void)attnscope::word_tokenize(text, 3);
  // Mistral's BPE takes its whole text as one word: slow under ASan for long inputs, and a long
  // input finds nothing a 4 KiB one cannot in these pipelines.
  if (size > kMaxPipelineTextBytes) return 0;
  check_pipeline(*mistral, text);
  check_pipeline(*split_regex, text, /*byte_level=*/true);
  return 0;
}
