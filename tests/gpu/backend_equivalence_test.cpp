// Every backend op on CUDA against the CPU reference, tolerance tol + |ref|·eps. Skipped (never
// passed) where no CUDA device exists. The CPU reference keeps to float arithmetic
// (CpuPrecision::kFloat): on an AMX host its default bf16x3 kernel is itself ~1e-5 off.
#include <gtest/gtest.h>

#include "core/attention/attention.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "tests/common/op_cases.h"

namespace attnscope {
namespace {

std::shared_ptr<Backend> cuda_or_skip_reason(std::string& why) {
  return try_cuda_backend(why);
}

TEST(CudaEquivalence, EveryOpMatchesTheCpuReference) {
  std::string why;
  auto cuda = cuda_or_skip_reason(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (const test::OpCase& c : test::backend_op_cases()) {
    const Matrix ref = c.run(*cpu);
    const Matrix got = c.run(*cuda);
    ASSERT_EQ(got.rows(), ref.rows()) << c.name;
    ASSERT_EQ(got.cols(), ref.cols()) << c.name;
    EXPECT_LE(test::tolerance_ratio(got, ref, c.tol, c.eps), 1.0) << c.name;
  }
}

TEST(CudaEquivalence, AttentionForwardMatchesTheCpu) {
  std::string why;
  auto cuda = cuda_or_skip_reason(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  for (int n : {1, 5, 64, 2048}) {
    const Matrix q = test::randn(n, 64, n), k = test::randn(n, 64, n + 1),
                 v = test::randn(n, 64, n + 2);
    for (bool causal : {false, true}) {
      AttentionOptions o;
      o.causal = causal;
      o.mask_self = n == 5;
      const AttentionResult a = attention_forward(q, k, v, o);
      const AttentionResult b = attention_forward(*cuda, q, k, v, o);
      EXPECT_LE(test::tolerance_ratio(b.weights, a.weights, 1e-6, 1e-4), 1.0) << n;
      EXPECT_LE(test::tolerance_ratio(b.output, a.output, 1e-5, 1e-4), 1.0) << n;
    }
  }
}

}  // namespace
}  // namespace attnscope
