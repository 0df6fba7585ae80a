#pragma once
// The one interface every compute backend implements (ggml's idea): the ops the models need, on
// tensors whose memory the backend owns. The CPU backend (Eigen) is the readable reference; the
// CUDA backend lives in a separately built module (core/backend/cuda) loaded with dlopen.
//
// This header is self-contained on purpose: the CUDA module includes it without linking the core,
// so nothing here may need a symbol from attnscope_core.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/util/matrix.h"

namespace attnscope {

// A 2-D float tensor in a backend's memory: `rows x cols`, row-major, `stride` floats between the
// starts of two rows (stride >= cols, so column slices such as one head's Q are views, no copies).
struct Tensor {
  float* data = nullptr;
  int rows = 0;
  int cols = 0;
  int stride = 0;
  std::shared_ptr<void> owner;  // keeps the allocation alive while any view exists

  // Columns [c0, c0 + n) of every row.
  Tensor cols_view(int c0, int n) const {
    Tensor t = *this;
    t.data = data + c0;
    t.cols = n;
    return t;
  }
  // Rows [r0, r0 + n).
  Tensor rows_view(int r0, int n) const {
    Tensor t = *this;
    t.data = data + static_cast<std::ptrdiff_t>(r0) * stride;
    t.rows = n;
    return t;
  }
  bool contiguous() const { return stride == cols; }
};

// Which entries of a [queries x keys] score matrix are masked (their weight becomes exactly 0).
struct AttentionMask {
  bool causal = false;     // key j > query i masked (GPT-2)
  bool mask_self = false;  // key j == query i masked (the lesson model's "exclude self")
  std::vector<std::uint8_t> key_padding;  // size = keys, 1 = masked; empty = none
  bool any() const { return causal || mask_self || !key_padding.empty(); }
};

enum class Gelu { kTanh, kErf };

// A weight matrix in a backend's own form, made once when a model's weights reach the backend and
// used by every `linear` after (the CPU backend repacks it into the panels its vector kernel
// reads).
struct PreparedWeight {
  virtual ~PreparedWeight() = default;
};  // GPT-2 uses the tanh approximation, BERT the exact erf form

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;  // "cpu" | "cuda"
  virtual std::string description()
      const = 0;  // e.g. "CPU (AVX-512 + Eigen, 2 threads)", "NVIDIA H200"

  // Memory. Fresh tensors are zero-filled.
  virtual Tensor alloc(int rows, int cols) = 0;
  virtual Tensor upload(const Matrix& m) = 0;
  virtual Matrix download(const Tensor& t) = 0;
  virtual void copy(const Tensor& src, Tensor& dst) = 0;  // same shape
  virtual void synchronize() {}

  // C = alpha · A · op(B) + beta · C, with A [n x k], op(B) [k x m] (B or Bᵀ), C [n x m].
  virtual void matmul(const Tensor& a, const Tensor& b, bool transpose_b, Tensor& c,
                      float alpha = 1.0f, float beta = 0.0f) = 0;
  // The backend's prepared form of the weight W of `linear` (op(W) = Wᵀ when `transpose_w`), or
  // nullptr when the backend has none; `w` must stay alive and unchanged while it is in use.
  virtual std::shared_ptr<const PreparedWeight> prepare_weight(const Tensor& w, bool transpose_w) {
    (void)w;
    (void)transpose_w;
    return nullptr;
  }
  // Y [n x out] = X [n x in] · op(W) + bias, bias [1 x out]. `prepared` is what prepare_weight gave
  // for this W (it may be nullptr).
  virtual void linear(const Tensor& x, const Tensor& w, bool transpose_w,
                      const PreparedWeight* prepared, const Tensor& bias, Tensor& y) {
    (void)prepared;
    matmul(x, w, transpose_w, y);
    add_bias(y, bias);
  }
  // X[i, :] += bias[0, :]   (bias is [1 x cols])
  virtual void add_bias(Tensor& x, const Tensor& bias) = 0;
  // X += Y (same shape): residual connections.
  virtual void add(Tensor& x, const Tensor& y) = 0;
  // X *= s
  virtual void scale(Tensor& x, float s) = 0;
  // Masked entries of a [queries x keys] matrix become -inf.
  virtual void mask_fill(Tensor& x, const AttentionMask& mask) = 0;
  // Stable row softmax in place: subtract the row max; a row that is entirely -inf becomes zeros.
  virtual void softmax_rows(Tensor& x) = 0;
  // Y = (X - mean) / sqrt(var + eps) · gamma + beta, per row; gamma, beta are [1 x cols].
  // Self-attention of every head at once. Head h's Q, K and V are columns [h·dh, (h+1)·dh) of
  // the blocks [0, d), [d, 2d) and [2d, 3d) of `qkv` [n x 3d] (d = heads·dh, context.cols); its
  // output weights·V goes to the same columns of `context` [n x d], and its [n x n] weights
  // softmax(mask(score_factor · Q·Kᵀ)) to (*weights)[h] when `weights` is not null (resized to
  // `heads`). This default runs the heads one after the other with the ops above; a backend may
  // run them side by side.
  virtual void self_attention_heads(const Tensor& qkv, int heads, float score_factor,
                                    const AttentionMask& mask, Tensor& context,
                                    std::vector<Matrix>* weights) {
    const int n = qkv.rows, d = context.cols, dh = d / heads;
    Tensor scores = alloc(n, n);
    if (weights) weights->resize(heads);
    for (int h = 0; h < heads; ++h) {
      const Tensor q = qkv.cols_view(h * dh, dh);
      const Tensor k = qkv.cols_view(d + h * dh, dh);
      const Tensor v = qkv.cols_view(2 * d + h * dh, dh);
      matmul(q, k, /*transpose_b=*/true, scores, score_factor, 0.0f);
      if (mask.any()) mask_fill(scores, mask);
      softmax_rows(scores);
      if (weights) (*weights)[h] = download(scores);
      Tensor out = context.cols_view(h * dh, dh);
      matmul(scores, v, false, out, 1.0f, 0.0f);
    }
  }
  virtual void layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                          Tensor& y) = 0;
  virtual void gelu(Tensor& x, Gelu kind) = 0;
};

// C entry point exported by the CUDA module (libattnscope_cuda.so). Returns nullptr and writes a
// user-readable reason into `error` when no usable device exists.
using CreateBackendFn = Backend* (*)(char* error, int error_len);
inline constexpr const char* kCudaModuleEntry = "attnscope_create_cuda_backend";
inline constexpr const char* kCudaModuleFile = "libattnscope_cuda.so";

}  // namespace attnscope
