#pragma once
// Double-precision references of the backend ops (core/backend/backend.h), written from the
// formulas with plain loops; they share no code with any backend. Each takes the op's inputs as
// float matrices (exactly the values the backend sees) and returns the expected output.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/common/reference.h"

namespace attnscope::test {

inline MatrixD to_double(const Matrix& m) {
  return m.cast<double>();
}

// The mask, from the definition in backend.h's AttentionMask comment: query i at absolute
// position offset + i, key j at j.
struct RefMask {
  bool causal = false, mask_self = false;
  int window = 0, offset = 0;
  std::vector<std::uint8_t> padding;
  bool masked(int i, int j) const {
    const int q = offset + i;
    if (causal && j > q) return true;
    if (mask_self && j == q) return true;
    if (window > 0 && q - j >= window) return true;
    return !padding.empty() && padding[j] != 0;
  }
};

// Stable softmax of each row over the unmasked entries; masked ones and fully masked rows get 0.
inline MatrixD ref_masked_softmax(const MatrixD& s, const RefMask& mask) {
  MatrixD w = MatrixD::Zero(s.rows(), s.cols());
  for (int i = 0; i < s.rows(); ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < s.cols(); ++j)
      if (!mask.masked(i, j)) mx = std::max(mx, s(i, j));
    if (!std::isfinite(mx)) continue;
    double sum = 0;
    for (int j = 0; j < s.cols(); ++j)
      if (!mask.masked(i, j)) sum += std::exp(s(i, j) - mx);
    for (int j = 0; j < s.cols(); ++j)
      if (!mask.masked(i, j)) w(i, j) = std::exp(s(i, j) - mx) / sum;
  }
  return w;
}

inline double ref_gelu(double x, bool erf_form) {
  if (erf_form) return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}
inline double ref_silu(double x) {
  return x / (1.0 + std::exp(-x));
}

// Y = X / sqrt(mean(X²) + eps) · (offset + w), over groups of w.cols() columns.
inline MatrixD ref_rms_norm(const Matrix& x, const Matrix& w, double eps, double offset) {
  const int g = static_cast<int>(w.cols());
  MatrixD y(x.rows(), x.cols());
  for (int i = 0; i < x.rows(); ++i)
    for (int h = 0; h < x.cols() / g; ++h) {
      double ss = 0;
      for (int c = 0; c < g; ++c) ss += double(x(i, h * g + c)) * double(x(i, h * g + c));
      const double r = 1.0 / std::sqrt(ss / g + eps);
      for (int c = 0; c < g; ++c)
        y(i, h * g + c) = double(x(i, h * g + c)) * r * (offset + double(w(0, c)));
    }
  return y;
}

// rotate_half RoPE; the angle is float(pos) · inv_freq rounded to float (the op's definition,
// Hugging Face's float32 product), its cosine and sine exact.
inline MatrixD ref_rope(const Matrix& x, int heads, int dh, const std::vector<float>& inv_freq,
                        int pos0) {
  MatrixD y = to_double(x);
  const int half = dh / 2;
  for (int i = 0; i < x.rows(); ++i)
    for (int h = 0; h < heads; ++h)
      for (int j = 0; j < half; ++j) {
        const float angle = static_cast<float>(pos0 + i) * inv_freq[j];
        const double c = std::cos(double(angle)), s = std::sin(double(angle));
        const double a = x(i, h * dh + j), b = x(i, h * dh + half + j);
        y(i, h * dh + j) = a * c - b * s;
        y(i, h * dh + half + j) = b * c + a * s;
      }
  return y;
}

// Grouped-query attention: every head's context side by side, then every head's weights.
struct RefAttention {
  MatrixD context;
  std::vector<MatrixD> weights;
};
inline RefAttention ref_attention(const Matrix& q, const Matrix& k, const Matrix& v, int heads,
                                  int kv_heads, int dh, double factor, double cap,
                                  const RefMask& mask) {
  const int n = static_cast<int>(q.rows()), m = static_cast<int>(k.rows());
  RefAttention r;
  r.context = MatrixD::Zero(n, heads * dh);
  for (int h = 0; h < heads; ++h) {
    const int g = h / (heads / kv_heads);
    MatrixD s(n, m);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j) {
        double dot = 0;
        for (int t = 0; t < dh; ++t) dot += double(q(i, h * dh + t)) * double(k(j, g * dh + t));
        s(i, j) = dot * factor;
        if (cap > 0) s(i, j) = cap * std::tanh(s(i, j) / cap);
      }
    MatrixD w = ref_masked_softmax(s, mask);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j)
        for (int t = 0; t < dh; ++t) r.context(i, h * dh + t) += w(i, j) * double(v(j, g * dh + t));
    r.weights.push_back(std::move(w));
  }
  return r;
}

// 16-bit values decoded from their definitions (independent of core/backend/dtype.h).
inline double ref_bf16(std::uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 7) & 0xff, mantissa = h & 0x7f;
  if (exponent == 0xff) return mantissa ? NAN : (sign ? -INFINITY : INFINITY);
  const double m = exponent ? 1.0 + mantissa / 128.0 : mantissa / 128.0;
  return (sign ? -1 : 1) * std::ldexp(m, (exponent ? exponent : 1) - 127);
}
inline double ref_f16(std::uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f) return mantissa ? NAN : (sign ? -INFINITY : INFINITY);
  const double m = exponent ? 1.0 + mantissa / 1024.0 : mantissa / 1024.0;
  return (sign ? -1 : 1) * std::ldexp(m, (exponent ? exponent : 1) - 15);
}

}  // namespace attnscope::test
