#pragma once
// What the window asks of a decoder besides its trace (issue 27): the next-token distribution at a
// position before and after the interventions, the logit lens there, and each head's effect and
// direct logit attribution. The worker (app/worker.h) runs these jobs on its one thread; the
// effect map, the long part, runs one layer per turn, so edits and the other sentence never wait
// behind it, and is published as it fills in.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/model/intervention.h"
#include "core/model/model.h"

namespace attnscope {

struct ProbeJob {
  std::shared_ptr<const Model> model;
  std::shared_ptr<Backend> backend;
  std::string text;
  Interventions interventions;  // the "after" of the next-token panel
  int at = -1;                  // the next-token panel's and the lens's position (-1: the last)
  // The model view's effect and dla: wanted, at which position (-1: the last), for which token
  // (-1: the clean top prediction there).
  bool effects = false;
  int effects_at = -1;
  int target = -1;
  std::uint64_t id = 0;
};

// One token of the next-token panel: its probability before and after the interventions.
struct NextTokenRow {
  int id = -1;
  std::string text;
  double before = 0.0, after = 0.0;  // probabilities
  double delta_logprob = 0.0;        // log after − log before
};

struct ProbeResult {
  std::uint64_t id = 0;
  std::string error;  // why the job failed (one line); the rest is empty then
  int at = -1;        // the position answered (resolved: never -1 once computed)
  bool intervened = false;
  // The clean top tokens, then any other token in the intervened run's top (by probability).
  std::vector<NextTokenRow> next;
  double kl = 0.0;  // KL(before ‖ after) over the whole vocabulary, in nats
  // The lens at `at`: row 0 the embedding output, row b + 1 after block b; each its top tokens.
  std::vector<std::vector<TokenProbability>> lens;
  // Effects (ProbeJob::effects): at effects_at, for target.
  bool effects = false;
  int effects_at = -1;
  TokenProbability target;
  double target_after = -1.0;  // its probability under the interventions (-1: none applied)
  Matrix effect;               // [layers x heads], NaN where not computed yet
  Matrix dla;                  // [layers x heads]
  double effects_done = 0.0;   // fraction of the effect map computed
};

// Runs ProbeJobs for one sentence on the worker thread, keeping the clean run of the newest text
// (Intervenable::probe) and the effect map in progress.
class ProbeRunner {
 public:
  // Answers `job` (next token, lens, dla and as much of the effect map as carried over from the
  // previous job with the same model, text, position and target). Never throws: a failure is
  // ProbeResult::error.
  std::shared_ptr<ProbeResult> start(const ProbeJob& job);
  // The effect map of the newest job is not complete: step() computes one more layer.
  bool stepping() const { return current_ && current_->effects && next_layer_ >= 0; }
  std::shared_ptr<ProbeResult> step();
  void reset();  // forgets everything (the worker is replacing the model)

 private:
  std::string effects_key(const ProbeJob& job, int at, int target) const;
  std::shared_ptr<const Model> model_;
  std::shared_ptr<Backend> backend_;  // the probe refers to it
  std::string text_;
  std::unique_ptr<Probe> probe_;
  std::shared_ptr<ProbeResult> current_;  // the newest result, copied for every publication
  std::string current_key_;               // its effect map's model, text, position and target
  int next_layer_ = -1;                   // the next layer of the effect map (from the last down)
  // Next token and lens by position and interventions: hovering back and forth computes once.
  struct Answer {
    std::vector<NextTokenRow> next;
    double kl = 0.0;
    std::vector<std::vector<TokenProbability>> lens;
  };
  std::map<std::string, Answer> answers_;
};

// "3.2,1.0|zero|2.-1:5>1" — equal for equal interventions (cache keys, change detection).
std::string interventions_key(const Interventions& iv);

}  // namespace attnscope
