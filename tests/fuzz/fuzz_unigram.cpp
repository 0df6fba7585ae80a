// Fuzz target: the Unigram model and SentencePiece's Precompiled charsmap (T5, XLM-R, Marian),
// fed directly so that mutations reach their own structures rather than tokenizer.json's syntax
// and base64 (fuzz_tokenizer_files covers them inside tokenizer.json). The first byte picks:
//   even: the rest is a charsmap (Darts double-array + strings blob) that normalizes a fixed
//         sample and the charsmap's own bytes;
//   odd:  "piece<TAB>score" lines (a vocabulary; the line "unk=N" sets unk_id, "byte_fallback"
//         turns it on), then after "\n@@@@\n" a text that is split at spaces and tokenized.
// Invariants checked (std::abort otherwise): the normalized text is valid UTF-8 within the growth
// limit; the tokens of a piece cover it from its first byte to its last without gaps, in order;
// every id has a piece in the model.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/text/pipeline/models.h"
#include "core/text/pipeline/normalized_string.h"
#include "core/text/pipeline/normalizers.h"
#include "core/text/unicode.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
using namespace attnscope;

constexpr std::string_view kSample =
    "Hello, world! \xEF\xBC\xA8\xEF\xBD\x85llo caf\xC3\xA9 \xE2\x85\xA0 \xE3\x8D\xBF "
    "\xF0\x9F\x98\x80 \xE2\x80\x8B\xC2\xA0\t\n  \xE4\xB8\xAD\xE6\x96\x87 \xFF\xFE";
constexpr std::size_t kMaxVocab = 4096;

void normalize_checked(const text::Normalizer& normalizer, std::string_view bytes) {
  text::NormalizedString s(bytes, 0, static_cast<int>(bytes.size()));
  normalizer.normalize(s);
  if (!unicode::is_valid_utf8(s.text())) std::abort();
  if (s.text().size() > text::max_grown_bytes(bytes.size())) std::abort();
  if (s.alignments().size() != s.text().size()) std::abort();
}

void charsmap(std::string_view blob) {
  const auto normalizer = text::make_precompiled_charsmap_normalizer(blob, "fuzz charsmap");
  normalize_checked(*normalizer, kSample);
  normalize_checked(*normalizer, blob.substr(0, 4096));
}

void tokenize_checked(const text::Model& model, std::string_view piece) {
  std::vector<text::ModelToken> tokens;
  model.tokenize(piece, tokens);
  int covered = 0;  // tokens start where an earlier one did or where the covered part ends
  int previous_start = 0;
  for (const text::ModelToken& t : tokens) {
    if (t.start < previous_start || t.start > covered || t.end <= t.start) std::abort();
    if (t.end > static_cast<int>(piece.size())) std::abort();
    if (t.id < 0 || t.id >= model.size() || !model.id_to_token(t.id)) std::abort();
    previous_start = t.start;
    if (t.end > covered) covered = t.end;
  }
  // A piece the model cannot cover at all (no unk, no byte fallback) may give no tokens; any
  // tokens it gives cover the whole piece.
  if (!tokens.empty() && covered != static_cast<int>(piece.size())) std::abort();
}

void unigram(std::string_view rest) {
  const auto files = fuzz::split_files(rest, 2);
  nlohmann::json model = {{"type", "Unigram"}, {"vocab", nlohmann::json::array()}};
  std::string_view lines = files[0];
  while (!lines.empty() && model["vocab"].size() < kMaxVocab) {
    const std::size_t eol = lines.find('\n');
    const std::string_view line = lines.substr(0, eol);
    lines = eol == std::string_view::npos ? std::string_view() : lines.substr(eol + 1);
    if (line == "byte_fallback") {
      model["byte_fallback"] = true;
    } else if (line.substr(0, 4) == "unk=") {
      model["unk_id"] = std::atoi(std::string(line.substr(4)).c_str());
    } else if (const std::size_t tab = line.find('\t'); tab != std::string_view::npos) {
      const std::string piece(line.substr(0, tab));
      // Invalid UTF-8 pieces are the loader's to refuse: let them through as they are.
      const double score = std::strtod(std::string(line.substr(tab + 1)).c_str(), nullptr);
      model["vocab"].push_back({piece, score});
    }
  }
  std::unique_ptr<text::Model> m;
  try {
    m = text::make_unigram_model(model, "fuzz tokenizer.json");
  } catch (const nlohmann::json::exception&) {
    return;  // a piece that is not UTF-8 cannot even be a JSON string
  }
  // Split the text at spaces into valid UTF-8 pieces, as a pre-tokenizer hands them over.
  text::NormalizedString whole(files[1], 0, static_cast<int>(files[1].size()));
  std::string_view text = whole.text();
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::string_view piece = text.substr(0, space);
    if (!piece.empty()) tokenize_checked(*m, piece.substr(0, 1 << 12));
    if (space == std::string_view::npos) break;
    text = text.substr(space + 1);
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > fuzz::kMaxJsonInputBytes) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0)
      charsmap(rest);
    else
      unigram(rest);
  } catch (const ModelError&) {
  }
  return 0;
}
