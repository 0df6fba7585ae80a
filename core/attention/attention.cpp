#include "core/attention/attention.h"

#include <cmath>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/util/error.h"

namespace attnscope {

float AttentionOptions::score_factor(int d_k) const {
  float f = 1.0f;
  if (scale && d_k > 0) f /= std::sqrt(static_cast<float>(d_k));
  return f / temperature;
}

namespace {

void check_shapes(const Matrix& q, const Matrix& k, const Matrix& v, const AttentionOptions& o) {
  auto shape = [](const Matrix& m) {
    return std::to_string(m.rows()) + "x" + std::to_string(m.cols());
  };
  if (q.cols() != k.cols())
    throw UsageError("attention: Q (" + shape(q) + ") and K (" + shape(k) +
                     ") need the same number of columns d_k");
  if (k.rows() != v.rows())
    throw UsageError("attention: K (" + shape(k) + ") and V (" + shape(v) +
                     ") need the same number of rows (keys)");
  if (!(o.temperature > 0.0f) || !std::isfinite(o.temperature))
    throw UsageError("attention: the temperature must be a positive number");
  if (!o.key_padding.empty() && static_cast<Eigen::Index>(o.key_padding.size()) != k.rows())
    throw UsageError("attention: the key padding mask needs one entry per key");
}

}  // namespace

AttentionResult attention_forward(Backend& be, const Matrix& q, const Matrix& k, const Matrix& v,
                                  const AttentionOptions& options) {
  check_shapes(q, k, v, options);
  const int n = static_cast<int>(q.rows()), m = static_cast<int>(k.rows());
  const int d_k = static_cast<int>(q.cols()), d_v = static_cast<int>(v.cols());
  Tensor tq = be.upload(q), tk = be.upload(k), tv = be.upload(v);

  // scores [n x m] = Q [n x d_k] · Kᵀ [d_k x m]
  Tensor scores = be.alloc(n, m);
  be.matmul(tq, tk, /*transpose_b=*/true, scores);
  // scaled = scores · (1/√d_k) / T, then masked entries -inf
  Tensor scaled = be.alloc(n, m);
  be.copy(scores, scaled);
  be.scale(scaled, options.score_factor(d_k));
  if (options.mask().any()) be.mask_fill(scaled, options.mask());
  // weights = softmax(scaled) per row
  Tensor weights = be.alloc(n, m);
  be.copy(scaled, weights);
  be.softmax_rows(weights);
  // output [n x d_v] = weights [n x m] · V [m x d_v]
  Tensor out = be.alloc(n, d_v);
  be.matmul(weights, tv, false, out);

  AttentionResult r;
  r.scores = be.download(scores);
  r.scaled = be.download(scaled);
  r.weights = be.download(weights);
  r.output = be.download(out);
  return r;
}

AttentionResult attention_forward(const Matrix& q, const Matrix& k, const Matrix& v,
                                  const AttentionOptions& options) {
  auto cpu = make_cpu_backend();
  return attention_forward(*cpu, q, k, v, options);
}

MultiHeadResult multi_head_attention(Backend& be, const Matrix& x, const MultiHeadWeights& w,
                                     int heads, const AttentionOptions& options) {
  const int d_model = static_cast<int>(x.cols());
  if (heads <= 0 || d_model % heads != 0)
    throw UsageError("multi-head attention: d_model " + std::to_string(d_model) +
                     " is not divisible by " + std::to_string(heads) + " heads");
  for (const Matrix* m : {&w.w_q, &w.w_k, &w.w_v, &w.w_o})
    if (m->rows() != d_model || m->cols() != d_model)
      throw UsageError("multi-head attention: projections must be d_model x d_model");
  auto project = [&](const Matrix& wm, const RowVector& b) {
    Matrix y = x * wm;
    if (b.size()) y.rowwise() += b;
    return y;
  };
  const Matrix q = project(w.w_q, w.b_q), k = project(w.w_k, w.b_k), v = project(w.w_v, w.b_v);
  const int d_head = d_model / heads;
  MultiHeadResult r;
  r.concat.resize(x.rows(), d_model);
  for (int h = 0; h < heads; ++h) {
    // head h sees columns [h·d_head, (h+1)·d_head) of Q, K, V
    AttentionResult head =
        attention_forward(be, q.middleCols(h * d_head, d_head), k.middleCols(h * d_head, d_head),
                          v.middleCols(h * d_head, d_head), options);
    r.concat.middleCols(h * d_head, d_head) = head.output;
    r.heads.push_back(std::move(head));
  }
  r.output = r.concat * w.w_o;
  if (w.b_o.size()) r.output.rowwise() += w.b_o;
  return r;
}

}  // namespace attnscope
