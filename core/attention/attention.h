#pragma once
// The seed's operation: attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V, with every step kept so the
// formula view can show it.
#include <vector>

#include "core/backend/backend.h"
#include "core/util/matrix.h"

namespace attnscope {

struct AttentionOptions {
  bool scale = true;                      // divide the scores by √d_k
  float temperature = 1.0f;               // then divide by the temperature (> 0)
  bool causal = false;                    // query i sees keys j <= i only
  bool mask_self = false;                 // query i never sees key i
  std::vector<std::uint8_t> key_padding;  // per key, 1 = masked (padding)

  AttentionMask mask() const { return {causal, mask_self, key_padding}; }
  // The factor the scores are multiplied by: (1/√d_k if scale) / temperature.
  float score_factor(int d_k) const;
};

struct AttentionResult {
  Matrix scores;   // [n x m]  Q·Kᵀ
  Matrix scaled;   // [n x m]  scores · score_factor, masked entries -inf
  Matrix weights;  // [n x m]  row softmax of scaled; rows sum to 1, or are all 0 if fully masked
  Matrix output;   // [n x d_v] weights · V
};

// Q [n x d_k], K [m x d_k], V [m x d_v]. Throws UsageError on mismatched shapes.
AttentionResult attention_forward(const Matrix& q, const Matrix& k, const Matrix& v,
                                  const AttentionOptions& options);
// The same on a given backend (the CPU version above calls this with the CPU backend).
AttentionResult attention_forward(Backend& backend, const Matrix& q, const Matrix& k,
                                  const Matrix& v, const AttentionOptions& options);

// Multi-head attention: X [n x d_model] is projected to Q, K, V [n x d_model] by W_Q, W_K, W_V
// ([d_model x d_model], applied as X·W + b), split into h heads of d_model/h columns, attended per
// head, concatenated and projected by W_O.
struct MultiHeadWeights {
  Matrix w_q, w_k, w_v, w_o;     // [d_model x d_model]
  RowVector b_q, b_k, b_v, b_o;  // [d_model]; empty = no bias
};

struct MultiHeadResult {
  std::vector<AttentionResult> heads;  // per head: scores, scaled, weights, output [n x d_head]
  Matrix concat;                       // [n x d_model] heads side by side
  Matrix output;                       // [n x d_model] concat · W_O + b_O
};

MultiHeadResult multi_head_attention(Backend& backend, const Matrix& x, const MultiHeadWeights& w,
                                     int heads, const AttentionOptions& options);

}  // namespace attnscope
