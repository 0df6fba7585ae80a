// The decoder fixtures (tests/common/decoder_fixture_table.h: every family and GPT-2) and the
// built-in tiny trained model on the opengl backend against the CPU: every layer's and head's
// attention and the logits, for a whole sequence and then step by step through the KV cache (the
// query offset and sliding windows of the mask). The same model code runs on both backends, so only
// the ops may differ (and, through the CPU's own tests, the float64 PyTorch golden data holds).
// Runs in CI on llvmpipe; a missing OpenGL fails, never skips. The CPU keeps to float arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/hf/hub_cache.h"
#include "tests/common/decoder_fixture.h"
#include "tests/common/decoder_fixture_table.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

fs::path fixture_folder(const std::string& name) {
  if (name == "tiny")  // assets/tiny_model, beside tests/
    return fs::path(ATTNSCOPE_TEST_DATA).parent_path().parent_path() / "assets" / "tiny_model";
  return fs::path(ATTNSCOPE_FIXTURES) / name;
}

DecoderNetwork load_decoder(const std::string& name) {
  return test::load_decoder_folder(fixture_folder(name));
}

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return a.size() ? (a - b).cwiseAbs().maxCoeff() : 0.0f;
}

float worst_attention_diff(const DecoderOutputs& a, const DecoderOutputs& b, const DecoderSpec& s) {
  EXPECT_EQ(a.attention.size(), static_cast<std::size_t>(s.layers));
  EXPECT_EQ(b.attention.size(), static_cast<std::size_t>(s.layers));
  float worst = 0;
  for (int l = 0; l < s.layers && l < int(a.attention.size()) && l < int(b.attention.size()); ++l)
    for (int h = 0; h < s.heads; ++h)
      worst = std::max(worst, max_abs_diff(b.attention[l][h], a.attention[l][h]));
  return worst;
}

class DecoderOpenGlEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderOpenGlEquivalence, AttentionAndLogitsMatchTheCpu) {
  const OpenGlProbe probe = try_opengl_backend();
  ASSERT_TRUE(probe.backend) << "the opengl backend does not work here: " << probe.why;
  Backend& gl = *probe.backend;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  const DecoderNetwork net = load_decoder(GetParam());
  const DecoderSpec& s = net.spec();
  // 21 tokens: longer than every fixture's sliding window (3 to 5), so the windowed layers mask.
  std::vector<int> ids;
  for (int i = 0; i < 21; ++i) ids.push_back((i * 7919 + 29) % s.vocab);
  DecoderRequest all;
  all.all_logits = true;
  KvCache cpu_cache, gl_cache;
  const DecoderOutputs want = net.forward(ids, cpu_cache, *cpu, all);
  const DecoderOutputs got = net.forward(ids, gl_cache, gl, all);
  EXPECT_LE(worst_attention_diff(want, got, s), 1e-4f) << "attention";
  EXPECT_LE(max_abs_diff(got.logits, want.logits), 1e-4f * (1 + want.logits.cwiseAbs().maxCoeff()))
      << "logits";
  // Rows of a causal decoder's weights sum to 1 and never look ahead.
  const Matrix& w = got.attention[s.layers - 1][s.heads - 1];
  for (int i = 0; i < w.rows(); ++i) {
    EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f) << "row " << i;
    for (int j = i + 1; j < w.cols(); ++j) EXPECT_EQ(w(i, j), 0.0f) << i << "," << j;
  }
  // Three more tokens one at a time through each backend's own KV cache.
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(testing::Message() << "cached step " << step);
    const int next = ((21 + step) * 7919 + 29) % s.vocab;
    const DecoderOutputs step_cpu = net.forward({next}, cpu_cache, *cpu);
    const DecoderOutputs step_gl = net.forward({next}, gl_cache, gl);
    EXPECT_LE(worst_attention_diff(step_cpu, step_gl, s), 1e-4f);
    EXPECT_LE(max_abs_diff(step_gl.logits, step_cpu.logits),
              1e-4f * (1 + step_cpu.logits.cwiseAbs().maxCoeff()));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecoderOpenGlEquivalence,
                         ::testing::ValuesIn(test::plus(test::decoder_fixtures(), {"tiny"})),
                         test::FixtureTestName());

}  // namespace
}  // namespace attnscope
