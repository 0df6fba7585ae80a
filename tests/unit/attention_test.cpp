// attention_forward and multi_head_attention against the naive double-precision reference.
#include <gtest/gtest.h>

#include <cmath>

#include "core/attention/attention.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/util/error.h"
#include "tests/common/reference.h"

namespace attnscope {
namespace {

using test::naive_attention;
using test::randn;
using test::tolerance_ratio;

void expect_matches(const AttentionResult& got, const test::NaiveAttention& ref) {
  EXPECT_LE(tolerance_ratio(got.scores, ref.scores, 1e-4, 1e-5), 1.0) << "scores";
  EXPECT_LE(tolerance_ratio(got.weights, ref.weights, 1e-5, 1e-4), 1.0) << "weights";
  EXPECT_LE(tolerance_ratio(got.output, ref.output, 1e-4, 1e-4), 1.0) << "output";
}

void expect_rows_sum_to_one(const Matrix& w) {
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f) << "row " << i;
    EXPECT_GE(w.row(i).minCoeff(), 0.0f);
  }
}

struct Shape {
  int n, m, d, dv;
};

class AttentionShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(AttentionShapes, MatchesNaiveReference) {
  const Shape s = GetParam();
  const std::uint32_t seed = 1000u * s.n + 10u * s.m + s.d;
  const Matrix q = randn(s.n, s.d, seed), k = randn(s.m, s.d, seed + 1),
               v = randn(s.m, s.dv, seed + 2);
  AttentionOptions o;
  const AttentionResult r = attention_forward(q, k, v, o);
  ASSERT_EQ(r.scores.rows(), s.n);
  ASSERT_EQ(r.scores.cols(), s.m);
  ASSERT_EQ(r.output.rows(), s.n);
  ASSERT_EQ(r.output.cols(), s.dv);
  expect_matches(r, naive_attention(q, k, v, 1.0 / std::sqrt(double(s.d)), false, false, {}));
  expect_rows_sum_to_one(r.weights);
}

INSTANTIATE_TEST_SUITE_P(RandomShapes, AttentionShapes,
                         ::testing::Values(Shape{1, 1, 1, 1}, Shape{1, 7, 3, 5}, Shape{7, 1, 3, 2},
                                           Shape{5, 9, 16, 4}, Shape{9, 5, 1, 1},
                                           Shape{33, 17, 64, 64}, Shape{128, 128, 64, 32},
                                           Shape{2048, 2048, 64, 64}));

TEST(Attention, SeedToyExampleGivesFiveBySixteenOutput) {
  // The seed article: Q = K = V = randn(5, 16).
  const Matrix x = randn(5, 16, 42);
  const AttentionResult r = attention_forward(x, x, x, {});
  EXPECT_EQ(r.output.rows(), 5);
  EXPECT_EQ(r.output.cols(), 16);
  EXPECT_EQ(r.weights.rows(), 5);
  EXPECT_EQ(r.weights.cols(), 5);
  expect_rows_sum_to_one(r.weights);
}

TEST(Attention, HugeLogitsStayFinite) {
  Matrix q = Matrix::Zero(3, 2), k = Matrix::Zero(4, 2);
  q << 1e4, 0, -1e4, 0, 0, 1e4;
  k << 1, 0, -1, 0, 0, 1, 1e-3, 1e-3;
  const Matrix v = randn(4, 3, 7);
  AttentionOptions o;
  o.scale = false;  // logits of ±1e4 reach the softmax unchanged
  const AttentionResult r = attention_forward(q, k, v, o);
  EXPECT_TRUE(r.weights.allFinite());
  EXPECT_TRUE(r.output.allFinite());
  expect_rows_sum_to_one(r.weights);
  EXPECT_FLOAT_EQ(r.weights(0, 0), 1.0f);  // 1e4 beats everything by a mile
  expect_matches(r, naive_attention(q, k, v, 1.0, false, false, {}));
}

TEST(Attention, ScalingAndTemperatureFollowTheirDefinitions) {
  const Matrix q = randn(6, 8, 3), k = randn(6, 8, 4), v = randn(6, 8, 5);
  for (bool scale : {true, false})
    for (float t : {0.25f, 1.0f, 3.0f}) {
      AttentionOptions o;
      o.scale = scale;
      o.temperature = t;
      const double factor = (scale ? 1.0 / std::sqrt(8.0) : 1.0) / t;
      const AttentionResult r = attention_forward(q, k, v, o);
      EXPECT_LE(tolerance_ratio(r.scaled, (r.scores.cast<double>() * factor).eval(), 1e-5, 1e-5),
                1.0);
      expect_matches(r, naive_attention(q, k, v, factor, false, false, {}));
    }
}

TEST(Attention, LowerTemperatureSharpens) {
  const Matrix q = randn(4, 8, 13), k = randn(4, 8, 14), v = randn(4, 8, 15);
  AttentionOptions cold, hot;
  cold.temperature = 0.1f;
  hot.temperature = 10.0f;
  const Matrix wc = attention_forward(q, k, v, cold).weights;
  const Matrix wh = attention_forward(q, k, v, hot).weights;
  for (int i = 0; i < 4; ++i) EXPECT_GT(wc.row(i).maxCoeff(), wh.row(i).maxCoeff());
}

TEST(Attention, CausalMaskZeroesTheFuture) {
  const Matrix q = randn(6, 4, 21), k = randn(6, 4, 22), v = randn(6, 3, 23);
  AttentionOptions o;
  o.causal = true;
  const AttentionResult r = attention_forward(q, k, v, o);
  for (int i = 0; i < 6; ++i)
    for (int j = i + 1; j < 6; ++j) EXPECT_EQ(r.weights(i, j), 0.0f);
  EXPECT_FLOAT_EQ(r.weights(0, 0), 1.0f);  // the first token sees only itself
  expect_rows_sum_to_one(r.weights);
  expect_matches(r, naive_attention(q, k, v, 0.5, true, false, {}));
}

TEST(Attention, SelfMaskZeroesTheDiagonal) {
  const Matrix x = randn(5, 6, 31);
  AttentionOptions o;
  o.mask_self = true;
  const AttentionResult r = attention_forward(x, x, x, o);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(r.weights(i, i), 0.0f);
  expect_rows_sum_to_one(r.weights);
  expect_matches(r, naive_attention(x, x, x, 1.0 / std::sqrt(6.0), false, true, {}));
}

TEST(Attention, KeyPaddingMaskZeroesPaddedKeys) {
  const Matrix q = randn(3, 4, 41), k = randn(5, 4, 42), v = randn(5, 2, 43);
  AttentionOptions o;
  o.key_padding = {0, 1, 0, 0, 1};
  const AttentionResult r = attention_forward(q, k, v, o);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.weights(i, 1), 0.0f);
    EXPECT_EQ(r.weights(i, 4), 0.0f);
  }
  expect_rows_sum_to_one(r.weights);
  expect_matches(r, naive_attention(q, k, v, 0.5, false, false, o.key_padding));
}

TEST(Attention, FullyMaskedRowIsZerosNotNaN) {
  // One token with itself excluded has nothing to attend to.
  const Matrix x = randn(1, 4, 51);
  AttentionOptions o;
  o.mask_self = true;
  AttentionResult r = attention_forward(x, x, x, o);
  EXPECT_EQ(r.weights(0, 0), 0.0f);
  EXPECT_TRUE(r.output.allFinite());
  EXPECT_EQ(r.output.norm(), 0.0f);
  // Causal + self on the first row, and a fully padded key set.
  const Matrix y = randn(4, 4, 52);
  o.causal = true;
  r = attention_forward(y, y, y, o);
  EXPECT_EQ(r.weights.row(0).norm(), 0.0f);
  EXPECT_TRUE(r.weights.allFinite());
  for (int i = 1; i < 4; ++i) EXPECT_NEAR(r.weights.row(i).sum(), 1.0f, 1e-5f);
  AttentionOptions pad;
  pad.key_padding = {1, 1, 1, 1};
  r = attention_forward(y, y, y, pad);
  EXPECT_TRUE(r.weights.allFinite());
  EXPECT_EQ(r.weights.norm(), 0.0f);
}

TEST(Attention, RejectsMismatchedShapesWithAClearError) {
  const Matrix a = randn(3, 4, 1), b = randn(3, 5, 2);
  EXPECT_THROW(attention_forward(a, b, b, {}), UsageError);
  EXPECT_THROW(attention_forward(a, a, randn(2, 4, 3), {}), UsageError);
  AttentionOptions o;
  o.temperature = 0.0f;
  EXPECT_THROW(attention_forward(a, a, a, o), UsageError);
  o.temperature = 1.0f;
  o.key_padding = {0, 1};
  EXPECT_THROW(attention_forward(a, a, a, o), UsageError);
}

TEST(MultiHead, MatchesPerHeadNaiveReference) {
  const int n = 7, d = 12, h = 3, dh = d / h;
  const Matrix x = randn(n, d, 61);
  MultiHeadWeights w;
  w.w_q = randn(d, d, 62, 0.3f);
  w.w_k = randn(d, d, 63, 0.3f);
  w.w_v = randn(d, d, 64, 0.3f);
  w.w_o = randn(d, d, 65, 0.3f);
  w.b_q = randn(1, d, 66).row(0);
  w.b_o = randn(1, d, 67).row(0);
  AttentionOptions o;
  o.causal = true;
  auto cpu = make_cpu_backend();
  const MultiHeadResult r = multi_head_attention(*cpu, x, w, h, o);
  ASSERT_EQ(r.heads.size(), 3u);

  // Reference: projections and concatenation in double, attention per head with loops.
  const test::MatrixD xd = x.cast<double>();
  test::MatrixD q = xd * w.w_q.cast<double>(), k = xd * w.w_k.cast<double>(),
                v = xd * w.w_v.cast<double>();
  q.rowwise() += w.b_q.cast<double>();
  test::MatrixD concat(n, d);
  for (int head = 0; head < h; ++head) {
    const Matrix qh = q.middleCols(head * dh, dh).cast<float>(),
                 kh = k.middleCols(head * dh, dh).cast<float>(),
                 vh = v.middleCols(head * dh, dh).cast<float>();
    const auto ref = naive_attention(qh, kh, vh, 1.0 / std::sqrt(double(dh)), true, false, {});
    EXPECT_LE(tolerance_ratio(r.heads[head].weights, ref.weights, 1e-5, 1e-4), 1.0);
    concat.middleCols(head * dh, dh) = ref.output;
  }
  test::MatrixD out = concat * w.w_o.cast<double>();
  out.rowwise() += w.b_o.cast<double>();
  EXPECT_LE(tolerance_ratio(r.output, out, 1e-4, 1e-4), 1.0);
}

TEST(MultiHead, RejectsIndivisibleHeadCount) {
  const Matrix x = randn(3, 10, 1);
  MultiHeadWeights w{
      randn(10, 10, 2), randn(10, 10, 3), randn(10, 10, 4), randn(10, 10, 5), {}, {}, {}, {}};
  auto cpu = make_cpu_backend();
  EXPECT_THROW(multi_head_attention(*cpu, x, w, 3, {}), UsageError);
}

}  // namespace
}  // namespace attnscope
