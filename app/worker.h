#pragma once
// Recomputes attention on a background thread and publishes immutable results; the UI thread
// never waits on it. Each slot (sentence) keeps at most one pending job: a newer submit replaces
// an older one that has not started, so during fast typing only the newest text is computed.
// A generation job (a decoder continues the text) runs one token per turn and publishes the trace
// after every step; any newer job of its slot (an edit, a new model) or stop_generation() ends it
// before its next step.
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app/probe_jobs.h"
#include "core/analysis/head_summary.h"
#include "core/backend/backend.h"
#include "core/model/lesson/lesson_model.h"
#include "core/model/model.h"
#include "core/trace/trace.h"

namespace attnscope {

inline constexpr int kSlots = 2;  // the two sentences shown side by side
// The worker's slots: the two sentences, then two for the guided lesson's real model (sentence 1
// and its words reversed, app/lesson/lesson_real.h), so every model runs on this one thread.
inline constexpr int kWorkerSlots = kSlots + 2;

struct ComputeJob {
  std::shared_ptr<const Model> model;
  std::shared_ptr<Backend> backend;
  std::string text;
  std::uint64_t id = 0;  // increasing per slot; results carry the id of the job they answer
  // Set: continue the text with the model's Generator (Model::start_generation) instead of one
  // forward pass.
  std::optional<GenerationOptions> generate;
  bool summarize = false;  // also publish the head summaries of every layer and head
  // "value-norm": publish value-weighted traces (core/analysis/value_weighting.h) when the model
  // gives its value norms (the Show panel offers it only then); without them, raw ones.
  std::string weighting = "raw";
  // Heads switched off and edges cut (issue 27): the trace is the intervened run's
  // (Intervenable::run_intervened); ignored by models that cannot be intervened on.
  Interventions interventions = {};
  // Encoder–decoders (capabilities.cross_attention): the job runs Model::run_translation(text,
  // target); no target: the model's own translation.
  std::optional<std::string> target = std::nullopt;
};

// Where a generation job stands in the result it published.
struct GenerationState {
  int prompt_tokens = 0;     // the prompt's tokens; generated ones follow in trace->tokens
  int steps = 0;             // tokens generated so far
  int max_new_tokens = 0;    // what was asked for
  bool running = false;      // more steps are coming
  bool stopped = false;      // ended early by stop_generation()
  bool end_of_text = false;  // the model wrote its end-of-sequence token
  double step_ms = 0.0;      // the newest step's time (prefill for step 0)
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
  // ComputeJob::summarize: summarize_trace(*trace), [layer][head] (core/analysis/head_summary.h).
  std::shared_ptr<const std::vector<std::vector<HeadSummary>>> head_summaries;
  // Set for a generation job: its progress (trace holds the prompt and every step so far).
  std::optional<GenerationState> generation;
  // The interventions `trace` was computed under (kept with it when a newer job failed), and
  // whether this job failed because of its own (an edge cut that empties a row): the window then
  // takes them back.
  Interventions interventions;
  bool interventions_refused = false;
};

class Worker {
 public:
  // Called on the worker thread after each result is published (never under the worker's lock):
  // tests record every step with it; the app needs none (it polls once per frame).
  using PublishHook = std::function<void(int slot, std::shared_ptr<const ComputeResult>)>;

  explicit Worker(PublishHook on_publish = {});
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void submit(int slot, ComputeJob job);
  // The newest published result of `slot` (null before the first one). Lock-free for the reader.
  std::shared_ptr<const ComputeResult> result(int slot) const { return results_[slot].load(); }
  // A job of `slot` is waiting or running (a generation counts until its last step).
  bool busy(int slot) const;
  // A generation of `slot` is under way (started or still waiting to start).
  bool generating(int slot) const;
  // Ends the generation of `slot` before its next step; it publishes a last result with
  // GenerationState::stopped. Nothing happens when none runs.
  void stop_generation(int slot);
  // Next token, lens and head effects of a sentence (app/probe_jobs.h), slots 0..kSlots-1. A
  // newer job replaces a waiting one; the effect map goes on one layer per turn after the traces
  // and generation steps, and a newer job carries it over when it asks for the same map.
  void submit_probe(int slot, ProbeJob job);
  std::shared_ptr<const ProbeResult> probe_result(int slot) const {
    return probe_results_[slot].load();
  }
  // A probe job of `slot` waits or runs, or its effect map is not complete.
  bool probing(int slot) const;
  // How many jobs ran to completion (success or error), over all slots: coalescing makes this
  // smaller than the number of submits while typing fast.
  std::uint64_t completed() const { return completed_.load(); }

 private:
  // A generation between its steps: worker thread only (the flags the UI reads are below).
  struct ActiveGeneration {
    ComputeJob job;  // keeps the model and the backend alive while the generator uses them
    std::unique_ptr<Generator> generator;
    GenerationState state;
  };
  void loop();
  void run_job(int slot, ComputeJob job);
  void run_step(int slot);
  void publish(int slot, std::shared_ptr<ComputeResult> result);
  void publish_probe(int slot, std::shared_ptr<ProbeResult> result);

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::array<std::optional<ComputeJob>, kWorkerSlots> pending_;
  std::array<bool, kWorkerSlots> running_{};
  std::array<bool, kWorkerSlots> generating_{};      // an ActiveGeneration exists or is pending
  std::array<bool, kWorkerSlots> stop_requested_{};  // stop_generation() since the last step
  std::array<std::optional<ActiveGeneration>, kWorkerSlots> active_;  // worker thread only
  bool stop_ = false;
  std::array<std::atomic<std::shared_ptr<const ComputeResult>>, kWorkerSlots> results_;
  std::atomic<std::uint64_t> completed_{0};
  std::array<std::optional<ProbeJob>, kSlots> probe_pending_;
  std::array<bool, kSlots> probe_running_{};
  std::array<bool, kSlots> probe_stepping_{};      // its runner has more of an effect map to do
  std::array<ProbeRunner, kSlots> probe_runners_;  // worker thread only
  std::array<std::atomic<std::shared_ptr<const ProbeResult>>, kSlots> probe_results_;
  PublishHook on_publish_;
  int last_slot_ = kWorkerSlots - 1;  // worker thread only
  std::thread thread_;
};

}  // namespace attnscope
