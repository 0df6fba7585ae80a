// The decoder fixtures (tests/common/decoder_fixture_table.h: every family and GPT-2) on CUDA
// against the CPU (and, through the CPU's tests, the float64 PyTorch reference): every layer's and
// head's attention and the logits, for a whole sequence and step by step through the KV cache.
// Skipped (never passed) where no CUDA device exists. The CPU keeps to float arithmetic
// (CpuPrecision::kFloat).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "tests/common/decoder_fixture.h"
#include "tests/common/decoder_fixture_table.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

DecoderNetwork load_fixture(const std::string& name) {
  return test::load_decoder_folder(fs::path(ATTNSCOPE_FIXTURES) / name);
}

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return a.size() ? (a - b).cwiseAbs().maxCoeff() : 0.0f;
}

class DecoderCudaEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderCudaEquivalence, AttentionAndLogitsMatchTheCpu) {
  std::string why;
  const auto cuda = try_cuda_backend(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  const DecoderNetwork net = load_fixture(GetParam());
  const DecoderSpec& s = net.spec();
  std::vector<int> ids;
  for (int i = 0; i < 21; ++i) ids.push_back((i * 7919 + 29) % s.vocab);
  DecoderRequest all;
  all.all_logits = true;
  KvCache cpu_cache, cuda_cache;
  const DecoderOutputs want = net.forward(ids, cpu_cache, *cpu, all);
  const DecoderOutputs got = net.forward(ids, cuda_cache, *cuda, all);
  float worst = 0;
  for (int l = 0; l < s.layers; ++l)
    for (int h = 0; h < s.heads; ++h)
      worst = std::max(worst, max_abs_diff(got.attention[l][h], want.attention[l][h]));
  EXPECT_LE(worst, 1e-4f) << "attention";
  EXPECT_LE(max_abs_diff(got.logits, want.logits), 1e-4f * (1 + want.logits.cwiseAbs().maxCoeff()))
      << "logits";
  // One more token through the cache on CUDA: the CPU's row for it.
  const int next = (21 * 7919 + 29) % s.vocab;
  const DecoderOutputs step_cpu = net.forward({next}, cpu_cache, *cpu);
  const DecoderOutputs step_cuda = net.forward({next}, cuda_cache, *cuda);
  worst = 0;
  for (int l = 0; l < s.layers; ++l)
    for (int h = 0; h < s.heads; ++h)
      worst = std::max(worst, max_abs_diff(step_cuda.attention[l][h], step_cpu.attention[l][h]));
  EXPECT_LE(worst, 1e-4f) << "attention of the cached step";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecoderCudaEquivalence,
                         ::testing::ValuesIn(test::decoder_fixtures()), test::FixtureTestName());

}  // namespace
}  // namespace attnscope
