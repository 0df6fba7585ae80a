#pragma once
// The interventions' numbers (core/model/intervention.h) on a second backend against the CPU:
// Probe::logits and its weights under zero and mean ablation and edge knockouts (one head and every
// head), the logit lens, head effects, direct logit attribution, and Intervenable::run_intervened's
// weights, whose knocked-out edges are exactly 0 in rows that sum to 1 on both backends. Both sides
// run in float32, so the tolerances are those of the decoders' equivalence tests: 1e-4 on weights,
// 1e-4 · (1 + the largest |value|) on logits and what is computed from them. Each check prints its
// worst difference. The test is here too: tests/gl/gl_probe_equivalence_test.cpp and
// tests/gpu/probe_equivalence_test.cpp each define backend_under_test() and instantiate it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_probe.h"
#include "core/model/intervention.h"
#include "core/model/registry.h"
#include "tests/common/decoder_fixture.h"
#include "tests/common/decoder_fixture_table.h"
#include "tests/common/golden.h"

namespace attnscope::test {

// run_intervened's text: longer than every fixture's sliding window (3 to 5 tokens).
inline constexpr const char* kProbeText =
    "Once upon a time a little fox found a red ball in the garden, and she played with it all day.";

inline std::vector<std::string> probe_models() {
  // Every decoder fixture (tests/common/decoder_fixture_table.h) and the built-in models.
  return plus(decoder_fixtures(), {"tiny-model", "stories260K"});
}

inline std::filesystem::path probe_model_folder(const std::string& name) {
  namespace fs = std::filesystem;
  if (name == "tiny-model") return fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "tiny_model";
  // The built-in real model (spec `stories`).
  if (name == "stories260K") return fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "stories260K";
  return fs::path(ATTNSCOPE_FIXTURES) / name;
}

inline std::string probe_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}

// One network's clean run of 21 token ids on the CPU (`want`) and on the backend under test
// (`got`): ids, not text, so that no tokenizer is loaded (the Gemma fixtures' takes seconds); only
// run_intervened, which takes text, opens the model. 21: longer than every fixture's sliding window
// (3 to 5), so the windowed layers mask. The probes, declared last, are destroyed first: they hold
// references to the network and the backends.
struct ProbePair {
  ProbePair(std::string model, std::filesystem::path dir, std::shared_ptr<Backend> backend)
      : name(std::move(model)),
        folder(std::move(dir)),
        other(std::move(backend)),
        net(load_decoder_folder(folder)) {
    Tokens tokens(21);
    for (int i = 0; i < 21; ++i) tokens[i].id = (i * 7919 + 29) % net.spec().vocab;
    want = make_decoder_probe(net, tokens, *cpu, nullptr);
    got = make_decoder_probe(net, tokens, *other, nullptr);
    layers = want->layers();
    heads = want->heads();
  }
  std::string name;
  std::filesystem::path folder;
  std::shared_ptr<Backend> cpu = make_cpu_backend(CpuPrecision::kFloat), other;
  DecoderNetwork net;
  std::unique_ptr<Probe> want, got;
  int layers = 0, heads = 0, last = 20, mid = 10;
};

// The interventions compared, named, for a text of `tokens` tokens. The cut edges are (q, q - 1):
// inside every sliding window, so never a no-op, and the row keeps key q. Layer 0's ablations
// reach every later layer.
inline std::vector<std::pair<std::string, Interventions>> probe_cases(int layers, int heads,
                                                                      int tokens) {
  const int L = layers, H = heads, q = tokens - 1, m = tokens / 2;
  return {{"clean", {}},
          {"zero-ablate", {{{0, H - 1}, {L - 1, 0}}, AblationMode::kZero, {}}},
          {"mean-ablate", {{{0, H - 1}, {L - 1, 0}}, AblationMode::kMean, {}}},
          {"knock-one-head", {{}, AblationMode::kZero, {{0, H - 1, q, q - 1}}}},
          {"knock-every-head", {{}, AblationMode::kZero, {{L - 1, -1, q, q - 1}}}},
          {"mean-and-knocks",
           {{{0, 0}}, AblationMode::kMean, {{0, -1, m, m - 1}, {L - 1, 0, q, q - 1}}}}};
}

// 1e-4 · (1 + the largest |value| of the CPU's side).
inline float scaled_tolerance(const Matrix& want) {
  return 1e-4f * (1.0f + want.cwiseAbs().maxCoeff());
}

inline float worst_weights_diff(const std::vector<std::vector<Matrix>>& want,
                                const std::vector<std::vector<Matrix>>& got) {
  EXPECT_EQ(got.size(), want.size());
  float worst = 0;
  for (std::size_t l = 0; l < want.size() && l < got.size(); ++l) {
    EXPECT_EQ(got[l].size(), want[l].size()) << "layer " << l;
    for (std::size_t h = 0; h < want[l].size() && h < got[l].size(); ++h)
      worst = std::max(worst, max_abs_diff(got[l][h], want[l][h]));
  }
  return worst;
}

inline void report(const ProbePair& p, const std::string& what, float worst) {
  std::cout << p.name << ": " << what << ", worst difference " << worst << "\n";
}

// Probe::logits at the last and the middle position, and the weights it hands back.
inline void expect_logits_match(ProbePair& p) {
  float worst_logits = 0, worst_weights = 0;
  const Matrix clean = p.want->logits({}, p.last);
  for (const auto& [name, iv] : probe_cases(p.layers, p.heads, p.last + 1))
    for (int at : {p.last, p.mid}) {
      SCOPED_TRACE(name + " at " + std::to_string(at));
      std::vector<std::vector<Matrix>> want_w, got_w;
      const Matrix want = p.want->logits(iv, at, &want_w);
      const Matrix got = p.got->logits(iv, at, &got_w);
      const float d = max_abs_diff(got, want), w = worst_weights_diff(want_w, got_w);
      EXPECT_LE(d, scaled_tolerance(want)) << "logits";
      EXPECT_LE(w, 1e-4f) << "attention";
      // An ablation moves the prediction (one cut edge of these tiny models may move it by less
      // than the backends differ; the weights and expect_edges_cut show those).
      if (at == p.last && !iv.ablate.empty()) {
        EXPECT_GT(max_abs_diff(want, clean), 1e-5f) << "a no-op";
      }
      worst_logits = std::max(worst_logits, d);
      worst_weights = std::max(worst_weights, w);
    }
  report(p, "logits under interventions", worst_logits);
  report(p, "attention under interventions", worst_weights);
}

inline void expect_lens_matches(ProbePair& p) {
  float worst = 0;
  for (int at : {p.last, p.mid, 0}) {
    const Matrix want = p.want->lens(at), got = p.got->lens(at);
    ASSERT_EQ(want.rows(), p.layers + 1);
    const float d = max_abs_diff(got, want);
    EXPECT_LE(d, scaled_tolerance(want)) << "lens at " << at;
    worst = std::max(worst, d);
  }
  report(p, "logit lens", worst);
}

// The CPU's clean prediction at the last position: a target the heads matter for.
inline int probe_target(ProbePair& p) {
  const Matrix clean = p.want->logits({}, p.last);
  Eigen::Index id = 0;
  clean.row(0).maxCoeff(&id);
  return static_cast<int>(id);
}

// head_effects (every head, last position) and head_effect at the middle position, in nats.
inline void expect_head_effects_match(ProbePair& p) {
  const int target = probe_target(p);
  const float tol = scaled_tolerance(p.want->logits({}, p.last));
  const Matrix want = p.want->head_effects(target), got = p.got->head_effects(target);
  ASSERT_EQ(want.rows(), p.layers);
  ASSERT_FALSE(want.hasNaN());
  float worst = max_abs_diff(got, want);
  EXPECT_LE(worst, tol) << "head_effects for target " << target;
  for (const HeadRef head : {HeadRef{0, 0}, HeadRef{p.layers - 1, p.heads - 1}}) {
    const double w = p.want->head_effect(target, p.mid, head);
    const double g = p.got->head_effect(target, p.mid, head);
    EXPECT_NEAR(g, w, tol) << "head_effect " << head.layer << "." << head.head << " at " << p.mid;
    worst = std::max(worst, static_cast<float>(std::abs(g - w)));
  }
  report(p, "head effects", worst);
}

inline void expect_direct_logit_attribution_matches(ProbePair& p) {
  const int target = probe_target(p);
  float worst = 0;
  for (int at : {-1, p.mid}) {
    const Matrix want = p.want->direct_logit_attribution(target, at);
    const Matrix got = p.got->direct_logit_attribution(target, at);
    ASSERT_EQ(want.rows(), p.layers);
    const float d = max_abs_diff(got, want);
    EXPECT_LE(d, scaled_tolerance(want)) << "dla at " << at;
    worst = std::max(worst, d);
  }
  report(p, "direct logit attribution", worst);
}

// Every knocked-out edge of `iv` is exactly 0 in `trace` and its layer's rows still sum to 1.
inline void expect_edges_cut(const AttentionTrace& trace, const Interventions& iv) {
  for (const EdgeKnockout& k : iv.knockout)
    for (std::size_t h = 0; h < trace.attention[k.layer].size(); ++h) {
      if (k.head >= 0 && static_cast<std::size_t>(k.head) != h) continue;
      const Matrix& w = trace.attention[k.layer][h];
      EXPECT_EQ(w(k.query, k.key), 0.0f) << trace.backend << " layer " << k.layer << " head " << h;
      for (Eigen::Index i = 0; i < w.rows(); ++i)
        EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f)
            << trace.backend << " layer " << k.layer << " head " << h << " row " << i;
    }
}

// The traces that the views draw, of a text, under each intervention, on both backends.
inline void expect_run_intervened_matches(ProbePair& p) {
  const std::shared_ptr<const Model> model = open_model(p.folder.string());
  const Intervenable* intervenable = attnscope::intervenable(*model);
  ASSERT_TRUE(intervenable) << p.name;
  const int tokens = static_cast<int>(model->tokenize(kProbeText).size());
  ASSERT_GE(tokens, 6) << p.name;
  float worst = 0;
  for (const auto& [name, iv] : probe_cases(p.layers, p.heads, tokens)) {
    SCOPED_TRACE(name);
    const AttentionTrace want = intervenable->run_intervened(kProbeText, *p.cpu, iv);
    const AttentionTrace got = intervenable->run_intervened(kProbeText, *p.other, iv);
    ASSERT_EQ(want.attention.size(), static_cast<std::size_t>(p.layers)) << "weights not kept";
    ASSERT_EQ(got.tokens.size(), static_cast<std::size_t>(tokens));
    const float d = worst_weights_diff(want.attention, got.attention);
    EXPECT_LE(d, 1e-4f);
    worst = std::max(worst, d);
    expect_edges_cut(want, iv);
    expect_edges_cut(got, iv);
  }
  report(p, "run_intervened's attention", worst);
}

// Defined by each test file: its backend, or null with why (and whether that is a skip).
struct BackendUnderTest {
  std::shared_ptr<Backend> backend;
  std::string why;
  bool skip_when_missing = false;
};
BackendUnderTest backend_under_test();

class ProbeEquivalence : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    BackendUnderTest b = backend_under_test();
    if (!b.backend && b.skip_when_missing) GTEST_SKIP() << b.why;
    ASSERT_TRUE(b.backend) << b.why;
    const std::filesystem::path folder = probe_model_folder(GetParam());
    pair_ = std::make_unique<ProbePair>(GetParam(), folder, b.backend);
  }
  std::unique_ptr<ProbePair> pair_;
};

// One test per model, not per check: every test is a process under ctest, and each opens the
// backend (a CUDA probe without a device takes ~0.6 s) and the model.
TEST_P(ProbeEquivalence, InterventionsLensEffectsAndTracesMatchTheCpu) {
  const std::pair<const char*, void (*)(ProbePair&)> checks[] = {
      {"Probe::logits", expect_logits_match},
      {"Probe::lens", expect_lens_matches},
      {"Probe::head_effects", expect_head_effects_match},
      {"Probe::direct_logit_attribution", expect_direct_logit_attribution_matches},
      {"Intervenable::run_intervened", expect_run_intervened_matches}};
  for (const auto& [what, check] : checks) {
    SCOPED_TRACE(what);
    check(*pair_);
  }
}

}  // namespace attnscope::test
