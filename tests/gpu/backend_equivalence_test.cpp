// Every backend op on CUDA (tests/common/op_cases.h: today's ops and the modern-LLM ones) against
// the double-precision reference and against the CPU's float path, tolerance tol + |ref|·eps,
// with guard values around every output. Skipped (never passed) where no CUDA device exists. The
// CPU keeps to float arithmetic here (CpuPrecision::kFloat): on an AMX host its default bf16x3
// kernel is itself ~1e-5 off.
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

TEST(CudaEquivalence, EveryOpMatchesDoublePrecisionAndTheCpu) {
  std::string why;
  auto cuda = cuda_or_skip_reason(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  int checked = 0;
  for (const test::OpCase& c : test::backend_op_cases()) {
    SCOPED_TRACE(cuda->description() + ": " + c.name);
    Matrix got, cpu_got;
    try {
      got = c.run(*cuda);
      cpu_got = c.run(*cpu);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
      continue;
    }
    const test::MatrixD ref = c.reference();
    ASSERT_EQ(got.rows(), ref.rows());
    ASSERT_EQ(got.cols(), ref.cols());
    const double vs_double = test::tolerance_ratio(got, ref, c.tol, c.eps);
    EXPECT_LE(vs_double, 1.0) << "against double: worst |got - ref| / (tol + |ref|·eps) = "
                              << vs_double;
    // Both within tolerance of the double result: within twice that of each other.
    const double vs_cpu = test::tolerance_ratio(got, cpu_got, 2 * c.tol, 2 * c.eps);
    EXPECT_LE(vs_cpu, 1.0) << "against the CPU: worst ratio " << vs_cpu;
    ++checked;
  }
  EXPECT_GT(checked, 60);
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
