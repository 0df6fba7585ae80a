#pragma once
// Recomputes attention on a background thread and publishes immutable results; the UI thread
// never waits on it. Each slot (sentence) keeps at most one pending job: a newer submit replaces
// an older one that has not started, so during fast typing only the newest text is computed.
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/backend/backend.h"
#include "core/model/lesson/lesson_model.h"
#include "core/model/model.h"
#include "core/trace/trace.h"

namespace attnscope {

inline constexpr int kSlots = 2;  // the two sentences shown side by side

struct ComputeJob {
  std::shared_ptr<const Model> model;
  std::shared_ptr<Backend> backend;
  std::string text;
  std::uint64_t id = 0;  // increasing per slot; results carry the id of the job they answer
};

struct ComputeResult {
  std::uint64_t id = 0;
  std::string text;  // the text this result answers
  // The newest successful trace (kept from an earlier job when this one failed).
  std::shared_ptr<const AttentionTrace> trace;
  std::string error;  // why the newest job failed; empty when it succeeded
  // Lesson traces (capabilities.meaning_shift): every token's meaning shift, [token], computed
  // here so the meaning view only reads; null for other models. meaning_error says why it is
  // missing when it should be there (the word vectors could not be read).
  std::shared_ptr<const std::vector<MeaningShift>> meaning_shifts;
  std::string meaning_error;
};

class Worker {
 public:
  Worker();
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void submit(int slot, ComputeJob job);
  // The newest published result of `slot` (null before the first one). Lock-free for the reader.
  std::shared_ptr<const ComputeResult> result(int slot) const { return results_[slot].load(); }
  // A job of `slot` is waiting or running.
  bool busy(int slot) const;
  // How many jobs ran to completion (success or error), over all slots: coalescing makes this
  // smaller than the number of submits while typing fast.
  std::uint64_t completed() const { return completed_.load(); }

 private:
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::array<std::optional<ComputeJob>, kSlots> pending_;
  std::array<bool, kSlots> running_{};
  bool stop_ = false;
  std::array<std::atomic<std::shared_ptr<const ComputeResult>>, kSlots> results_;
  std::atomic<std::uint64_t> completed_{0};
  int last_slot_ = 1;  // worker thread only
  std::thread thread_;
};

}  // namespace attnscope
