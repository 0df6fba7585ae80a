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

#include "core/backend/dtype.h"
#include "core/util/error.h"
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
// Query i sits at absolute position query_offset + i and key j at position j: with a KV cache the
// n new queries are the last n of the m keys (query_offset = m - n).
struct AttentionMask {
  bool causal = false;     // key j > query_offset + i masked (decoders)
  bool mask_self = false;  // key j == query_offset + i masked (the lesson model's "exclude self")
  std::vector<std::uint8_t> key_padding;  // size = keys, 1 = masked; empty = none
  // Sliding window (Mistral, Gemma's sliding layers; 0 = none): key j masked when
  // query_offset + i - j >= window, i.e. each query sees itself and the window - 1 keys before it
  // (Hugging Face masking_utils: kv_idx > q_idx - sliding_window is visible).
  int window = 0;
  int query_offset = 0;
  bool any() const { return causal || mask_self || !key_padding.empty() || window > 0; }
  // Whether key j is masked for query i (the readable definition every backend implements).
  bool masked(int i, int j) const {
    const int q = query_offset + i;
    return (causal && j > q) || (mask_self && j == q) || (window > 0 && q - j >= window) ||
           (!key_padding.empty() && key_padding[j]);
  }
};

enum class Gelu { kTanh, kErf };  // GPT-2 uses the tanh approximation, BERT the exact erf form

// The activation of a gated MLP, act(gate) · up: SiLU (Llama, Mistral, Qwen: x·sigmoid(x)), GELU
// with tanh (Gemma's gelu_pytorch_tanh), GELU with erf.
enum class Activation { kSiLU, kGeluTanh, kGeluErf };

// A weight matrix as it lies in its file: `rows x cols`, row-major and contiguous, in the file's
// number format, in host memory (typically a memory-mapped safetensors file). `owner` keeps that
// memory alive (may be null when the caller guarantees it). Backends widen 16-bit values to float
// inside their kernels; nothing makes a float copy of a whole model.
struct WeightView {
  const void* data = nullptr;
  DType dtype = DType::kF32;
  int rows = 0;
  int cols = 0;
  std::shared_ptr<const void> owner;
  // One value, widened (slow; for references and small tensors). A quantised view holds whole
  // blocks per row, so element r · cols + c of the consecutive blocks is (r, c).
  float at(int r, int c) const {
    return load_as_float(data, dtype, static_cast<std::size_t>(r) * cols + c);
  }
};

// W widened to a float matrix: for small weights the ops take as float tensors (norm weights,
// biases: backend.upload(widen(w))), and for references.
inline Matrix widen(const WeightView& w) {
  Matrix m(w.rows, w.cols);
  if (dtype_is_quantized(w.dtype)) {  // row by row, block by block (ggml's layout)
    std::vector<float> row(static_cast<std::size_t>(w.cols));
    const std::size_t row_bytes = dtype_row_bytes(w.dtype, static_cast<std::size_t>(w.cols));
    for (int r = 0; r < w.rows; ++r) {
      dequantize_row(w.dtype, static_cast<const unsigned char*>(w.data) + r * row_bytes, row.data(),
                     w.cols);
      for (int c = 0; c < w.cols; ++c) m(r, c) = row[static_cast<std::size_t>(c)];
    }
    return m;
  }
  for (int r = 0; r < w.rows; ++r)
    for (int c = 0; c < w.cols; ++c) m(r, c) = w.at(r, c);
  return m;
}

// A weight matrix in a backend's own form, made once when a model's weights reach the backend and
// used by every `linear` after (the CPU backend repacks it into the panels its vector kernel
// reads; 16-bit weights stay 16-bit there). `in` x `out` are the sizes of the product x·op(W):
// op(W) is [in x out].
struct PreparedWeight {
  virtual ~PreparedWeight() = default;
  int in = 0;
  int out = 0;
};

// What Backend's default prepare_weight(WeightView) makes: W widened to a float tensor in the
// backend's memory.
struct WidenedWeight final : PreparedWeight {
  Tensor w;
  bool transposed = false;
};

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

  // ---- linear layers on float weights held as Tensors (GPT-2, BERT) ---------------------------
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

  // ---- linear layers on weights in their file's format (F32, F16, BF16) -----------------------
  // The backend's own copy of W in its file's precision; op(W) = Wᵀ when `transpose_w` (nn.Linear's
  // [out x in] layout, so a [out x in] file tensor with transpose_w = true gives in -> out). Never
  // null. The result never reads `w` again: once every weight is prepared, the file's pages may be
  // released. This default widens W to a float tensor in backend memory (twice a 16-bit file); the
  // CPU and CUDA backends keep 16-bit weights 16-bit.
  virtual std::shared_ptr<const PreparedWeight> prepare_weight(const WeightView& w,
                                                               bool transpose_w) {
    auto p = std::make_shared<WidenedWeight>();
    p->w = upload(widen(w));
    p->transposed = transpose_w;
    p->in = transpose_w ? w.cols : w.rows;
    p->out = transpose_w ? w.rows : w.cols;
    return p;
  }
  // Y [n x out] = X [n x in] · op(W) + bias, W prepared by this backend's
  // prepare_weight(WeightView). `bias` is [1 x out], or an empty Tensor{} (cols = 0) for none
  // (Llama has none, Qwen2 has q/k/v biases).
  virtual void linear(const Tensor& x, const PreparedWeight& w, const Tensor& bias, Tensor& y) {
    const auto* widened = dynamic_cast<const WidenedWeight*>(&w);
    if (!widened) throw BackendError(name() + ": linear: weight prepared by another backend");
    matmul(x, widened->w, widened->transposed, y);
    if (bias.cols > 0) add_bias(y, bias);
  }
  // out [n x cols] row i = table [vocab x cols] row ids[i], widened to float (the token embedding;
  // Gemma then scales it by √hidden with `scale`). Throws BackendError naming the id when one
  // is outside [0, vocab). `table` is read in host memory, only the rows asked for.
  virtual void embedding(const WeightView& table, const std::vector<int>& ids, Tensor& out) {
    Matrix m(static_cast<int>(ids.size()), table.cols);
    std::vector<float> row(static_cast<std::size_t>(table.cols));
    for (int i = 0; i < static_cast<int>(ids.size()); ++i) {
      check_embedding_id(table, ids[i]);
      if (dtype_is_quantized(table.dtype)) {  // the row's blocks
        dequantize_row(
            table.dtype,
            static_cast<const unsigned char*>(table.data) +
                static_cast<std::size_t>(ids[i]) * dtype_row_bytes(table.dtype, table.cols),
            row.data(), table.cols);
        for (int c = 0; c < table.cols; ++c) m(i, c) = row[static_cast<std::size_t>(c)];
        continue;
      }
      for (int c = 0; c < table.cols; ++c) m(i, c) = table.at(ids[i], c);
    }
    Tensor t = upload(m);
    copy(t, out);
  }

  // ---- elementwise and row ops ------------------------------------------------------------------
  // X[i, :] += bias[0, :]   (bias is [1 x cols])
  virtual void add_bias(Tensor& x, const Tensor& bias) = 0;
  // X += Y (same shape): residual connections.
  virtual void add(Tensor& x, const Tensor& y) = 0;
  // X *= s
  virtual void scale(Tensor& x, float s) = 0;
  // X = cap · tanh(X / cap)  (Gemma 2's attention logits and final logits)
  virtual void softcap(Tensor& x, float cap) = 0;
  // Masked entries of a [queries x keys] matrix become -inf (AttentionMask::masked).
  virtual void mask_fill(Tensor& x, const AttentionMask& mask) = 0;
  // Stable row softmax in place: subtract the row max; a row that is entirely -inf becomes zeros.
  virtual void softmax_rows(Tensor& x) = 0;
  // Y = (X - mean) / sqrt(var + eps) · gamma + beta, per row; gamma, beta are [1 x cols].
  virtual void layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                          Tensor& y) = 0;
  // RMSNorm, in float as Hugging Face computes it:
  //   Y = X / sqrt(mean(X²) + eps) · (weight_offset + w)
  // over each group of g = weight.cols consecutive columns of a row, weight [1 x g], g dividing
  // X.cols: g = cols for the hidden state's norm, g = head_dim for Qwen3's and Gemma 3's per-head q
  // and k norms (X = q [n x heads·head_dim]). weight_offset: 0 (Llama, Qwen), 1 (Gemma's (1 + w)).
  // Y may be X (in place).
  virtual void rms_norm(const Tensor& x, const Tensor& weight, float eps, float weight_offset,
                        Tensor& y) = 0;
  // X = gelu(X) in place
  virtual void gelu(Tensor& x, Gelu kind) = 0;
  // out = act(gate) · up, elementwise, all [n x ff]; out may be gate or up (in place).
  virtual void gated_activation(const Tensor& gate, const Tensor& up, Activation act,
                                Tensor& out) = 0;
  // Rotary position embedding in place, Hugging Face's rotate_half convention. X [n x heads·dh]
  // (dh = head_dim, even); row i is the token at position pos0 + i; inv_freq has dh / 2 entries.
  // For every head's columns x = [x1 | x2] (halves of dh), with a_j = float(pos) · inv_freq[j]
  // rounded to float as HF computes it (j < dh / 2, repeated for both halves):
  //   x1' = x1 · cos(a) - x2 · sin(a),   x2' = x2 · cos(a) + x1 · sin(a).
  // The model computes inv_freq (rope_theta, llama3 / linear rope_scaling, Gemma 3's local base).
  virtual void rope(Tensor& x, int heads, int head_dim, const std::vector<float>& inv_freq,
                    int pos0) = 0;

  // ---- attention ------------------------------------------------------------------------------
  // Grouped-query attention of every head at once. q [n x heads·dh], k and v [m x kv_heads·dh]
  // (dh = head_dim; kv_heads divides heads). Query head h uses KV head h / (heads / kv_heads):
  //   S_h = score_factor · Q_h · K_gᵀ                      [n x m]
  //   S_h = softcap(S_h, logit_softcap)   when logit_softcap > 0 (Gemma 2), before the mask
  //   P_h = softmax_rows(mask_fill(S_h, mask))
  //   context[:, h·dh : (h+1)·dh] = P_h · V_g              context [n x heads·dh]
  // P_h goes to (*weights)[h] when `weights` is not null (resized to `heads`). With a KV cache the
  // n queries are the last n of m positions: mask.query_offset = m - n. This default runs the heads
  // one after the other with the ops above; a backend may run them side by side.
  virtual void attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                               int kv_heads, int head_dim, float score_factor, float logit_softcap,
                               const AttentionMask& mask, Tensor& context,
                               std::vector<Matrix>* weights) {
    check_attention_shapes(q, k, v, heads, kv_heads, head_dim, mask, context);
    const int n = q.rows, m = k.rows, group = heads / kv_heads;
    Tensor scores = alloc(n, m);
    if (weights) weights->resize(heads);
    for (int h = 0; h < heads; ++h) {
      const int g = h / group;
      matmul(q.cols_view(h * head_dim, head_dim), k.cols_view(g * head_dim, head_dim),
             /*transpose_b=*/true, scores, score_factor, 0.0f);
      if (logit_softcap > 0) softcap(scores, logit_softcap);
      if (mask.any()) mask_fill(scores, mask);
      softmax_rows(scores);
      if (weights) (*weights)[h] = download(scores);
      Tensor out = context.cols_view(h * head_dim, head_dim);
      matmul(scores, v.cols_view(g * head_dim, head_dim), false, out, 1.0f, 0.0f);
    }
  }
  // Self-attention of every head at once (GPT-2, BERT). Head h's Q, K and V are columns
  // [h·dh, (h+1)·dh) of the blocks [0, d), [d, 2d) and [2d, 3d) of `qkv` [n x 3d] (d = heads·dh,
  // context.cols); its output weights·V goes to the same columns of `context` [n x d], and its
  // [n x n] weights softmax(mask(score_factor · Q·Kᵀ)) to (*weights)[h] when `weights` is not null
  // (resized to `heads`). The same as attention_heads with kv_heads = heads.
  virtual void self_attention_heads(const Tensor& qkv, int heads, float score_factor,
                                    const AttentionMask& mask, Tensor& context,
                                    std::vector<Matrix>* weights) {
    const int d = context.cols;
    if (heads <= 0 || d % heads != 0 || qkv.cols != 3 * d)
      throw BackendError(name() + ": self_attention_heads: shapes differ");
    attention_heads(qkv.cols_view(0, d), qkv.cols_view(d, d), qkv.cols_view(2 * d, d), heads, heads,
                    d / heads, score_factor, 0.0f, mask, context, weights);
  }

 protected:
  // The checks every implementation of these ops shares (BackendError / out_of_range).
  void check_embedding_id(const WeightView& table, int id) const {
    if (id < 0 || id >= table.rows)
      throw BackendError(name() + ": embedding: token id " + std::to_string(id) +
                         " is outside the table's " + std::to_string(table.rows) + " rows");
  }
  void check_attention_shapes(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                              int kv_heads, int head_dim, const AttentionMask& mask,
                              const Tensor& context) const {
    const bool ok = heads > 0 && kv_heads > 0 && heads % kv_heads == 0 && head_dim > 0 &&
                    q.cols == heads * head_dim && k.cols == kv_heads * head_dim &&
                    v.cols == kv_heads * head_dim && k.rows == v.rows && context.rows == q.rows &&
                    context.cols == heads * head_dim;
    if (!ok)
      throw BackendError(name() + ": attention_heads: shapes differ (q " + std::to_string(q.rows) +
                         "x" + std::to_string(q.cols) + ", k " + std::to_string(k.rows) + "x" +
                         std::to_string(k.cols) + ", v " + std::to_string(v.rows) + "x" +
                         std::to_string(v.cols) + ", heads " + std::to_string(heads) + "/" +
                         std::to_string(kv_heads) + " of " + std::to_string(head_dim) + ")");
    if (!mask.key_padding.empty() && static_cast<int>(mask.key_padding.size()) != k.rows)
      throw BackendError(name() + ": attention_heads: key padding length differs from the keys");
  }
};

// C entry point exported by the CUDA module (libattnscope_cuda.so). Returns nullptr and writes a
// user-readable reason into `error` when no usable device exists.
using CreateBackendFn = Backend* (*)(char* error, int error_len);
inline constexpr const char* kCudaModuleEntry = "attnscope_create_cuda_backend";
inline constexpr const char* kCudaModuleFile = "libattnscope_cuda.so";

}  // namespace attnscope
