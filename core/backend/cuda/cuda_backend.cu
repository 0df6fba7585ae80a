// The CUDA backend: cuBLAS for the GEMMs, kernels written here for everything else. Every op has
// the name and meaning of its CPU counterpart (core/backend/cpu/cpu_backend.cpp), which is the
// reference it is tested against (tests/gpu/backend_equivalence_test.cpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/backend/backend.h"
#include "core/backend/cuda/cuda_kernels.h"

namespace attnscope {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS ") + what + " failed (status " +
                             std::to_string(static_cast<int>(s)) + ")");
}
void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("cuda backend: ") + what);
}

constexpr int kThreads = 256;

// ---- elementwise kernels over a strided [rows x cols] tensor: one thread per element ----------

__global__ void add_bias_kernel(float* x, int rows, int cols, int stride, const float* bias) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * cols) return;
  const int r = i / cols, c = i % cols;
  x[static_cast<long>(r) * stride + c] += bias[c];
}

__global__ void add_kernel(float* x, int rows, int cols, int sx, const float* y, int sy) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * cols) return;
  const int r = i / cols, c = i % cols;
  x[static_cast<long>(r) * sx + c] += y[static_cast<long>(r) * sy + c];
}

__global__ void scale_kernel(float* x, int rows, int cols, int stride, float s) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * cols) return;
  const int r = i / cols, c = i % cols;
  x[static_cast<long>(r) * stride + c] *= s;
}

__global__ void copy_kernel(const float* src, int ss, float* dst, int sd, int rows, int cols) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * cols) return;
  const int r = i / cols, c = i % cols;
  dst[static_cast<long>(r) * sd + c] = src[static_cast<long>(r) * ss + c];
}

__global__ void gelu_kernel(float* x, int rows, int cols, int stride, bool erf_form) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * cols) return;
  const int r = i / cols, c = i % cols;
  float& v = x[static_cast<long>(r) * stride + c];
  if (erf_form) {
    v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  } else {
    const float k = 0.79788456080286536f;  // sqrt(2/pi)
    v = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
  }
}

// ---- row reductions: one block per row ---------------------------------------------------------

__device__ float block_reduce_max(float v, float* shared) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : -INFINITY;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  v = shared[0];
  __syncthreads();
  return v;
}

__device__ float block_reduce_sum(float v, float* shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : 0.0f;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  v = shared[0];
  __syncthreads();
  return v;
}

// Stable softmax of each row; a row that is entirely -inf (fully masked) becomes zeros.
__global__ void softmax_rows_kernel(float* x, int cols, int stride) {
  __shared__ float shared[32];
  float* row = x + static_cast<long>(blockIdx.x) * stride;
  float mx = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) mx = fmaxf(mx, row[c]);
  mx = block_reduce_max(mx, shared);
  if (!isfinite(mx)) {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) row[c] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float e = expf(row[c] - mx);
    row[c] = e;
    sum += e;
  }
  sum = block_reduce_sum(sum, shared);
  const float inv = 1.0f / sum;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) row[c] *= inv;
}

__global__ void layer_norm_kernel(const float* x, int sx, const float* gamma, const float* beta,
                                  float eps, float* y, int sy, int cols) {
  __shared__ float shared[32];
  const float* in = x + static_cast<long>(blockIdx.x) * sx;
  float* out = y + static_cast<long>(blockIdx.x) * sy;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += in[c];
  const float mean = block_reduce_sum(sum, shared) / cols;
  float sq = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = in[c] - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(block_reduce_sum(sq, shared) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
}

int blocks_for(long n) {
  return static_cast<int>((n + kThreads - 1) / kThreads);
}

// A weight in device memory in its file's format (16-bit weights stay 16-bit: half the memory);
// `linear` widens a 16-bit one into a float scratch matrix right before cuBLAS's SGEMM, the same
// float arithmetic as for F32 weights. (cuBLAS multiplies bf16 only by bf16, and rounding the
// activations to 16 bits would cost the 1e-4 agreement with the CPU.)
struct CudaPreparedWeight final : PreparedWeight {
  std::shared_ptr<void> data;
  DType dtype = DType::kF32;
  int rows = 0, cols = 0;
  bool transposed = false;
};

class CudaBackend final : public Backend {
 public:
  using Backend::linear;
  using Backend::prepare_weight;

  explicit CudaBackend(int device) : device_(device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    description_ =
        std::string(prop.name) + " (CUDA, " + std::to_string(prop.totalGlobalMem >> 20) + " MiB)";
    check(cublasCreate(&blas_), "cublasCreate");
  }
  ~CudaBackend() override {
    if (blas_) cublasDestroy(blas_);
  }

  std::string name() const override { return "cuda"; }
  std::string description() const override { return description_; }

  Tensor alloc(int rows, int cols) override {
    require(rows >= 0 && cols >= 0, "negative tensor shape");
    const size_t bytes = sizeof(float) * std::max<size_t>(1, size_t(rows) * size_t(cols));
    float* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    check(cudaMemset(p, 0, bytes), "cudaMemset");
    Tensor t;
    t.data = p;
    t.rows = rows;
    t.cols = cols;
    t.stride = cols;
    t.owner = std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
    return t;
  }
  Tensor upload(const Matrix& m) override {
    Tensor t = alloc(static_cast<int>(m.rows()), static_cast<int>(m.cols()));
    if (m.size())
      check(cudaMemcpy(t.data, m.data(), sizeof(float) * m.size(), cudaMemcpyHostToDevice),
            "upload");
    return t;
  }
  Matrix download(const Tensor& t) override {
    Matrix m(t.rows, t.cols);
    if (m.size())
      check(cudaMemcpy2D(m.data(), sizeof(float) * t.cols, t.data, sizeof(float) * t.stride,
                         sizeof(float) * t.cols, t.rows, cudaMemcpyDeviceToHost),
            "download");
    return m;
  }
  void copy(const Tensor& src, Tensor& dst) override {
    require(src.rows == dst.rows && src.cols == dst.cols, "copy: shapes differ");
    const long n = long(src.rows) * src.cols;
    if (n == 0) return;
    copy_kernel<<<blocks_for(n), kThreads>>>(src.data, src.stride, dst.data, dst.stride, src.rows,
                                             src.cols);
    check(cudaGetLastError(), "copy");
  }
  void synchronize() override { check(cudaDeviceSynchronize(), "synchronize"); }

  // Row-major C = A·op(B) is column-major Cᵀ = op(B)ᵀ·Aᵀ: swap the operands, keep the strides.
  void matmul(const Tensor& a, const Tensor& b, bool transpose_b, Tensor& c, float alpha,
              float beta) override {
    const int k_b = transpose_b ? b.cols : b.rows;
    const int m = transpose_b ? b.rows : b.cols;
    require(a.cols == k_b && c.rows == a.rows && c.cols == m, "matmul: shapes differ");
    if (c.rows == 0 || c.cols == 0) return;
    if (a.cols == 0) {  // empty inner dimension: C = beta·C
      scale(c, beta);
      return;
    }
    check(cublasSgemm(blas_, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, m, a.rows,
                      a.cols, &alpha, b.data, b.stride, a.data, a.stride, &beta, c.data, c.stride),
          "sgemm");
  }
  void add_bias(Tensor& x, const Tensor& bias) override {
    require(bias.rows == 1 && bias.cols == x.cols, "add_bias: bias must be [1 x cols]");
    const long n = long(x.rows) * x.cols;
    if (n == 0) return;
    add_bias_kernel<<<blocks_for(n), kThreads>>>(x.data, x.rows, x.cols, x.stride, bias.data);
    check(cudaGetLastError(), "add_bias");
  }
  void add(Tensor& x, const Tensor& y) override {
    require(x.rows == y.rows && x.cols == y.cols, "add: shapes differ");
    const long n = long(x.rows) * x.cols;
    if (n == 0) return;
    add_kernel<<<blocks_for(n), kThreads>>>(x.data, x.rows, x.cols, x.stride, y.data, y.stride);
    check(cudaGetLastError(), "add");
  }
  void scale(Tensor& x, float s) override {
    const long n = long(x.rows) * x.cols;
    if (n == 0) return;
    scale_kernel<<<blocks_for(n), kThreads>>>(x.data, x.rows, x.cols, x.stride, s);
    check(cudaGetLastError(), "scale");
  }
  void mask_fill(Tensor& x, const AttentionMask& mask) override {
    require(mask.key_padding.empty() || int(mask.key_padding.size()) == x.cols,
            "mask_fill: key padding length differs from the number of keys");
    cuda::mask_fill(x, mask, device_padding(mask));
  }
  void softmax_rows(Tensor& x) override {
    if (x.rows == 0 || x.cols == 0) return;
    softmax_rows_kernel<<<x.rows, kThreads>>>(x.data, x.cols, x.stride);
    check(cudaGetLastError(), "softmax_rows");
  }
  void layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                  Tensor& y) override {
    require(y.rows == x.rows && y.cols == x.cols && gamma.cols == x.cols && beta.cols == x.cols,
            "layer_norm: shapes differ");
    if (x.rows == 0 || x.cols == 0) return;
    layer_norm_kernel<<<x.rows, kThreads>>>(x.data, x.stride, gamma.data, beta.data, eps, y.data,
                                            y.stride, x.cols);
    check(cudaGetLastError(), "layer_norm");
  }
  void gelu(Tensor& x, Gelu kind) override {
    const long n = long(x.rows) * x.cols;
    if (n == 0) return;
    gelu_kernel<<<blocks_for(n), kThreads>>>(x.data, x.rows, x.cols, x.stride, kind == Gelu::kErf);
    check(cudaGetLastError(), "gelu");
  }

  void softcap(Tensor& x, float cap) override {
    require(cap > 0, "softcap: the cap must be positive");
    cuda::softcap(x, cap);
  }
  void rms_norm(const Tensor& x, const Tensor& weight, float eps, float weight_offset,
                Tensor& y) override {
    const int g = weight.cols;
    require(weight.rows == 1 && g > 0 && x.cols % g == 0 && y.rows == x.rows && y.cols == x.cols,
            "rms_norm: shapes differ");
    cuda::rms_norm(x, weight, eps, weight_offset, y);
  }
  void gated_activation(const Tensor& gate, const Tensor& up, Activation act,
                        Tensor& out) override {
    require(gate.rows == up.rows && gate.cols == up.cols && out.rows == gate.rows &&
                out.cols == gate.cols,
            "gated_activation: shapes differ");
    cuda::gated_activation(gate, up, act, out);
  }
  void rope(Tensor& x, int heads, int head_dim, const std::vector<float>& inv_freq,
            int pos0) override {
    require(head_dim > 0 && head_dim % 2 == 0 && heads > 0 && x.cols == heads * head_dim,
            "rope: x's columns are not heads · head_dim");
    require(int(inv_freq.size()) == head_dim / 2, "rope: inv_freq must have head_dim / 2 entries");
    require(head_dim / 2 <= cuda::kMaxRopeHalf, "rope: head_dim above 512");
    require(pos0 >= 0, "rope: negative position");
    cuda::rope(x, heads, head_dim, inv_freq, pos0);
  }

  // Weights keep their file's format in device memory (CudaPreparedWeight).
  std::shared_ptr<const PreparedWeight> prepare_weight(const WeightView& w,
                                                       bool transpose_w) override {
    require(w.data && w.rows > 0 && w.cols > 0, "prepare_weight: empty weight");
    auto p = std::make_shared<CudaPreparedWeight>();
    const bool quantized = dtype_is_quantized(w.dtype);
    // A quantised weight becomes F32 on the device: dequantised on the host (quant.h, ggml's
    // definition), a bounded number of rows at a time, each slice copied up.
    const DType device_dtype = quantized ? DType::kF32 : w.dtype;
    const size_t bytes = size_t(w.rows) * size_t(w.cols) * size_t(dtype_bytes(device_dtype));
    void* mem = nullptr;
    check(cudaMalloc(&mem, bytes), "cudaMalloc");
    p->data = std::shared_ptr<void>(mem, [](void* q) { cudaFree(q); });
    if (quantized) {
      const size_t row_bytes = dtype_row_bytes(w.dtype, size_t(w.cols));
      const int slice_rows = std::max(1, int((16u << 20) / (size_t(w.cols) * sizeof(float))));
      std::vector<float> host(size_t(std::min(slice_rows, w.rows)) * size_t(w.cols));
      for (int r0 = 0; r0 < w.rows; r0 += slice_rows) {
        const int rows = std::min(slice_rows, w.rows - r0);
        for (int r = 0; r < rows; ++r)
          dequantize_row(w.dtype, static_cast<const unsigned char*>(w.data) + (r0 + r) * row_bytes,
                         host.data() + size_t(r) * size_t(w.cols), w.cols);
        check(cudaMemcpy(static_cast<float*>(mem) + size_t(r0) * size_t(w.cols), host.data(),
                         size_t(rows) * size_t(w.cols) * sizeof(float), cudaMemcpyHostToDevice),
              "upload weight");
      }
    } else {
      check(cudaMemcpy(mem, w.data, bytes, cudaMemcpyHostToDevice), "upload weight");
    }
    p->dtype = device_dtype;
    p->rows = w.rows;
    p->cols = w.cols;
    p->transposed = transpose_w;
    p->in = transpose_w ? w.cols : w.rows;
    p->out = transpose_w ? w.rows : w.cols;
    return p;
  }
  void linear(const Tensor& x, const PreparedWeight& w, const Tensor& bias, Tensor& y) override {
    const auto* p = dynamic_cast<const CudaPreparedWeight*>(&w);
    require(p != nullptr, "linear: weight prepared by another backend");
    require(x.cols == w.in && y.rows == x.rows && y.cols == w.out &&
                (bias.cols == 0 || (bias.rows == 1 && bias.cols == w.out)),
            "linear: shapes differ");
    Tensor wt;  // W as a float tensor: the weight itself, or widened into the scratch
    wt.rows = p->rows;
    wt.cols = p->cols;
    wt.stride = p->cols;
    if (p->dtype == DType::kF32) {
      wt.data = static_cast<float*>(p->data.get());
    } else {
      const long count = long(p->rows) * p->cols;
      wt.data = scratch(widen_scratch_, count);
      cuda::widen(p->data.get(), p->dtype, count, wt.data);
    }
    matmul(x, wt, p->transposed, y, 1.0f, 0.0f);
    if (bias.cols > 0) add_bias(y, bias);
  }

  // Grouped-query attention: for each KV head, its group of query heads in one strided batched
  // SGEMM (K shared: stride 0), every score matrix [n x m] one after the other in a scratch
  // buffer, one kernel for softcap + mask + softmax over all their rows, and P·V batched the same
  // way straight into the heads' columns of `context`.
  void attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int heads, int kv_heads,
                       int head_dim, float score_factor, float logit_softcap,
                       const AttentionMask& mask, Tensor& context,
                       std::vector<Matrix>* weights) override {
    check_attention_shapes(q, k, v, heads, kv_heads, head_dim, mask, context);
    const int n = q.rows, m = k.rows, group = heads / kv_heads, dh = head_dim;
    if (weights) {
      weights->resize(heads);
      for (Matrix& w : *weights) w.setZero(n, m);  // overwritten below, unless n or m is 0
    }
    if (n == 0) return;
    if (m == 0) {  // no key: every row of weights and context is zero
      check(cudaMemset2D(context.data, sizeof(float) * context.stride, 0,
                         sizeof(float) * context.cols, context.rows),
            "clear context");
      return;
    }
    const long block = long(n) * m;
    float* s = scratch(scores_scratch_, block * heads);
    const float one = 1.0f, zero = 0.0f;
    for (int g = 0; g < kv_heads; ++g) {
      const int h0 = g * group;
      // S_hᵀ [m x n] (column-major) = K_g · Q_hᵀ
      check(cublasSgemmStridedBatched(blas_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, dh, &score_factor,
                                      k.data + g * dh, k.stride, 0, q.data + h0 * dh, q.stride, dh,
                                      &zero, s + h0 * block, m, block, group),
            "attention scores");
    }
    cuda::attention_softmax(s, heads, n, m, logit_softcap, mask, device_padding(mask));
    for (int g = 0; g < kv_heads; ++g) {
      const int h0 = g * group;
      // O_hᵀ [dh x n] (column-major) = V_gᵀ · P_hᵀ
      check(cublasSgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_N, dh, n, m, &one,
                                      v.data + g * dh, v.stride, 0, s + h0 * block, m, block, &zero,
                                      context.data + h0 * dh, context.stride, dh, group),
            "attention context");
    }
    if (weights)
      for (int h = 0; h < heads; ++h)
        check(cudaMemcpy((*weights)[h].data(), s + h * block, sizeof(float) * block,
                         cudaMemcpyDeviceToHost),
              "download attention weights");
  }

 private:
  // A device buffer of at least `count` floats, grown as needed and kept for the next call.
  float* scratch(std::shared_ptr<float>& buf, long count) {
    long& capacity = &buf == &widen_scratch_ ? widen_capacity_ : scores_capacity_;
    if (!buf || count > capacity) {
      buf.reset();
      float* p = nullptr;
      check(cudaMalloc(&p, sizeof(float) * std::max(1L, count)), "cudaMalloc scratch");
      buf = std::shared_ptr<float>(p, [](float* q) { cudaFree(q); });
      capacity = count;
    }
    return buf.get();
  }
  // The mask's key padding in device memory (nullptr when it has none), kept until the next call.
  const unsigned char* device_padding(const AttentionMask& mask) {
    if (mask.key_padding.empty()) return nullptr;
    const size_t n = mask.key_padding.size();
    if (!padding_ || n > padding_capacity_) {
      padding_.reset();
      unsigned char* p = nullptr;
      check(cudaMalloc(&p, n), "cudaMalloc");
      padding_ = std::shared_ptr<unsigned char>(p, [](unsigned char* q) { cudaFree(q); });
      padding_capacity_ = n;
    }
    check(cudaMemcpy(padding_.get(), mask.key_padding.data(), n, cudaMemcpyHostToDevice),
          "upload mask");
    return padding_.get();
  }

  int device_ = 0;
  std::string description_;
  cublasHandle_t blas_ = nullptr;
  std::shared_ptr<float> widen_scratch_, scores_scratch_;
  long widen_capacity_ = 0, scores_capacity_ = 0;
  std::shared_ptr<unsigned char> padding_;
  size_t padding_capacity_ = 0;
};

}  // namespace
}  // namespace attnscope

// Without a GPU, cudaGetDeviceCount returns cudaErrorInsufficientDriver (35) and leaves the count
// unwritten: start from 0 and treat every error as "no device".
extern "C" __attribute__((visibility("default"))) attnscope::Backend* attnscope_create_cuda_backend(
    char* error, int error_len) {
  auto fail = [&](const std::string& why) -> attnscope::Backend* {
    if (error && error_len > 0) std::snprintf(error, error_len, "%s", why.c_str());
    return nullptr;
  };
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
    return fail(e == cudaErrorNoDevice ? "no CUDA device found" : "no CUDA driver found");
  if (e != cudaSuccess) return fail(std::string("CUDA is unavailable: ") + cudaGetErrorString(e));
  if (count <= 0) return fail("no CUDA device found");
  try {
    return new attnscope::CudaBackend(0);
  } catch (const std::exception& ex) {
    return fail(ex.what());
  }
}
