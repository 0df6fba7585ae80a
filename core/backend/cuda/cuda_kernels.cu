// Kernels of the modern-LLM ops (cuda_kernels.h). The CPU versions (core/backend/cpu/cpu_ops.cpp)
// are the reference they are tested against (tests/gpu/backend_equivalence_test.cpp), so each
// computes the same float formula: RMSNorm's mean of squares and RoPE's angle in float as Hugging
// Face does, the angle's cosine and sine in double (the CPU's too).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "core/backend/cuda/cuda_kernels.h"

namespace attnscope::cuda {
namespace {

constexpr int kThreads = 256;

void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}
int blocks_for(long n) {
  return static_cast<int>((n + kThreads - 1) / kThreads);
}

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}
__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}
// Sum / max over the block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
__device__ float block_sum(float v, float* shared) {
  v = warp_sum(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : 0.0f;
  if (warp == 0) v = warp_sum(v);
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  v = shared[0];
  __syncthreads();
  return v;
}
__device__ float block_max(float v, float* shared) {
  v = warp_max(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : -INFINITY;
  if (warp == 0) v = warp_max(v);
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  v = shared[0];
  __syncthreads();
  return v;
}

__global__ void softcap_kernel(float* x, int rows, int cols, int stride, float cap) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * cols) return;
  float& v = x[(i / cols) * stride + i % cols];
  v = cap * tanhf(v / cap);
}

// One block per (row, group): blockIdx.x = row · groups + group.
__global__ void rms_norm_kernel(const float* x, int sx, const float* w, int g, int groups,
                                float eps, float offset, float* y, int sy) {
  __shared__ float shared[32];
  const int row = blockIdx.x / groups, group = blockIdx.x % groups;
  const float* in = x + static_cast<long>(row) * sx + group * g;
  float* out = y + static_cast<long>(row) * sy + group * g;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < g; c += blockDim.x) ss += in[c] * in[c];
  const float r = 1.0f / sqrtf(block_sum(ss, shared) / g + eps);
  for (int c = threadIdx.x; c < g; c += blockDim.x) out[c] = in[c] * r * (offset + w[c]);
}

__device__ float activation(float g, Activation act) {
  switch (act) {
    case Activation::kSiLU:
      return g / (1.0f + expf(-g));
    case Activation::kGeluTanh:
      return 0.5f * g * (1.0f + tanhf(0.79788456080286536f * (g + 0.044715f * g * g * g)));
    default:
      return 0.5f * g * (1.0f + erff(g * 0.70710678118654752f));
  }
}

__global__ void gated_kernel(const float* gate, int sg, const float* up, int su, float* out, int so,
                             int rows, int cols, Activation act) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * cols) return;
  const long r = i / cols, c = i % cols;
  out[r * so + c] = activation(gate[r * sg + c], act) * up[r * su + c];
}

struct InvFreq {
  float v[kMaxRopeHalf];
};

// One thread per (row, head, j < half).
__global__ void rope_kernel(float* x, int rows, int stride, int heads, int head_dim, InvFreq f,
                            int pos0) {
  const int half = head_dim / 2;
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * heads * half) return;
  const int j = i % half, h = (i / half) % heads;
  const long row = i / (static_cast<long>(half) * heads);
  const float angle = __fmul_rn(static_cast<float>(pos0 + row), f.v[j]);  // float, as HF
  double s, c;
  sincos(static_cast<double>(angle), &s, &c);
  const float cs = static_cast<float>(c), sn = static_cast<float>(s);
  float* x1 = x + row * stride + h * head_dim + j;
  float* x2 = x1 + half;
  const float a = *x1, b = *x2;
  *x1 = a * cs - b * sn;
  *x2 = b * cs + a * sn;
}

struct MaskParams {
  bool causal, mask_self;
  int window, offset;
};
__device__ bool is_masked(const MaskParams& m, const unsigned char* padding, int i, int j) {
  const int q = m.offset + i;
  return (m.causal && j > q) || (m.mask_self && j == q) || (m.window > 0 && q - j >= m.window) ||
         (padding && padding[j]);
}
MaskParams params_of(const AttentionMask& mask) {
  return {mask.causal, mask.mask_self, mask.window, mask.query_offset};
}

__global__ void mask_fill_kernel(float* x, int rows, int cols, int stride, MaskParams m,
                                 const unsigned char* padding) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * cols) return;
  const int r = i / cols, c = i % cols;
  if (is_masked(m, padding, r, c)) x[static_cast<long>(r) * stride + c] = -INFINITY;
}

// One block per row of all the score matrices (blockIdx.x = block · n + i).
__global__ void attention_softmax_kernel(float* s, int n, int m, float cap, MaskParams mp,
                                         const unsigned char* padding) {
  __shared__ float shared[32];
  const int i = blockIdx.x % n;
  float* row = s + static_cast<long>(blockIdx.x) * m;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < m; j += blockDim.x) {
    float v = row[j];
    if (cap > 0) v = cap * tanhf(v / cap);
    if (is_masked(mp, padding, i, j)) v = -INFINITY;
    row[j] = v;
    mx = fmaxf(mx, v);
  }
  mx = block_max(mx, shared);
  if (!isfinite(mx)) {  // every key masked: a row of zeros
    for (int j = threadIdx.x; j < m; j += blockDim.x) row[j] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (int j = threadIdx.x; j < m; j += blockDim.x) {
    const float e = expf(row[j] - mx);  // exp(-inf) = 0 for masked keys
    row[j] = e;
    sum += e;
  }
  const float inv = 1.0f / block_sum(sum, shared);
  for (int j = threadIdx.x; j < m; j += blockDim.x) row[j] *= inv;
}

__global__ void widen_kernel(const unsigned short* src, bool bf16, long count, float* dst) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const unsigned short h = src[i];
  if (bf16) {
    dst[i] = __uint_as_float(static_cast<unsigned>(h) << 16);
  } else {
    dst[i] = __half2float(__ushort_as_half(h));
  }
}

}  // namespace

void softcap(Tensor& x, float cap) {
  const long n = static_cast<long>(x.rows) * x.cols;
  if (n == 0) return;
  softcap_kernel<<<blocks_for(n), kThreads>>>(x.data, x.rows, x.cols, x.stride, cap);
  check_launch("softcap");
}

void rms_norm(const Tensor& x, const Tensor& weight, float eps, float offset, Tensor& y) {
  const int g = weight.cols, groups = x.cols / g;
  if (x.rows == 0 || groups == 0) return;
  const int threads = g >= 256 ? 256 : (g + 31) / 32 * 32;
  rms_norm_kernel<<<x.rows * groups, threads>>>(x.data, x.stride, weight.data, g, groups, eps,
                                                offset, y.data, y.stride);
  check_launch("rms_norm");
}

void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out) {
  const long n = static_cast<long>(gate.rows) * gate.cols;
  if (n == 0) return;
  gated_kernel<<<blocks_for(n), kThreads>>>(gate.data, gate.stride, up.data, up.stride, out.data,
                                            out.stride, gate.rows, gate.cols, act);
  check_launch("gated_activation");
}

void rope(Tensor& x, int heads, int head_dim, const std::vector<float>& inv_freq, int pos0) {
  const long n = static_cast<long>(x.rows) * heads * (head_dim / 2);
  if (n == 0) return;
  InvFreq f{};
  for (std::size_t j = 0; j < inv_freq.size() && j < kMaxRopeHalf; ++j) f.v[j] = inv_freq[j];
  rope_kernel<<<blocks_for(n), kThreads>>>(x.data, x.rows, x.stride, heads, head_dim, f, pos0);
  check_launch("rope");
}

void mask_fill(Tensor& x, const AttentionMask& mask, const unsigned char* padding) {
  const long n = static_cast<long>(x.rows) * x.cols;
  if (n == 0) return;
  mask_fill_kernel<<<blocks_for(n), kThreads>>>(x.data, x.rows, x.cols, x.stride, params_of(mask),
                                                padding);
  check_launch("mask_fill");
}

void attention_softmax(float* scores, int blocks, int n, int m, float cap,
                       const AttentionMask& mask, const unsigned char* padding) {
  if (blocks == 0 || n == 0 || m == 0) return;
  const int threads = m >= 256 ? 256 : (m + 31) / 32 * 32;
  attention_softmax_kernel<<<blocks * n, threads>>>(scores, n, m, cap, params_of(mask), padding);
  check_launch("attention softmax");
}

void widen(const void* src, DType dtype, long count, float* dst) {
  if (count == 0) return;
  widen_kernel<<<blocks_for(count), kThreads>>>(static_cast<const unsigned short*>(src),
                                                dtype == DType::kBF16, count, dst);
  check_launch("widen");
}

}  // namespace attnscope::cuda
