// Lesson model speed: tokenizing and computing a 50-word sentence (issue: < 1 ms).
// Run: build/bin/lesson_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/lesson/lesson_model.h"
#include "core/text/word_tokenizer.h"

namespace {

using namespace attnscope;

// 50 words, punctuation and one unknown word included.
const std::string kSentence =
    "On a quiet morning she walked down to the bank of the river, sat on the grass near the "
    "water and watched the boats drift slowly past the old mill, while her brother went into "
    "town to withdraw some money from the bank before it closed for the long weekend zorblax.";

void BM_WordTokenize(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(word_tokenize(kSentence, kLessonMaxTokens));
}
BENCHMARK(BM_WordTokenize)->Unit(benchmark::kMicrosecond);

void BM_LessonTokenizeAndRun(benchmark::State& state) {
  LessonOptions o;
  o.heads = static_cast<int>(state.range(0));
  auto model = make_lesson_model(o);
  auto cpu = make_cpu_backend();
  state.counters["tokens"] = static_cast<double>(model->tokenize(kSentence).size());
  for (auto _ : state) benchmark::DoNotOptimize(model->run(kSentence, *cpu));
}
BENCHMARK(BM_LessonTokenizeAndRun)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond);

void BM_MeaningShift(benchmark::State& state) {
  auto model = make_lesson_model();
  auto cpu = make_cpu_backend();
  AttentionTrace t = model->run(kSentence, *cpu);
  for (auto _ : state) benchmark::DoNotOptimize(lesson_meaning_shift(t, 9));
}
BENCHMARK(BM_MeaningShift)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
