// The window's side of the interventions (issue 27): the worker's probe jobs (app/probe_jobs.h)
// give the Next token panel's before → after, its KL divergence and the logit lens from the same
// Probe the command line uses, checked here against that Probe's own numbers (themselves checked
// against the float64 reference in intervention_test); the effect map fills in one layer per turn
// and ends equal to Probe::head_effects; a trace computed under interventions has the cut edge at
// 0 with its row renormalised, and a cut the model refuses keeps the previous trace. Model: the
// built-in `tiny`; the lesson model for the error.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "app/worker.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"

namespace attnscope {
namespace {

using namespace std::chrono_literals;

constexpr const char* kText = "Seven quiet owls watched the river. Seven quiet owls watched the";

struct Tiny {
  std::shared_ptr<const Model> model = open_model("tiny");
  std::shared_ptr<Backend> backend = std::shared_ptr<Backend>(make_cpu_backend());
  std::unique_ptr<Probe> probe = intervenable(*model)->probe(kText, *backend);
};

ProbeJob job_of(const Tiny& t, const Interventions& iv, int at) {
  ProbeJob job;
  job.model = t.model;
  job.backend = t.backend;
  job.text = kText;
  job.interventions = iv;
  job.at = at;
  return job;
}

template <class F>
bool wait_for(F done) {
  for (auto start = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - start < 60s; std::this_thread::sleep_for(1ms))
    if (done()) return true;
  return false;
}

TEST(ProbeRunner, NextTokenBeforeAfterAndKlAreTheProbesNumbers) {
  Tiny t;
  const int L = t.probe->layers(), T = static_cast<int>(t.probe->tokens().size());
  Interventions iv;
  iv.ablate = {{L - 1, 0}, {L - 1, 1}};
  for (const int at : {T - 1, 3}) {
    ProbeRunner runner;
    const auto r = runner.start(job_of(t, iv, at));
    ASSERT_TRUE(r->error.empty()) << r->error;
    EXPECT_EQ(r->at, at);
    EXPECT_TRUE(r->intervened);
    const std::vector<double> before = log_softmax(t.probe->logits({}, at));
    const std::vector<double> after = log_softmax(t.probe->logits(iv, at));
    ASSERT_GE(r->next.size(), 8u);
    for (const NextTokenRow& row : r->next) {
      const auto i = static_cast<std::size_t>(row.id);
      EXPECT_NEAR(row.before, std::exp(before[i]), 1e-9);
      EXPECT_NEAR(row.after, std::exp(after[i]), 1e-9);
      EXPECT_NEAR(row.delta_logprob, after[i] - before[i], 1e-9);
    }
    // The first rows are the clean top, by probability.
    for (std::size_t k = 1; k < 8; ++k) EXPECT_GE(r->next[k - 1].before, r->next[k].before);
    double kl = 0;
    for (std::size_t i = 0; i < before.size(); ++i)
      kl += std::exp(before[i]) * (before[i] - after[i]);
    EXPECT_NEAR(r->kl, kl, 1e-9);
    EXPECT_GT(r->kl, 0.0);
    // The lens: the embedding and every block; its last row is the clean prediction.
    ASSERT_EQ(static_cast<int>(r->lens.size()), L + 1);
    EXPECT_EQ(r->lens.back().front().id, r->next.front().id);
    EXPECT_NEAR(r->lens.back().front().probability, r->next.front().before, 1e-5);
  }
}

TEST(ProbeRunner, WithoutInterventionsBeforeEqualsAfter) {
  Tiny t;
  ProbeRunner runner;
  const auto r = runner.start(job_of(t, {}, -1));
  ASSERT_TRUE(r->error.empty()) << r->error;
  EXPECT_FALSE(r->intervened);
  EXPECT_EQ(r->at, static_cast<int>(t.probe->tokens().size()) - 1);
  EXPECT_EQ(r->kl, 0.0);
  for (const NextTokenRow& row : r->next) EXPECT_EQ(row.before, row.after);
}

TEST(ProbeRunner, EffectMapFillsInLayerByLayerAndEqualsTheProbes) {
  Tiny t;
  ProbeRunner runner;
  ProbeJob job = job_of(t, {}, -1);
  job.effects = true;
  const auto first = runner.start(job);
  ASSERT_TRUE(first->error.empty()) << first->error;
  const int L = t.probe->layers(), H = t.probe->heads();
  const int target = first->target.id;
  EXPECT_EQ(target, first->next.front().id);  // the clean top prediction
  EXPECT_EQ(first->effects_done, 0.0);
  EXPECT_TRUE(first->effect.array().isNaN().all());
  const Matrix dla = t.probe->direct_logit_attribution(target);
  EXPECT_LT((first->dla - dla).cwiseAbs().maxCoeff(), 1e-6f);
  std::shared_ptr<ProbeResult> r = first;
  for (int step = 0; runner.stepping(); ++step) {
    r = runner.step();
    // The last layers first: after step s, layers L-1 … L-1-s are filled in.
    EXPECT_FALSE(std::isnan(r->effect(L - 1 - step, 0)));
    if (L - 2 - step >= 0) {
      EXPECT_TRUE(std::isnan(r->effect(L - 2 - step, 0)));
    }
    // A newer job for another position of the same map carries the map over.
    if (step == 0) {
      ProbeJob moved = job;
      moved.at = 2;
      const auto carried = runner.start(moved);
      EXPECT_EQ(carried->effects_done, r->effects_done);
      EXPECT_EQ(carried->at, 2);
    }
  }
  EXPECT_EQ(r->effects_done, 1.0);
  const Matrix effect = t.probe->head_effects(target);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) EXPECT_NEAR(r->effect(l, h), effect(l, h), 1e-5) << l << "." << h;
  // Another target starts a new map.
  job.target = r->next[1].id;
  const auto other = runner.start(job);
  EXPECT_EQ(other->effects_done, 0.0);
  EXPECT_TRUE(runner.stepping());
}

TEST(ProbeRunner, ModelsThatCannotBeIntervenedOnGiveAnErrorLine) {
  ProbeRunner runner;
  ProbeJob job;
  job.model = open_model("lesson");
  job.backend = std::shared_ptr<Backend>(make_cpu_backend());
  job.text = "the bank of the river";
  const auto r = runner.start(job);
  EXPECT_NE(r->error.find("cannot be intervened on"), std::string::npos) << r->error;
  EXPECT_FALSE(runner.stepping());
}

TEST(WorkerInterventions, TheTraceIsTheIntervenedRunAndARefusedCutKeepsThePrevious) {
  Tiny t;
  Worker worker;
  ComputeJob job{t.model, t.backend, kText, 1, std::nullopt};
  job.interventions.knockout = {{1, -1, 5, 1}};
  worker.submit(0, job);
  ASSERT_TRUE(wait_for([&] { return worker.result(0) && worker.result(0)->id == 1; }));
  const auto r = worker.result(0);
  ASSERT_TRUE(r->error.empty()) << r->error;
  ASSERT_EQ(r->interventions.knockout.size(), 1u);
  std::vector<std::vector<Matrix>> expected;
  t.probe->logits(job.interventions, 0, &expected);
  for (int h = 0; h < r->trace->heads(); ++h) {
    const Matrix& w = r->trace->attention[1][static_cast<std::size_t>(h)];
    EXPECT_EQ(w(5, 1), 0.0f);
    EXPECT_NEAR(w.row(5).sum(), 1.0f, 1e-5f);
    EXPECT_LT((w - expected[1][static_cast<std::size_t>(h)]).cwiseAbs().maxCoeff(), 1e-5f);
  }
  // Query 0 sees only key 0: cutting it is refused, the previous trace stays.
  job.id = 2;
  job.interventions.knockout = {{0, -1, 0, 0}};
  worker.submit(0, job);
  ASSERT_TRUE(wait_for([&] { return worker.result(0)->id == 2; }));
  const auto refused = worker.result(0);
  EXPECT_TRUE(refused->interventions_refused);
  EXPECT_NE(refused->error.find("query 0"), std::string::npos) << refused->error;
  EXPECT_EQ(refused->trace, r->trace);
  EXPECT_EQ(refused->interventions.knockout.size(), 1u);  // the trace's own
}

TEST(WorkerInterventions, ProbeJobsPublishAndTheEffectMapCompletes) {
  Tiny t;
  Worker worker;
  ProbeJob job = job_of(t, {}, -1);
  job.effects = true;
  job.id = 7;
  worker.submit_probe(0, job);
  ASSERT_TRUE(wait_for([&] { return !worker.probing(0); }));
  const auto r = worker.probe_result(0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, 7u);
  EXPECT_EQ(r->effects_done, 1.0);
  EXPECT_FALSE(r->effect.array().isNaN().any());
}

}  // namespace
}  // namespace attnscope
