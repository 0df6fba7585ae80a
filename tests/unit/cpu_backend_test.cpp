// The CPU backend (the reference of every other backend) against plain double-precision formulas.
#include <gtest/gtest.h>

#include <cmath>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "core/util/error.h"
#include "tests/common/op_cases.h"
#include "tests/common/reference.h"

namespace attnscope {
namespace {

using test::MatrixD;
using test::randn;
using test::tolerance_ratio;

class CpuBackendTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> be = make_cpu_backend();
};

TEST_F(CpuBackendTest, MatmulWithAlphaBetaAndTranspose) {
  const Matrix a = randn(5, 7, 1), b = randn(7, 3, 2), bt = randn(3, 7, 3), c0 = randn(5, 3, 4);
  Tensor c = be->upload(c0);
  be->matmul(be->upload(a), be->upload(b), false, c, 2.0f, -1.0f);
  MatrixD ref = 2.0 * a.cast<double>() * b.cast<double>() - c0.cast<double>();
  EXPECT_LE(tolerance_ratio(be->download(c), ref, 1e-5, 1e-5), 1.0);
  Tensor c2 = be->alloc(5, 3);
  be->matmul(be->upload(a), be->upload(bt), true, c2);
  ref = a.cast<double>() * bt.cast<double>().transpose();
  EXPECT_LE(tolerance_ratio(be->download(c2), ref, 1e-5, 1e-5), 1.0);
  Tensor bad = be->alloc(4, 4);
  EXPECT_THROW(be->matmul(be->upload(a), be->upload(b), false, bad), BackendError);
}

TEST_F(CpuBackendTest, LayerNormMatchesDefinition) {
  const Matrix x = randn(4, 9, 5, 3.0f), g = randn(1, 9, 6), b = randn(1, 9, 7);
  Tensor y = be->alloc(4, 9);
  be->layer_norm(be->upload(x), be->upload(g), be->upload(b), 1e-5f, y);
  MatrixD ref(4, 9);
  for (int i = 0; i < 4; ++i) {
    double mean = 0, var = 0;
    for (int j = 0; j < 9; ++j) mean += x(i, j) / 9.0;
    for (int j = 0; j < 9; ++j) var += (x(i, j) - mean) * (x(i, j) - mean) / 9.0;
    for (int j = 0; j < 9; ++j)
      ref(i, j) = (x(i, j) - mean) / std::sqrt(var + 1e-5) * g(0, j) + b(0, j);
  }
  EXPECT_LE(tolerance_ratio(be->download(y), ref, 1e-5, 1e-5), 1.0);
}

TEST_F(CpuBackendTest, GeluMatchesBothDefinitions) {
  const Matrix x = randn(3, 50, 8, 3.0f);
  Tensor t = be->upload(x), e = be->upload(x);
  be->gelu(t, Gelu::kTanh);
  be->gelu(e, Gelu::kErf);
  MatrixD rt(3, 50), re(3, 50);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 50; ++j) {
      const double v = x(i, j);
      rt(i, j) = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      re(i, j) = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    }
  EXPECT_LE(tolerance_ratio(be->download(t), rt, 1e-6, 1e-5), 1.0);
  EXPECT_LE(tolerance_ratio(be->download(e), re, 1e-6, 1e-5), 1.0);
}

TEST_F(CpuBackendTest, MaskedSoftmaxGivesExactZerosAndUnitRows) {
  Tensor x = be->upload(randn(6, 6, 9));
  AttentionMask m;
  m.causal = true;
  m.mask_self = true;
  be->mask_fill(x, m);
  be->softmax_rows(x);
  const Matrix w = be->download(x);
  EXPECT_EQ(w.row(0).norm(), 0.0f);  // nothing left to attend to
  for (int i = 1; i < 6; ++i) {
    EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-6f);
    for (int j = i; j < 6; ++j) EXPECT_EQ(w(i, j), 0.0f);
  }
}

TEST_F(CpuBackendTest, EveryHarnessCaseIsFinite) {
  for (const test::OpCase& c : test::backend_op_cases()) {
    const Matrix r = c.run(*be);
    EXPECT_TRUE(r.allFinite()) << c.name;
    EXPECT_GT(r.size(), 0) << c.name;
  }
}

TEST(BackendSelection, CpuIsAlwaysAvailable) {
  SelectedBackend s = select_backend(BackendChoice::kCpu);
  ASSERT_TRUE(s.backend);
  EXPECT_EQ(s.backend->name(), "cpu");
  EXPECT_TRUE(s.fallback_reason.empty());
}

TEST(BackendSelection, AutoFallsBackWithAReasonOrUsesCuda) {
  SelectedBackend s = select_backend(BackendChoice::kAuto);
  ASSERT_TRUE(s.backend);
  if (s.backend->name() == "cpu") {
    EXPECT_FALSE(s.fallback_reason.empty()) << "a fallback must say why";
    // Asking for CUDA explicitly is then an error whose reason is the one auto gave for CUDA
    // (auto's reason also says why OpenGL was not used).
    std::string why;
    EXPECT_FALSE(try_cuda_backend(why));
    ASSERT_FALSE(why.empty());
    EXPECT_EQ(s.fallback_reason.rfind(why, 0), 0u) << s.fallback_reason;
    try {
      select_backend(BackendChoice::kCuda);
      FAIL() << "expected BackendError";
    } catch (const BackendError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  } else {
    EXPECT_EQ(s.backend->name(), "cuda");
  }
}

TEST(BackendSelection, ParsesChoices) {
  EXPECT_EQ(parse_backend_choice("auto"), BackendChoice::kAuto);
  EXPECT_EQ(parse_backend_choice("cpu"), BackendChoice::kCpu);
  EXPECT_EQ(parse_backend_choice("cuda"), BackendChoice::kCuda);
  EXPECT_THROW(parse_backend_choice("tpu"), UsageError);
}

}  // namespace
}  // namespace attnscope
