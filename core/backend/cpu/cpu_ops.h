#pragma once
// The CPU backend's row and elementwise ops and its attention, as free functions on Tensors (the
// meaning of each is the Backend op of the same name in core/backend/backend.h). cpu_backend.cpp
// forwards to them; they share the cores through share_work when the work is large enough.
#include <vector>

#include "core/backend/backend.h"

namespace attnscope::cpu {

// Masked entries of a [queries x keys] matrix (rows x cols floats, `stride` apart) become -inf;
// its row i is query first_row + i of the mask.
void mask_fill(float* x, int rows, int cols, int stride, const AttentionMask& mask,
               int first_row = 0);
// Stable softmax of every row; a row that is entirely -inf becomes zeros.
void softmax_rows(float* x, int rows, int cols, int stride);

void softcap(Tensor& x, float cap);
void rms_norm(const Tensor& x, const Tensor& weight, float eps, float weight_offset, Tensor& y);
void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out);
void gelu(Tensor& x, Gelu kind);
void rope(Tensor& x, int heads, int head_dim, const std::vector<float>& inv_freq, int pos0);
void embedding(const WeightView& table, const std::vector<int>& ids, Tensor& out);

// One head of attention_heads: its weights softmax(mask(softcap(score_factor · qh·khᵀ))) into
// s [n x m] and, when vh and out are given, s·vh into out [n x dh]. Recomputing a head's weights
// later (RecomputedAttention) calls this same function, so the numbers are the forward's.
void attention_head(const Tensor& qh, const Tensor& kh, const Tensor* vh, float score_factor,
                    float logit_softcap, const AttentionMask& mask, Matrix& s, Tensor* out);

// Backend::attention_heads with the heads side by side on the cores (shapes already checked).
void attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int heads, int kv_heads,
                     int head_dim, float score_factor, float logit_softcap,
                     const AttentionMask& mask, Tensor& context, std::vector<Matrix>* weights);

}  // namespace attnscope::cpu
