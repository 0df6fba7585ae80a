// The CPU's packed-weight product (core/backend/cpu/packed_gemm.h) and the backend ops built on it
// (linear with a prepared weight, every attention head at once) against plain double-precision
// loops, for every vector kernel this build has and for the shapes that reach its edges: row
// counts around the kernel's block height, widths around the panel width, 1s, transposed and
// strided operands, with and without bias.
#include "core/backend/cpu/packed_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/backend/cpu/cpu_backend.h"
#include "tests/common/reference.h"

namespace attnscope {
namespace {

using test::MatrixD;
using test::randn;
using test::tolerance_ratio;

// y = x·W + b in double, W given as [k x n] or (transposed) [n x k].
MatrixD reference_linear(const Matrix& x, const Matrix& w, bool transposed, const Matrix* bias) {
  const int m = static_cast<int>(x.rows()), k = static_cast<int>(x.cols());
  const int n = static_cast<int>(transposed ? w.rows() : w.cols());
  MatrixD y(m, n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = bias ? double((*bias)(0, j)) : 0.0;
      for (int t = 0; t < k; ++t) s += double(x(i, t)) * double(transposed ? w(j, t) : w(t, j));
      y(i, j) = s;
    }
  return y;
}

// What each kernel must meet against the double product of k terms, as tolerance_ratio's (abs,
// rel), for random normal operands: the float kernels round each sum like any float product; AMX
// bf16x3 (packed_gemm.h) drops terms of about 2^-16 of each |a·b|, which for these sums stays
// below 2e-3 + 2e-5·|y| at k = 768 (measured: up to 6e-4). Both grow with k (the sum's own size
// goes as sqrt(k); its rounding, in the worst entries, nearly as k); above k = 768 the absolute
// part scales with k / 768. A dropped hi·lo or lo·hi term would leave errors of 2^-9 of each
// product, ~0.05 at k = 768, far outside.
struct Tolerance {
  double abs, rel;
};
Tolerance tolerance_for(GemmIsa isa, int k = 768) {
  const double scale = std::max(1.0, k / 768.0);
  return isa == GemmIsa::kAmxBf16x3 ? Tolerance{2e-3 * scale, 2e-5} : Tolerance{1e-4 * scale, 1e-5};
}

TEST(PackedGemmTest, ThisBuildHasAKernelWhereTheCompilerTargetsAvx2) {
#if defined(__AVX2__) && defined(__FMA__)
  EXPECT_FALSE(packed_gemm_isas().empty());
#else
  GTEST_SKIP() << "built without AVX2/FMA: the CPU backend uses Eigen for linear layers";
#endif
}

TEST(PackedGemmTest, MatchesDoubleProductOnEdgeShapes) {
  if (packed_gemm_isas().empty()) GTEST_SKIP() << "no vector kernel in this build";
  struct Shape {
    int m, k, n;
  };
  const Shape shapes[] = {{1, 1, 1},
                          {1, 768, 1},
                          {3, 5, 7},
                          {5, 17, 47},
                          {6, 9, 48},
                          {7, 33, 49},
                          {8, 64, 96},
                          {9, 64, 100},
                          {13, 31, 129},
                          {17, 768, 33},
                          {64, 768, 2304 / 8},
                          {65, 128, 300},
                          {130, 40, 50},
                          // k in more than one chunk of AMX's 768 (a partial last one; 4 whole).
                          {5, 1000, 70},
                          {33, 3072, 40}};
  std::uint32_t seed = 1;
  for (GemmIsa isa : packed_gemm_isas()) {
    for (const Shape& s : shapes) {
      for (bool transposed : {false, true}) {
        for (bool with_bias : {true, false}) {
          SCOPED_TRACE(to_string(isa) + " m=" + std::to_string(s.m) + " k=" + std::to_string(s.k) +
                       " n=" + std::to_string(s.n) + (transposed ? " W^T" : "") +
                       (with_bias ? " +bias" : ""));
          const Matrix x = randn(s.m, s.k, seed++);
          const Matrix w = transposed ? randn(s.n, s.k, seed++) : randn(s.k, s.n, seed++);
          const Matrix b = randn(1, s.n, seed++);
          const PackedWeight packed(w.data(), static_cast<int>(w.rows()),
                                    static_cast<int>(w.cols()), static_cast<int>(w.cols()),
                                    transposed, isa);
          EXPECT_EQ(packed.k(), s.k);
          EXPECT_EQ(packed.n(), s.n);
          // C is wider than the product and pre-filled: columns outside [0, n) must stay as they
          // are.
          Matrix c = Matrix::Constant(s.m, s.n + 3, 7.0f);
          packed_gemm(x.data(), s.m, s.k, packed, with_bias ? b.data() : nullptr, c.data(),
                      s.n + 3);
          const MatrixD want = reference_linear(x, w, transposed, with_bias ? &b : nullptr);
          const Tolerance tol = tolerance_for(isa, s.k);
          EXPECT_LE(tolerance_ratio(c.leftCols(s.n), want, tol.abs, tol.rel), 1.0);
          EXPECT_TRUE((c.rightCols(3).array() == 7.0f).all());
        }
      }
    }
  }
}

TEST(PackedGemmTest, ReadsStridedOperandsInPlace) {
  if (packed_gemm_isas().empty()) GTEST_SKIP() << "no vector kernel in this build";
  // A, W and C are column blocks of wider matrices, as a head's slice of a fused projection is.
  const Matrix x_wide = randn(19, 40, 31), w_wide = randn(30, 90, 32), bias = randn(1, 50, 33);
  const Matrix x = x_wide.middleCols(3, 30), w = w_wide.middleCols(20, 50);
  for (GemmIsa isa : packed_gemm_isas()) {
    SCOPED_TRACE(to_string(isa));
    const PackedWeight packed(w_wide.data() + 20, 30, 50, 90, false, isa);
    Matrix c = Matrix::Zero(19, 70);
    packed_gemm(x_wide.data() + 3, 19, 40, packed, bias.data(), c.data() + 10, 70);
    const Tolerance tol = tolerance_for(isa);
    EXPECT_LE(tolerance_ratio(c.middleCols(10, 50), reference_linear(x, w, false, &bias), tol.abs,
                              tol.rel),
              1.0);
    EXPECT_TRUE((c.leftCols(10).array() == 0.0f).all());
    EXPECT_TRUE((c.rightCols(10).array() == 0.0f).all());
  }
}

// Large enough to be shared between the cores (GPT-2 small's MLP shape at 40 tokens).
TEST(PackedGemmTest, SharedBetweenCoresEqualsDoubleProduct) {
  if (packed_gemm_isas().empty()) GTEST_SKIP() << "no vector kernel in this build";
  const Matrix x = randn(40, 768, 41), w = randn(768, 3072, 42), b = randn(1, 3072, 43);
  const MatrixD want = reference_linear(x, w, false, &b);
  for (GemmIsa isa : packed_gemm_isas()) {
    SCOPED_TRACE(to_string(isa));
    const PackedWeight packed(w.data(), 768, 3072, 3072, false, isa);
    Matrix c(40, 3072);
    packed_gemm(x.data(), 40, 768, packed, b.data(), c.data(), 3072);
    const Tolerance tol = tolerance_for(isa);
    EXPECT_LE(tolerance_ratio(c, want, tol.abs, tol.rel), 1.0);
  }
}

// bf16x3 keeps ~16 significant bits of each operand where one bfloat16 keeps 8: its error must be a
// small fraction of a plain bfloat16 product's (computed here with its own rounding), and within a
// small multiple of a float product's.
float round_to_bf16(float x) {  // nearest even, 8 significant bits (no NaN or overflow here)
  int e = 0;
  const double m = std::frexp(static_cast<double>(x), &e);  // x = m·2^e, 0.5 <= |m| < 1
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8));
}

TEST(PackedGemmTest, AmxSplitIsFarCloserThanOneBfloat16AndNearFloat) {
  const std::vector<GemmIsa> isas = packed_gemm_isas();
  if (std::find(isas.begin(), isas.end(), GemmIsa::kAmxBf16x3) == isas.end())
    GTEST_SKIP() << "no AMX on this processor or system";
  const int m = 64, k = 768, n = 256;
  const Matrix x = randn(m, k, 71), w = randn(k, n, 72);
  const MatrixD want = reference_linear(x, w, false, nullptr);
  const Matrix x16 = x.unaryExpr(&round_to_bf16), w16 = w.unaryExpr(&round_to_bf16);
  auto rms_error = [&](const auto& got) {
    return std::sqrt((got.template cast<double>() - want).squaredNorm() / (m * n));
  };
  const double bf16_error = rms_error(reference_linear(x16, w16, false, nullptr));
  std::map<GemmIsa, double> error;
  for (GemmIsa isa : {GemmIsa::kAmxBf16x3, isas.back()}) {
    const PackedWeight packed(w.data(), k, n, n, false, isa);
    Matrix c(m, n);
    packed_gemm(x.data(), m, k, packed, nullptr, c.data(), n);
    error[isa] = rms_error(c);
  }
  const double amx = error[GemmIsa::kAmxBf16x3], fp32 = error[isas.back()];
  RecordProperty("rms_error_bf16", std::to_string(bf16_error));
  RecordProperty("rms_error_amx_bf16x3", std::to_string(amx));
  RecordProperty("rms_error_float", std::to_string(fp32));
  EXPECT_GT(bf16_error, 0.01);  // the contrast is real: ~2^-9 of each product, summed
  EXPECT_LT(amx, bf16_error / 50);
  EXPECT_LT(amx, 20 * fp32);
}

// CpuPrecision::kFloat, or ATTNSCOPE_CPU_GEMM=fp32 in the environment, keeps the CPU backend on
// float arithmetic.
TEST(PackedGemmTest, FloatPrecisionKeepsTheFloatKernel) {
  if (packed_gemm_isas().empty()) GTEST_SKIP() << "no vector kernel in this build";
  ::setenv("ATTNSCOPE_CPU_GEMM", "fp32", 1);
  const auto from_env = make_cpu_backend();
  ::unsetenv("ATTNSCOPE_CPU_GEMM");
  const auto asked = make_cpu_backend(CpuPrecision::kFloat);
  const auto fastest = make_cpu_backend();
  const Matrix x = randn(33, 768, 81), w = randn(768, 100, 82), b = randn(1, 100, 83);
  const MatrixD want = reference_linear(x, w, false, &b);
  for (Backend* be : {from_env.get(), asked.get()}) {
    EXPECT_EQ(be->description().find("AMX"), std::string::npos) << be->description();
    const Tensor tw = be->upload(w);
    const auto prepared = be->prepare_weight(tw, false);
    Tensor y = be->alloc(33, 100);
    be->linear(be->upload(x), tw, false, prepared.get(), be->upload(b), y);
    EXPECT_LE(tolerance_ratio(be->download(y), want, 1e-4, 1e-5), 1.0);
  }
  EXPECT_EQ(fastest->description().find("AMX") != std::string::npos,
            packed_gemm_isas().front() == GemmIsa::kAmxBf16x3)
      << fastest->description();
}

TEST(PackedGemmTest, BackendLinearWithAndWithoutPreparedWeightAgree) {
  const auto be = make_cpu_backend();
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "W^T (BERT's nn.Linear)" : "W (GPT-2's Conv1D)");
    const Matrix x = randn(23, 96, 51), b = randn(1, 130, 53);
    const Matrix w = transposed ? randn(130, 96, 52) : randn(96, 130, 52);
    const Tensor tw = be->upload(w);
    const auto prepared = be->prepare_weight(tw, transposed);
    EXPECT_EQ(prepared != nullptr, !packed_gemm_isas().empty());
    Tensor y1 = be->alloc(23, 130), y2 = be->alloc(23, 130);
    be->linear(be->upload(x), tw, transposed, prepared.get(), be->upload(b), y1);
    be->linear(be->upload(x), tw, transposed, nullptr, be->upload(b), y2);
    const MatrixD want = reference_linear(x, w, transposed, &b);
    const Tolerance tol =
        tolerance_for(packed_gemm_isas().empty() ? GemmIsa::kAvx2 : packed_gemm_isas().front());
    EXPECT_LE(tolerance_ratio(be->download(y1), want, tol.abs, tol.rel), 1.0);
    EXPECT_LE(tolerance_ratio(be->download(y2), want, 1e-4, 1e-5), 1.0);
  }
}

TEST(PackedGemmTest, LinearRejectsAPreparedWeightOfAnotherShape) {
  const auto be = make_cpu_backend();
  if (packed_gemm_isas().empty()) GTEST_SKIP() << "no vector kernel in this build";
  const Tensor w = be->upload(randn(8, 16, 61)), other = be->upload(randn(8, 12, 62));
  const auto prepared = be->prepare_weight(other, false);
  Tensor y = be->alloc(2, 16);
  EXPECT_THROW(be->linear(be->upload(randn(2, 8, 63)), w, false, prepared.get(),
                          be->upload(randn(1, 16, 64)), y),
               std::exception);
}

// Every head at once (the CPU runs them side by side) against the per-head double reference.
TEST(SelfAttentionHeadsTest, MatchesPerHeadReferenceWithEveryMask) {
  const auto be = make_cpu_backend();
  struct Case {
    int n, heads, dh;
  };
  for (Case c : {Case{1, 1, 4}, Case{5, 3, 8}, Case{64, 12, 64}}) {
    for (int variant = 0; variant < 4; ++variant) {
      const int d = c.heads * c.dh;
      SCOPED_TRACE("n=" + std::to_string(c.n) + " heads=" + std::to_string(c.heads) + " variant " +
                   std::to_string(variant));
      AttentionMask mask;
      mask.causal = variant & 1;
      mask.mask_self = variant == 2;
      if (variant == 3) {
        mask.key_padding.assign(c.n, 0);
        mask.key_padding[c.n - 1] = 1;  // n = 1: the only key masked, so a row of zeros
      }
      const Matrix qkv = randn(c.n, 3 * d, 70 + variant, 2.0f);
      const float factor = 1.0f / std::sqrt(static_cast<float>(c.dh));
      Tensor context = be->alloc(c.n, d);
      std::vector<Matrix> weights;
      be->self_attention_heads(be->upload(qkv), c.heads, factor, mask, context, &weights);
      ASSERT_EQ(static_cast<int>(weights.size()), c.heads);
      const Matrix got = be->download(context);
      for (int h = 0; h < c.heads; ++h) {
        const test::NaiveAttention want = test::naive_attention(
            qkv.middleCols(h * c.dh, c.dh), qkv.middleCols(d + h * c.dh, c.dh),
            qkv.middleCols(2 * d + h * c.dh, c.dh), factor, mask.causal, mask.mask_self,
            mask.key_padding);
        EXPECT_LE(tolerance_ratio(weights[h], want.weights, 1e-6, 1e-4), 1.0) << "head " << h;
        EXPECT_LE(tolerance_ratio(got.middleCols(h * c.dh, c.dh), want.output, 1e-5, 1e-4), 1.0)
            << "head " << h;
        // Masked keys get exactly 0.
        for (int i = 0; i < c.n; ++i) {
          for (int j = 0; j < c.n; ++j) {
            const bool masked = (mask.causal && j > i) || (mask.mask_self && i == j) ||
                                (!mask.key_padding.empty() && mask.key_padding[j]);
            if (masked) {
              EXPECT_EQ(weights[h](i, j), 0.0f) << "head " << h << " " << i << "," << j;
            }
          }
        }
      }
      // Without weights requested, the same outputs.
      Tensor context2 = be->alloc(c.n, d);
      be->self_attention_heads(be->upload(qkv), c.heads, factor, mask, context2, nullptr);
      EXPECT_EQ(be->download(context2), got);
    }
  }
}

}  // namespace
}  // namespace attnscope
