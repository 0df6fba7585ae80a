#pragma once
// Independent references for tests: plain loops in double precision, written from the formulas,
// sharing no code with the backends they check.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/util/matrix.h"

namespace attnscope::test {

using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline Matrix randn(int rows, int cols, std::uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  Matrix m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = dist(rng);
  return m;
}

struct NaiveAttention {
  MatrixD scores, scaled, weights, output;
};

// softmax(mask(Q·Kᵀ · factor)) · V with loops; masked entries get weight exactly 0 and a fully
// masked row is all zeros.
inline NaiveAttention naive_attention(const Matrix& q, const Matrix& k, const Matrix& v,
                                      double factor, bool causal, bool mask_self,
                                      const std::vector<std::uint8_t>& padding) {
  const int n = q.rows(), m = k.rows(), d = q.cols(), dv = v.cols();
  NaiveAttention r;
  r.scores = MatrixD::Zero(n, m);
  r.scaled = MatrixD::Zero(n, m);
  r.weights = MatrixD::Zero(n, m);
  r.output = MatrixD::Zero(n, dv);
  for (int i = 0; i < n; ++i) {
    std::vector<bool> masked(m);
    double mx = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < m; ++j) {
      double s = 0;
      for (int t = 0; t < d; ++t) s += double(q(i, t)) * double(k(j, t));
      r.scores(i, j) = s;
      r.scaled(i, j) = s * factor;
      masked[j] = (causal && j > i) || (mask_self && j == i) || (!padding.empty() && padding[j]);
      if (!masked[j]) mx = std::max(mx, r.scaled(i, j));
    }
    double sum = 0;
    for (int j = 0; j < m; ++j)
      if (!masked[j]) sum += std::exp(r.scaled(i, j) - mx);
    for (int j = 0; j < m; ++j) {
      if (masked[j] || sum == 0) continue;
      r.weights(i, j) = std::exp(r.scaled(i, j) - mx) / sum;
    }
    for (int j = 0; j < m; ++j)
      for (int t = 0; t < dv; ++t) r.output(i, t) += r.weights(i, j) * double(v(j, t));
  }
  return r;
}

// max over entries of |got - ref| / (tol + |ref| · eps): <= 1 means "within tolerance".
template <typename A, typename B>
double tolerance_ratio(const A& got, const B& ref, double tol, double eps) {
  double worst = 0;
  for (Eigen::Index i = 0; i < ref.rows(); ++i)
    for (Eigen::Index j = 0; j < ref.cols(); ++j) {
      const double g = double(got(i, j)), r = double(ref(i, j));
      const double diff = std::isinf(r) && g == r ? 0.0 : std::abs(g - r);
      // A NaN anywhere (a result that should not be NaN) fails: std::max would drop it.
      if (std::isnan(diff)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, diff / (tol + std::abs(r) * eps));
    }
  return worst;
}

}  // namespace attnscope::test
