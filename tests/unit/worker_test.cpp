// The app's worker runs a generation one step per turn and publishes every step (the UI stays live
// and shows each new token as it comes): steps arrive in order and equal the core Generator's own,
// Stop ends it within one step, and an edit (a newer job) cancels it. Fixture decoder: llama-tiny.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "app/worker.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Every job and step takes at least 15 ms, so a test can act between two steps of a tiny model
// (read once per process by the worker).
const bool kSlowSteps = [] { return setenv("ATTNSCOPE_TEST_COMPUTE_DELAY_MS", "15", 1) == 0; }();

std::shared_ptr<const Model> fixture_decoder() {
  const fs::path folder = fs::path(ATTNSCOPE_FIXTURES) / "llama-tiny";
  if (!fs::exists(folder / "tokenizer.json")) return nullptr;
  return open_model(folder.string());
}

// Records every published result, in order.
struct Recorder {
  std::mutex mutex;
  std::vector<std::shared_ptr<const ComputeResult>> results;
  Worker::PublishHook hook() {
    return [this](int slot, std::shared_ptr<const ComputeResult> r) {
      if (slot != 0) return;
      std::lock_guard lock(mutex);
      results.push_back(std::move(r));
    };
  }
  std::vector<std::shared_ptr<const ComputeResult>> snapshot() {
    std::lock_guard lock(mutex);
    return results;
  }
  int newest_steps() {
    std::lock_guard lock(mutex);
    return results.empty() || !results.back()->generation ? -1 : results.back()->generation->steps;
  }
};

// Waits (at most 30 s) until `done` holds.
template <class F>
bool wait_for(F done) {
  for (auto start = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - start < 30s; std::this_thread::sleep_for(1ms))
    if (done()) return true;
  return false;
}

ComputeJob generation_job(std::shared_ptr<const Model> model, std::shared_ptr<Backend> backend,
                          const std::string& text, int tokens, std::uint64_t id) {
  ComputeJob job{std::move(model), std::move(backend), text, id, std::nullopt};
  GenerationOptions options;
  options.max_new_tokens = tokens;
  job.generate = options;
  return job;
}

TEST(WorkerGeneration, EveryStepIsPublishedInOrderAndEqualsTheGenerators) {
  ASSERT_TRUE(kSlowSteps);
  auto model = fixture_decoder();
  if (!model) GTEST_SKIP() << "no llama-tiny fixture with a tokenizer";
  std::shared_ptr<Backend> backend = make_cpu_backend();
  const std::string prompt = "Once upon a time";
  constexpr int kTokens = 6;
  Recorder rec;
  {
    Worker worker(rec.hook());
    worker.submit(0, generation_job(model, backend, prompt, kTokens, 7));
    EXPECT_TRUE(worker.generating(0));
    ASSERT_TRUE(wait_for([&] { return !worker.busy(0); }));
    EXPECT_FALSE(worker.generating(0));
  }
  const auto results = rec.snapshot();
  // The core's own generation, step by step, as the reference.
  auto generator =
      model->start_generation(prompt, *backend, GenerationOptions{.max_new_tokens = kTokens});
  std::vector<GenerationStep> reference;
  while (!generator->done()) reference.push_back(generator->step());
  const int prompt_tokens = static_cast<int>(generator->trace().tokens.size()) - kTokens;

  // The prefill, then one result per step: steps 0, 1, …, N in order, each trace one token longer.
  ASSERT_EQ(results.size(), static_cast<size_t>(kTokens + 1));
  for (int k = 0; k <= kTokens; ++k) {
    SCOPED_TRACE("published result " + std::to_string(k));
    const ComputeResult& r = *results[k];
    EXPECT_EQ(r.id, 7u);
    EXPECT_EQ(r.text, prompt);
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.generation.has_value());
    EXPECT_EQ(r.generation->steps, k);
    EXPECT_EQ(r.generation->prompt_tokens, prompt_tokens);
    EXPECT_EQ(r.generation->running, k < kTokens);
    EXPECT_FALSE(r.generation->stopped);
    ASSERT_TRUE(r.trace);
    ASSERT_EQ(static_cast<int>(r.trace->tokens.size()), prompt_tokens + k);
    if (k == 0) continue;
    // The newest token and its row in every layer and head are the Generator's step k.
    const Token& token = r.trace->tokens.back();
    const GenerationStep& step = reference[k - 1];
    EXPECT_EQ(token.id, step.token.id);
    EXPECT_TRUE(token.generated);
    for (int l = 0; l < r.trace->layers(); ++l)
      for (int h = 0; h < r.trace->heads(); ++h) {
        const Matrix& a = r.trace->attention[l][h];
        const RowVector& want = step.attention[l][h];
        ASSERT_EQ(a.cols(), want.cols());
        for (int j = 0; j < want.cols(); ++j)
          ASSERT_NEAR(a(a.rows() - 1, j), want(j), 1e-6f) << "layer " << l << " head " << h;
      }
  }
  EXPECT_EQ(results.back()->trace->token_predictions.back().size(), 10u);
}

TEST(WorkerGeneration, StopEndsItWithinOneStep) {
  auto model = fixture_decoder();
  if (!model) GTEST_SKIP() << "no llama-tiny fixture with a tokenizer";
  Recorder rec;
  Worker worker(rec.hook());
  worker.submit(0, generation_job(model, make_cpu_backend(), "Once upon a time", 400, 1));
  ASSERT_TRUE(wait_for([&] { return rec.newest_steps() >= 2; }));
  const int steps_at_stop = rec.newest_steps();
  worker.stop_generation(0);
  ASSERT_TRUE(wait_for([&] { return !worker.busy(0); }));
  EXPECT_FALSE(worker.generating(0));
  const auto results = rec.snapshot();
  const ComputeResult& last = *results.back();
  ASSERT_TRUE(last.generation.has_value());
  EXPECT_TRUE(last.generation->stopped);
  EXPECT_FALSE(last.generation->running);
  // At most the step already in flight finished after Stop.
  EXPECT_LE(last.generation->steps, steps_at_stop + 1);
  EXPECT_EQ(static_cast<int>(last.trace->tokens.size()),
            last.generation->prompt_tokens + last.generation->steps);
  // Nothing more comes.
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(rec.snapshot().size(), results.size());
  worker.stop_generation(0);  // no generation: nothing happens
  EXPECT_FALSE(worker.busy(0));
}

TEST(WorkerGeneration, AnEditCancelsIt) {
  auto model = fixture_decoder();
  if (!model) GTEST_SKIP() << "no llama-tiny fixture with a tokenizer";
  std::shared_ptr<Backend> backend = make_cpu_backend();
  Recorder rec;
  Worker worker(rec.hook());
  worker.submit(0, generation_job(model, backend, "Once upon a time", 400, 1));
  ASSERT_TRUE(wait_for([&] { return rec.newest_steps() >= 1; }));
  worker.submit(0, ComputeJob{model, backend, "a new text", 2, std::nullopt});  // the edit
  EXPECT_FALSE(worker.generating(0));
  ASSERT_TRUE(wait_for([&] { return !worker.busy(0); }));
  std::this_thread::sleep_for(100ms);
  const auto results = rec.snapshot();
  // The edit's result is the last one: no step of the old generation was published after it.
  const ComputeResult& last = *results.back();
  EXPECT_EQ(last.id, 2u);
  EXPECT_EQ(last.text, "a new text");
  EXPECT_FALSE(last.generation.has_value());
  EXPECT_TRUE(last.error.empty()) << last.error;
  EXPECT_EQ(last.trace->text, "a new text");
  EXPECT_LT(results.size(), 40u) << "the generation went on after the edit";
  EXPECT_EQ(worker.result(0)->id, 2u);
}

TEST(WorkerGeneration, AModelThatCannotGenerateSaysSo) {
  Recorder rec;
  Worker worker(rec.hook());
  auto lesson = open_model("lesson");
  worker.submit(0, generation_job(lesson, make_cpu_backend(), "the bank", 4, 1));
  ASSERT_TRUE(wait_for([&] { return !worker.busy(0); }));
  const auto results = rec.snapshot();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NE(results[0]->error.find("cannot generate"), std::string::npos) << results[0]->error;
  EXPECT_FALSE(worker.generating(0));
}

// The lesson's slots (kSlots and kSlots + 1): a generation on sentence 1 keeps stepping while
// they compute, each answers its own text, and a summarize job carries every head's summary.
TEST(WorkerLessonSlots, TheyComputeBesideAGenerationWithHeadSummaries) {
  ASSERT_TRUE(kSlowSteps);
  auto model = fixture_decoder();
  if (!model) GTEST_SKIP() << "no llama-tiny fixture with a tokenizer";
  std::shared_ptr<Backend> backend = make_cpu_backend();
  Worker worker;
  worker.submit(0, generation_job(model, backend, "the cat", 6, 1));
  for (int k = 0; k < 2; ++k) {
    ComputeJob job{model, backend, k == 0 ? "the dog sat" : "sat dog the", 7, std::nullopt};
    job.summarize = k == 0;
    worker.submit(kSlots + k, std::move(job));
  }
  ASSERT_TRUE(wait_for(
      [&] { return !worker.busy(0) && !worker.busy(kSlots) && !worker.busy(kSlots + 1); }));
  EXPECT_EQ(worker.result(1), nullptr);  // sentence 2 was never asked for
  ASSERT_NE(worker.result(0), nullptr);
  EXPECT_EQ(worker.result(0)->generation->steps, 6);
  for (int k = 0; k < 2; ++k) {
    auto r = worker.result(kSlots + k);
    ASSERT_NE(r, nullptr);
    ASSERT_TRUE(r->error.empty()) << r->error;
    EXPECT_EQ(r->id, 7u);
    EXPECT_EQ(r->trace->text, k == 0 ? "the dog sat" : "sat dog the");
    EXPECT_EQ(r->head_summaries != nullptr, k == 0);
  }
  const auto r = worker.result(kSlots);
  const auto want = summarize_trace(model->run("the dog sat", *backend));
  ASSERT_EQ(r->head_summaries->size(), want.size());
  for (size_t l = 0; l < want.size(); ++l)
    for (size_t h = 0; h < want[l].size(); ++h) {
      EXPECT_NEAR((*r->head_summaries)[l][h].previous_token, want[l][h].previous_token, 1e-5);
      EXPECT_NEAR((*r->head_summaries)[l][h].entropy, want[l][h].entropy, 1e-5);
    }
}

}  // namespace
}  // namespace attnscope
