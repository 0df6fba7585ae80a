#pragma once
// The CUDA kernels of the modern-LLM ops (cuda_kernels.cu), each behind a host function that checks
// nothing and launches on the default stream: cuda_backend.cu checks the shapes first. Names and
// meanings follow the Backend ops of core/backend/backend.h.
#include <vector>

#include "core/backend/backend.h"

namespace attnscope::cuda {

// x = cap · tanh(x / cap)
void softcap(Tensor& x, float cap);
// y = x / sqrt(mean(x²) + eps) · (offset + w) over groups of weight.cols columns.
void rms_norm(const Tensor& x, const Tensor& weight, float eps, float offset, Tensor& y);
// out = act(gate) · up
void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out);
// rotate_half RoPE in place; inv_freq has head_dim / 2 <= kMaxRopeHalf entries.
inline constexpr int kMaxRopeHalf = 256;
void rope(Tensor& x, int heads, int head_dim, const std::vector<float>& inv_freq, int pos0);
// Masked entries of x [queries x keys] become -inf; `padding` is on the device (or nullptr).
void mask_fill(Tensor& x, const AttentionMask& mask, const unsigned char* padding);
// For `blocks` score matrices [n x m] one after the other at `scores` (rows m floats apart):
// softcap (cap > 0), mask, softmax of each row. `padding` is on the device (or nullptr).
void attention_softmax(float* scores, int blocks, int n, int m, float cap,
                       const AttentionMask& mask, const unsigned char* padding);
// dst [count floats] = src widened (src: `count` values of `dtype` on the device).
void widen(const void* src, DType dtype, long count, float* dst);

}  // namespace attnscope::cuda
