#include "core/trace/trace_check.h"

#include <cmath>
#include <string>

#include "core/trace/recomputed_attention.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

[[noreturn]] void fail(const AttentionTrace& trace, int layer, int head, Eigen::Index query,
                       const std::string& what) {
  throw ModelError(trace.model.name + ": layer " + std::to_string(layer) + " (head " +
                   std::to_string(head) + ", query " + std::to_string(query) + "): " + what +
                   "; the model's weights or config.json (e.g. a layer-norm epsilon) are broken");
}

void check_rows(const AttentionTrace& trace, int layer, int head, const Matrix& w,
                bool zero_rows_allowed) {
  for (Eigen::Index q = 0; q < w.rows(); ++q) {
    double sum = 0.0;
    for (Eigen::Index k = 0; k < w.cols(); ++k) {
      const float v = w(q, k);
      if (!std::isfinite(v))
        fail(trace, layer, head, q,
             "the attention weights are NaN or infinite (the activations overflowed)");
      if (v < 0.0f || v > 1.0f + 1e-4f)
        fail(trace, layer, head, q,
             "an attention weight is " + std::to_string(v) + ", outside [0, 1]");
      sum += v;
    }
    if (sum == 0.0 && zero_rows_allowed) continue;
    // The softmax writes a row of zeros only when no score of it is finite (every key masked, or
    // NaN / infinite scores): for a model that never masks a whole row, that is an overflow.
    if (sum == 0.0)
      fail(trace, layer, head, q,
           "the attention weights are all 0: the scores were NaN or infinite (the activations "
           "overflowed)");
    if (std::abs(sum - 1.0) > 1e-3)
      fail(trace, layer, head, q,
           "the attention weights sum to " + std::to_string(sum) + " instead of 1");
  }
}

// Recomputed attention, without recomputing every head: the softmax of a row of finite scores is
// finite, in [0, 1] and sums to 1, and each causal query sees at least its own key. The scores
// of head h are finite when its Q and K are and scale·max|q|·max|k| (Cauchy-Schwarz bounds every
// q·k) stays far below the float range; only a head that fails that bound is recomputed and read.
void check_recomputed_rows(const AttentionTrace& trace, bool zero_rows_allowed) {
  const RecomputedAttention& r = *trace.recomputed;
  for (int layer = 0; layer < r.layers(); ++layer) {
    const AttentionInputs& in = r.layer(layer);
    const int group = in.heads / in.kv_heads, dh = in.head_dim;
    std::vector<double> key_norm(static_cast<size_t>(in.kv_heads), 0.0);
    for (int g = 0; g < in.kv_heads; ++g) {
      const auto k = in.k.middleCols(g * dh, dh);
      key_norm[static_cast<size_t>(g)] =
          k.allFinite() ? k.cast<double>().rowwise().norm().maxCoeff() : HUGE_VAL;
    }
    for (int head = 0; head < in.heads; ++head) {
      const auto q = in.q.middleCols(head * dh, dh);
      const double q_norm = q.allFinite() ? q.cast<double>().rowwise().norm().maxCoeff() : HUGE_VAL;
      const double bound =
          std::abs(in.scale) * q_norm * key_norm[static_cast<size_t>(head / group)];
      if (!(bound < 1e30) || !in.mask.causal)
        check_rows(trace, layer, head, r.compute(layer, head), zero_rows_allowed);
    }
  }
}

}  // namespace

void check_attention_rows(const AttentionTrace& trace) {
  check_attention_rows(trace, /*zero_rows_allowed=*/trace.model.kind == "lesson");
}

void check_attention_rows(const AttentionTrace& trace, bool zero_rows_allowed) {
  if (trace.recomputed) return check_recomputed_rows(trace, zero_rows_allowed);
  for (int layer = 0; layer < trace.layers(); ++layer)
    for (int head = 0; head < trace.heads(); ++head)
      check_rows(trace, layer, head, trace.attention[layer][head], zero_rows_allowed);
}

}  // namespace attnscope
