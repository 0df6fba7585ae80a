#include "app/worker.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>

#include "core/analysis/value_weighting.h"
#include "core/trace/trace_check.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
// Testing aid: ATTNSCOPE_TEST_COMPUTE_DELAY_MS makes every job that much slower, so a test can
// show that typing never waits for the model and that queued edits coalesce.
int test_delay_ms() {
  const char* v = std::getenv("ATTNSCOPE_TEST_COMPUTE_DELAY_MS");
  return v ? std::clamp(std::atoi(v), 0, 10000) : 0;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
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

// An encoder–decoder: a job is a translation (its source and optional target), not run(text).
bool translates(const Model& model) {
  return model.info().capabilities.cross_attention;
}

// The weighting a job asks for, before anything reads the trace (summaries included).
void apply_job_weighting(AttentionTrace& trace, const std::string& weighting) {
  if (weighting != kRawWeighting && !trace.value_norms.empty()) apply_weighting(trace, weighting);
}
}  // namespace

Worker::Worker(PublishHook on_publish)
    : on_publish_(std::move(on_publish)), thread_([this] { loop(); }) {}

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
    // Newest wins: an unstarted older job is dropped, and a generation in progress ends before
    // its next step (the loop sees the pending job first).
    generating_[slot] = job.generate.has_value();
    stop_requested_[slot] = false;
    pending_[slot] = std::move(job);
  }
  wake_.notify_one();
}

bool Worker::busy(int slot) const {
  std::lock_guard lock(mutex_);
  return pending_[slot].has_value() || running_[slot] || generating_[slot];
}

bool Worker::generating(int slot) const {
  std::lock_guard lock(mutex_);
  return generating_[slot];
}

void Worker::stop_generation(int slot) {
  {
    std::lock_guard lock(mutex_);
    if (!generating_[slot]) return;
    stop_requested_[slot] = true;
  }
  wake_.notify_one();
}

void Worker::publish(int slot, std::shared_ptr<ComputeResult> result) {
  std::shared_ptr<const ComputeResult> published = std::move(result);
  results_[slot].store(published);
  if (on_publish_) on_publish_(slot, std::move(published));
}

void Worker::submit_probe(int slot, ProbeJob job) {
  {
    std::lock_guard lock(mutex_);
    probe_pending_[slot] = std::move(job);
  }
  wake_.notify_one();
}

bool Worker::probing(int slot) const {
  std::lock_guard lock(mutex_);
  return probe_pending_[slot].has_value() || probe_running_[slot] || probe_stepping_[slot];
}

void Worker::publish_probe(int slot, std::shared_ptr<ProbeResult> result) {
  if (result) probe_results_[slot].store(std::shared_ptr<const ProbeResult>(std::move(result)));
}

void Worker::loop() {
  // What a turn of the loop does, most urgent first: a trace (an edit, a new model), a probe job
  // (the focus moved), a generation step, one layer of an effect map.
  enum class Turn { kJob, kProbe, kStep, kEffects };
  for (;;) {
    ComputeJob job;
    ProbeJob probe_job;
    int slot = -1;
    Turn turn = Turn::kJob;
    {
      std::unique_lock lock(mutex_);
      // Slots take turns: the first one after the slot computed last that has work of a kind.
      const auto next_slot = [&](int count, const auto& has) {
        for (int k = 1; k <= kWorkerSlots; ++k) {
          const int s = (last_slot_ + k) % kWorkerSlots;
          if (s < count && has(s)) return s;
        }
        return -1;
      };
      const auto has_pending = [&](int s) { return pending_[s].has_value(); };
      const auto has_probe = [&](int s) { return probe_pending_[s].has_value(); };
      const auto has_active = [&](int s) { return active_[s].has_value(); };
      const auto has_effects = [&](int s) { return probe_stepping_[s]; };
      const auto choose = [&] {
        if ((slot = next_slot(kWorkerSlots, has_pending)) >= 0) return turn = Turn::kJob, true;
        if ((slot = next_slot(kSlots, has_probe)) >= 0) return turn = Turn::kProbe, true;
        if ((slot = next_slot(kWorkerSlots, has_active)) >= 0) return turn = Turn::kStep, true;
        if ((slot = next_slot(kSlots, has_effects)) >= 0) return turn = Turn::kEffects, true;
        return false;
      };
      wake_.wait(lock, [&] { return stop_ || choose(); });
      if (stop_) return;
      if (turn == Turn::kJob) {
        job = std::move(*pending_[slot]);
        pending_[slot].reset();
        active_[slot].reset();  // a newer job of this slot ends its generation
        running_[slot] = true;
      } else if (turn == Turn::kProbe) {
        probe_job = std::move(*probe_pending_[slot]);
        probe_pending_[slot].reset();
        probe_running_[slot] = true;
      } else if (turn == Turn::kStep) {
        running_[slot] = true;  // generations take turns one step at a time: both sentences move
      } else {
        probe_running_[slot] = true;
      }
    }
    last_slot_ = slot;
    if (turn == Turn::kJob || turn == Turn::kStep) {
      if (turn == Turn::kStep)
        run_step(slot);
      else
        run_job(slot, std::move(job));
      completed_.fetch_add(1);
      std::lock_guard lock(mutex_);
      running_[slot] = false;
      if (!active_[slot] && !(pending_[slot] && pending_[slot]->generate))
        generating_[slot] = false;
      continue;
    }
    ProbeRunner& runner = probe_runners_[static_cast<std::size_t>(slot)];
    publish_probe(slot, turn == Turn::kProbe ? runner.start(probe_job) : runner.step());
    std::lock_guard lock(mutex_);
    probe_running_[slot] = false;
    probe_stepping_[slot] = runner.stepping();
  }
}

void Worker::run_job(int slot, ComputeJob job) {
  auto result = std::make_shared<ComputeResult>();
  result->id = job.id;
  result->text = job.text;
  if (auto previous = results_[slot].load()) {
    result->trace = previous->trace;
    result->interventions = previous->interventions;
  }
  try {
    if (!job.model) throw std::runtime_error("no model is loaded");
    auto start = std::chrono::steady_clock::now();
    if (static const int delay = test_delay_ms(); delay > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    if (job.generate) {
      // The prompt's forward pass (prefill); the steps follow, one per turn of the loop.
      ActiveGeneration g;
      g.generator = job.model->start_generation(job.text, *job.backend, *job.generate);
      auto trace = std::make_shared<AttentionTrace>(g.generator->trace());
      check_attention_rows(*trace);
      apply_job_weighting(*trace, job.weighting);
      g.state.prompt_tokens = static_cast<int>(trace->tokens.size());
      g.state.max_new_tokens = job.generate->max_new_tokens;
      g.state.step_ms = ms_since(start);
      if (trace->compute_ms <= 0.0) trace->compute_ms = g.state.step_ms;
      g.state.running = !g.generator->done();
      result->trace = std::move(trace);
      result->generation = g.state;
      g.job = std::move(job);
      std::lock_guard lock(mutex_);
      if (g.state.running && !stop_requested_[slot] && !pending_[slot]) {
        active_[slot] = std::move(g);
      } else if (result->generation->running) {
        // Stopped (or replaced by a newer job) during the prefill: no step will follow.
        result->generation->running = false;
        result->generation->stopped = true;
      }
      stop_requested_[slot] = false;
    } else {
      const Intervenable* iv_model = intervenable(*job.model);
      if (iv_model && !job.interventions.knockout.empty()) {
        // Edges cut between positions this text does not have wait (unapplied) for them.
        const int n = static_cast<int>(job.model->tokenize(job.text).size());
        std::erase_if(job.interventions.knockout,
                      [n](const EdgeKnockout& k) { return k.query >= n || k.key >= n; });
      }
      const bool intervene = iv_model && !job.interventions.empty();
      AttentionTrace computed;
      try {
        computed = intervene ? iv_model->run_intervened(job.text, *job.backend, job.interventions)
                   : translates(*job.model)
                       ? job.model->run_translation(job.text, job.target, *job.backend)
                       : job.model->run(job.text, *job.backend);
      } catch (const UsageError&) {
        result->interventions_refused = intervene;
        throw;
      }
      auto trace = std::make_shared<AttentionTrace>(std::move(computed));
      result->interventions = intervene ? job.interventions : Interventions{};
      check_attention_rows(*trace);  // a broken model's NaN rows never reach a view
      apply_job_weighting(*trace, job.weighting);
      if (trace->compute_ms <= 0.0) trace->compute_ms = ms_since(start);
      result->trace = std::move(trace);
      publish_meaning_shifts(*result);
      if (job.summarize)
        result->head_summaries = std::make_shared<const std::vector<std::vector<HeadSummary>>>(
            summarize_trace(*result->trace));
    }
  } catch (const std::exception& e) {
    result->error = e.what();
  } catch (...) {
    result->error = "the model failed with an unknown error";
  }
  publish(slot, std::move(result));
}

void Worker::run_step(int slot) {
  ActiveGeneration& g = *active_[slot];
  auto result = std::make_shared<ComputeResult>();
  result->id = g.job.id;
  result->text = g.job.text;
  bool stop = false;
  {
    std::lock_guard lock(mutex_);
    stop = stop_requested_[slot];
    stop_requested_[slot] = false;
  }
  if (auto previous = results_[slot].load()) result->trace = previous->trace;
  if (stop) {
    g.state.running = false;
    g.state.stopped = true;
  } else {
    try {
      auto start = std::chrono::steady_clock::now();
      if (static const int delay = test_delay_ms(); delay > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));
      GenerationStep step = g.generator->step();
      auto trace = std::make_shared<AttentionTrace>(g.generator->trace());
      check_attention_rows(*trace);
      apply_job_weighting(*trace, g.job.weighting);
      g.state.step_ms = ms_since(start);
      trace->compute_ms = (result->trace ? result->trace->compute_ms : 0.0) + g.state.step_ms;
      ++g.state.steps;
      g.state.end_of_text = step.end_of_text;
      g.state.running = !g.generator->done();
      result->trace = std::move(trace);
    } catch (const std::exception& e) {
      result->error = e.what();
      g.state.running = false;
    }
  }
  result->generation = g.state;
  bool superseded = false;
  {
    std::lock_guard lock(mutex_);
    // A newer job of this slot may have arrived during the step: it replaces this generation, and
    // this last step is not published over the newer job's result.
    superseded = pending_[slot].has_value();
    if (!g.state.running || superseded) active_[slot].reset();
  }
  if (!superseded) publish(slot, std::move(result));
}

}  // namespace attnscope
