#include "core/trace/trace_check.h"

#include <cmath>
#include <string>

#include "core/util/error.h"

namespace attnscope {
namespace {

[[noreturn]] void fail(const AttentionTrace& trace, int layer, int head, Eigen::Index query,
                       const std::string& what) {
  throw ModelError(trace.model.name + ": layer " + std::to_string(layer) + " (head " +
                   std::to_string(head) + ", query " + std::to_string(query) + "): " + what +
                   "; the model's weights or config.json (e.g. a layer-norm epsilon) are broken");
}

}  // namespace

void check_attention_rows(const AttentionTrace& trace) {
  check_attention_rows(trace, /*zero_rows_allowed=*/trace.model.kind == "lesson");
}

void check_attention_rows(const AttentionTrace& trace, bool zero_rows_allowed) {
  for (int layer = 0; layer < trace.layers(); ++layer) {
    const auto& heads = trace.attention[layer];
    for (int head = 0; head < static_cast<int>(heads.size()); ++head) {
      const Matrix& w = heads[head];
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
        if (std::abs(sum - 1.0) > 1e-3)
          fail(trace, layer, head, q,
               "the attention weights sum to " + std::to_string(sum) + " instead of 1");
      }
    }
  }
}

}  // namespace attnscope
