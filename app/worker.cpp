#include "app/worker.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>

#include "core/trace/trace_check.h"

namespace attnscope {

namespace {
// Testing aid: ATTNSCOPE_TEST_COMPUTE_DELAY_MS makes every job that much slower, so a test can
// show that typing never waits for the model and that queued edits coalesce.
int test_delay_ms() {
  const char* v = std::getenv("ATTNSCOPE_TEST_COMPUTE_DELAY_MS");
  return v ? std::clamp(std::atoi(v), 0, 10000) : 0;
}

// The meaning view's numbers (a vocabulary scan per token) for a lesson trace.
void publish_meaning_shifts(ComputeResult& result) {
  if (!result.trace || !result.trace->model.capabilities.meaning_shift) return;
  try {
    result.meaning_shifts =
        std::make_shared<const std::vector<MeaningShift>>(lesson_meaning_shifts(*result.trace, 8));
  } catch (const std::exception& e) {
    result.meaning_error = e.what();
  }
}
}  // namespace

Worker::Worker() : thread_([this] { loop(); }) {}

Worker::~Worker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();  // waits for the job in flight; models honour no cancellation
}

void Worker::submit(int slot, ComputeJob job) {
  {
    std::lock_guard lock(mutex_);
    pending_[slot] = std::move(job);  // newest wins: an unstarted older job is dropped
  }
  wake_.notify_one();
}

bool Worker::busy(int slot) const {
  std::lock_guard lock(mutex_);
  return pending_[slot].has_value() || running_[slot];
}

void Worker::loop() {
  for (;;) {
    ComputeJob job;
    int slot = -1;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || pending_[0].has_value() || pending_[1].has_value(); });
      if (stop_) return;
      slot = pending_[0].has_value() ? 0 : 1;
      // Alternate fairly: if both wait, take the one that was not computed last.
      if (pending_[0] && pending_[1] && last_slot_ == 0) slot = 1;
      job = std::move(*pending_[slot]);
      pending_[slot].reset();
      running_[slot] = true;
    }
    last_slot_ = slot;
    auto result = std::make_shared<ComputeResult>();
    result->id = job.id;
    result->text = job.text;
    if (auto previous = results_[slot].load()) result->trace = previous->trace;
    try {
      if (!job.model) throw std::runtime_error("no model is loaded");
      auto start = std::chrono::steady_clock::now();
      if (static const int delay = test_delay_ms(); delay > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));
      auto trace = std::make_shared<AttentionTrace>(job.model->run(job.text, *job.backend));
      check_attention_rows(*trace);  // a broken model's NaN rows never reach a view
      if (trace->compute_ms <= 0.0)
        trace->compute_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
      result->trace = std::move(trace);
      publish_meaning_shifts(*result);
    } catch (const std::exception& e) {
      result->error = e.what();
    } catch (...) {
      result->error = "the model failed with an unknown error";
    }
    results_[slot].store(std::move(result));
    completed_.fetch_add(1);
    {
      std::lock_guard lock(mutex_);
      running_[slot] = false;
    }
  }
}

}  // namespace attnscope
