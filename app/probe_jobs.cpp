#include "app/probe_jobs.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "core/util/error.h"

namespace attnscope {

namespace {
constexpr int kNextTokens = 8;         // rows of the next-token panel from each run
constexpr int kLensTokens = 5;         // top tokens per layer of the lens
constexpr std::size_t kAnswers = 256;  // cached next-token/lens answers per text
}  // namespace

std::string interventions_key(const Interventions& iv) {
  std::string key;
  for (const HeadRef& h : iv.ablate)
    key += std::to_string(h.layer) + "." + std::to_string(h.head) + ",";
  key += "|";
  key += ablation_mode_name(iv.ablate_mode);
  key += "|";
  for (const EdgeKnockout& k : iv.knockout) {
    key += std::to_string(k.layer) + "." + std::to_string(k.head) + ":" + std::to_string(k.query) +
           ">" + std::to_string(k.key) + ",";
  }
  return key;
}

void ProbeRunner::reset() {
  probe_.reset();
  model_.reset();
  backend_.reset();
  text_.clear();
  current_.reset();
  current_key_.clear();
  next_layer_ = -1;
  answers_.clear();
}

std::string ProbeRunner::effects_key(const ProbeJob& job, int at, int target) const {
  return std::to_string(reinterpret_cast<std::uintptr_t>(job.model.get())) + "/" +
         std::to_string(reinterpret_cast<std::uintptr_t>(job.backend.get())) + "/" +
         std::to_string(at) + "/" + std::to_string(target) + "/" + job.text;
}

std::shared_ptr<ProbeResult> ProbeRunner::start(const ProbeJob& job) {
  auto result = std::make_shared<ProbeResult>();
  result->id = job.id;
  try {
    const Intervenable* iv_model = job.model ? intervenable(*job.model) : nullptr;
    if (!iv_model || !job.backend)
      throw std::runtime_error("this model cannot be intervened on (decoders can)");
    if (!probe_ || job.model != model_ || job.backend != backend_ || job.text != text_) {
      reset();
      probe_ = iv_model->probe(job.text, *job.backend);  // the clean run, once per text
      model_ = job.model;
      backend_ = job.backend;
      text_ = job.text;
    }
    Probe& probe = *probe_;
    const int last = static_cast<int>(probe.tokens().size()) - 1;
    const int at = job.at < 0 ? last : std::min(job.at, last);
    result->at = at;
    result->intervened = !job.interventions.empty();
    const std::string key = std::to_string(at) + "#" + interventions_key(job.interventions);
    auto found = answers_.find(key);
    if (found == answers_.end()) {
      if (answers_.size() >= kAnswers) answers_.clear();
      Answer a;
      const RowVector before_logits = probe.logits({}, at);
      const RowVector after_logits =
          job.interventions.empty() ? before_logits : probe.logits(job.interventions, at);
      const std::vector<double> before = log_softmax(before_logits),
                                after = log_softmax(after_logits);
      std::vector<int> ids;
      for (const TokenProbability& t : top_tokens(probe, before_logits, kNextTokens))
        ids.push_back(t.id);
      for (const TokenProbability& t : top_tokens(probe, after_logits, kNextTokens))
        if (std::find(ids.begin(), ids.end(), t.id) == ids.end()) ids.push_back(t.id);
      for (int id : ids) {
        const auto i = static_cast<std::size_t>(id);
        a.next.push_back({id, probe.token_text(id), std::exp(before[i]), std::exp(after[i]),
                          after[i] - before[i]});
      }
      for (std::size_t i = 0; i < before.size(); ++i) {
        const double p = std::exp(before[i]);
        if (p > 0.0) a.kl += p * (before[i] - after[i]);
      }
      a.kl = std::max(0.0, a.kl);
      const Matrix lens = probe.lens(at);
      for (Eigen::Index r = 0; r < lens.rows(); ++r)
        a.lens.push_back(top_tokens(probe, lens.row(r), kLensTokens));
      found = answers_.emplace(key, std::move(a)).first;
    }
    result->next = found->second.next;
    result->kl = found->second.kl;
    result->lens = found->second.lens;

    if (job.effects) {
      const int e_at = job.effects_at < 0 ? last : std::min(job.effects_at, last);
      int target = job.target;
      const RowVector clean_logits = probe.logits({}, e_at);
      const std::vector<double> clean = log_softmax(clean_logits);
      if (target < 0) target = top_tokens(probe, clean_logits, 1).front().id;
      if (target >= probe.vocab())
        throw UsageError("target id " + std::to_string(target) + " is outside the vocabulary (0-" +
                         std::to_string(probe.vocab() - 1) + ")");
      const std::string ekey = effects_key(job, e_at, target);
      result->effects = true;
      result->effects_at = e_at;
      const double lp = clean[static_cast<std::size_t>(target)];
      result->target = {target, probe.token_text(target), lp, std::exp(lp)};
      if (!job.interventions.empty())
        result->target_after = std::exp(
            log_softmax(probe.logits(job.interventions, e_at))[static_cast<std::size_t>(target)]);
      if (current_ && current_->effects && ekey == current_key_) {
        result->effect = current_->effect;  // carried over: the map goes on where it was
        result->dla = current_->dla;
        result->effects_done = current_->effects_done;
      } else {
        result->effect = Matrix::Constant(probe.layers(), probe.heads(),
                                          std::numeric_limits<float>::quiet_NaN());
        result->dla = probe.direct_logit_attribution(target, e_at);
        next_layer_ = probe.layers() - 1;
      }
      current_key_ = ekey;
    } else {
      next_layer_ = -1;
      current_key_.clear();
    }
  } catch (const std::exception& e) {
    result = std::make_shared<ProbeResult>();
    result->id = job.id;
    result->error = e.what();
    next_layer_ = -1;
    current_key_.clear();
  }
  current_ = result;
  return std::make_shared<ProbeResult>(*result);
}

std::shared_ptr<ProbeResult> ProbeRunner::step() {
  if (!stepping() || !probe_) return nullptr;
  ProbeResult& r = *current_;
  try {
    const int l = next_layer_;
    for (int h = 0; h < probe_->heads(); ++h)
      r.effect(l, h) = static_cast<float>(probe_->head_effect(r.target.id, r.effects_at, {l, h}));
    --next_layer_;
    r.effects_done = static_cast<double>(probe_->layers() - 1 - next_layer_) / probe_->layers();
  } catch (const std::exception& e) {
    r.error = e.what();
    next_layer_ = -1;
  }
  return std::make_shared<ProbeResult>(r);
}

}  // namespace attnscope
