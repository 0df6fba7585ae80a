// Fuzz target: loading tokenizer files from a model folder. The first byte picks the layout, the
// rest is split into the files at "\n@@@@\n" lines:
//   0: vocab.json + merges.txt (GPT-2)      1: tokenizer.json (BPE)
//   2: vocab.txt + tokenizer_config.json    3: tokenizer.json (WordPiece)
// A tokenizer that loads then encodes a fixed text with odd characters and decodes every id.
// Layout 1 and 3 differ only in their seeds (a BPE and a WordPiece tokenizer.json).
// Bounds (issue 23): inputs over fuzz::kMaxJsonInputBytes are skipped; a JSON file nested deeper
// than Hugging Face's 127 levels must be refused; whatever the pipeline, the tokens of the sample
// stay within the normalizers' and pre-tokenizers' growth limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "core/text/pipeline/normalized_string.h"
#include "core/text/tokenizer.h"
#include "core/text/tokenizer_common.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kSample =
    "Hello, world! The bank's river-side [CLS] caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 "
    "\xF0\x9F\x98\x80 "
    "\xFF\xFE <|endoftext|> a\tb\n  12,345.6";

// load_tokenizer (core/text/tokenizer.h) picks the files itself; the layout only decides which
// files the folder holds.
void exercise(const std::filesystem::path& folder, std::string_view json_file = {}) {
  const auto tokenizer = attnscope::load_tokenizer(folder);
  // Loaded: then it was no deeper than the limit.
  if (attnscope::fuzz::json_nesting_depth(json_file) > attnscope::kTokenizerJsonMaxDepth)
    std::abort();
  // Every token covers at least one byte of the pieces the pre-tokenizer gave: at most 4 x the
  // normalized text of each piece between added tokens (each within the growth limit of its own
  // bytes), besides the post-processor's tokens, which the file lists.
  using attnscope::text::kGrowthSlack, attnscope::text::kMaxGrowth;
  const std::size_t max_tokens =
      4 * (kMaxGrowth * kSample.size() + (kSample.size() + 1) * kGrowthSlack) + json_file.size();
  for (bool special : {false, true}) {
    const attnscope::Tokens tokens = tokenizer->encode(kSample, special);
    if (tokens.size() > max_tokens) std::abort();
    for (const auto& token : tokens) (void)tokenizer->decode(token.id);
  }
  (void)tokenizer->decode(tokenizer->vocab_size() - 1);
  (void)tokenizer->id_to_token(tokenizer->vocab_size());
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnscope;
  if (size == 0 || size > fuzz::kMaxJsonInputBytes) return 0;
  const int layout = data[0] % 4;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const fs::path dir = fuzz::scratch_dir() / ("tok" + std::to_string(layout));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto files = fuzz::split_files(rest, 2);
  try {
    switch (layout) {
      case 0:
        fuzz::write_file(dir / "vocab.json", files[0]);
        fuzz::write_file(dir / "merges.txt", files[1]);
        exercise(dir);
        break;
      case 1:
        fuzz::write_file(dir / "tokenizer.json", rest);
        exercise(dir, rest);
        break;
      case 2:
        fuzz::write_file(dir / "vocab.txt", files[0]);
        fuzz::write_file(dir / "tokenizer_config.json", files[1]);
        exercise(dir, files[1]);
        break;
      default:
        fuzz::write_file(dir / "tokenizer.json", rest);
        exercise(dir, rest);
        break;
    }
  } catch (const ModelError&) {
  }
  return 0;
}
