// The CPU backend: every op written plainly with Eigen. This is the reference the CUDA backend is
// checked against, so clarity beats cleverness here.
#include "core/backend/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_ops.h"
#include "core/backend/cpu/packed_gemm.h"
#include "core/backend/cpu/work_sharing.h"
#include "core/util/error.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnscope {
namespace {

using Map = Eigen::Map<Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using ConstMap = Eigen::Map<const Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;

Map map(Tensor& t) {
  return Map(t.data, t.rows, t.cols, Eigen::OuterStride<>(t.stride));
}
ConstMap map(const Tensor& t) {
  return ConstMap(t.data, t.rows, t.cols, Eigen::OuterStride<>(t.stride));
}

void require(bool ok, const std::string& what) {
  if (!ok) throw BackendError(std::string("cpu backend: ") + what);
}

struct CpuPreparedWeight final : PreparedWeight {
  CpuPreparedWeight(const Tensor& w, bool transpose, GemmIsa isa)
      : packed(w.data, w.rows, w.cols, w.stride, transpose, isa) {
    in = packed.k();
    out = packed.n();
  }
  CpuPreparedWeight(const WeightView& w, bool transpose, GemmIsa isa)
      : packed(w.data, w.dtype, w.rows, w.cols, w.cols, transpose, isa) {
    in = packed.k();
    out = packed.n();
    if (dtype_is_quantized(w.dtype)) source = w.owner;  // the kernel reads the blocks in place
  }
  PackedWeight packed;
  std::shared_ptr<const void> source;
};

// The kernel for the linear layers (cpu_backend.h: CpuPrecision).
std::optional<GemmIsa> chosen_gemm_isa(CpuPrecision precision) {
  const char* env = std::getenv("ATTNSCOPE_CPU_GEMM");
  const bool float_only = precision == CpuPrecision::kFloat || (env && std::string(env) == "fp32");
  for (GemmIsa isa : packed_gemm_isas())
    if (!float_only || isa != GemmIsa::kAmxBf16x3) return isa;
  return std::nullopt;
}

// A forward pass allocates its tensors fresh (GPT-2 small at 256 tokens: ~28 MB, most of it in
// blocks of 1-20 MB). glibc serves blocks above its mmap threshold with mmap and gives them back
// on free, and trims the heap's top, so every forward page-faulted that memory in again, zeroed
// by the kernel: 60-75% of a CPU trace's time on our VMs (perf: page faults and memset; GPT-2
// small at 256 tokens 480-630 ms against ~142 ms with freed memory kept). Blocks up to glibc's
// largest mmap threshold (32 MB) now come from the heap, and up to 512 MB of freed heap top is
// kept for the next pass. Larger blocks (a long trace's stored matrices) still go back to the
// system when freed. Process-wide, once.
void keep_freed_memory() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
  });
#endif
}

class CpuBackend final : public Backend {
 public:
  using Backend::linear;
  using Backend::prepare_weight;
  explicit CpuBackend(CpuPrecision precision) : isa_(chosen_gemm_isa(precision)) {
    keep_freed_memory();
  }

  std::string name() const override { return "cpu"; }
  std::string description() const override {
    const int threads = work_sharing_threads();
    std::string kernels = "Eigen";
    if (isa_ == GemmIsa::kAmxBf16x3)
      kernels = "AMX bf16x3 + AVX-512 + Eigen";
    else if (isa_)
      kernels = to_string(*isa_) + " + Eigen";
    return "CPU (" + kernels + ", " + std::to_string(threads) + " thread" +
           (threads == 1 ? "" : "s") + ")";
  }

  Tensor alloc(int rows, int cols) override {
    require(rows >= 0 && cols >= 0, "negative tensor shape");
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    // 64-byte aligned, always: Eigen's vectorised sums over an unaligned map start with a scalar
    // prologue as long as the address's misalignment, so the rounding of a row's sum depended on
    // where malloc happened to put the tensor. One allocation more or less elsewhere (a tensor
    // copied from an unaligned safetensors file) changed the trace in its last bits.
    const std::size_t bytes = (std::max<std::size_t>(n, 1) * sizeof(float) + 63) / 64 * 64;
    void* mem = std::aligned_alloc(64, bytes);
    if (!mem) throw std::bad_alloc();
    std::memset(mem, 0, bytes);
    Tensor t;
    t.data = static_cast<float*>(mem);
    t.rows = rows;
    t.cols = cols;
    t.stride = cols;
    t.owner = std::shared_ptr<void>(mem, [](void* p) { std::free(p); });
    return t;
  }
  Tensor upload(const Matrix& m) override {
    Tensor t = alloc(static_cast<int>(m.rows()), static_cast<int>(m.cols()));
    map(t) = m;
    return t;
  }
  Matrix download(const Tensor& t) override { return map(t); }
  void copy(const Tensor& src, Tensor& dst) override {
    require(src.rows == dst.rows && src.cols == dst.cols, "copy: shapes differ");
    map(dst) = map(src);
  }

  // Weights are repacked for the vector kernel of packed_gemm.h when this build has one.
  std::shared_ptr<const PreparedWeight> prepare_weight(const Tensor& w, bool transpose_w) override {
    if (!isa_) return nullptr;
    return std::make_shared<CpuPreparedWeight>(w, transpose_w, *isa_);
  }

  // Weights in their file's format: packed for the vector kernel, 16-bit ones kept 16-bit
  // (packed_gemm.h); without a vector kernel, widened to float for Eigen (Backend's default).
  std::shared_ptr<const PreparedWeight> prepare_weight(const WeightView& w,
                                                       bool transpose_w) override {
    require(w.data && w.rows > 0 && w.cols > 0, "prepare_weight: empty weight");
    // Quantised weights stay quantised where they lie (packed_gemm.h) in ggml's [out x in] layout;
    // another layout, or no vector kernel: widened for Eigen.
    if (!isa_ || (dtype_is_quantized(w.dtype) && !transpose_w))
      return Backend::prepare_weight(w, transpose_w);
    return std::make_shared<CpuPreparedWeight>(w, transpose_w, *isa_);
  }
  void linear(const Tensor& x, const PreparedWeight& w, const Tensor& bias, Tensor& y) override {
    require(x.cols == w.in && y.rows == x.rows && y.cols == w.out &&
                (bias.cols == 0 || (bias.rows == 1 && bias.cols == w.out)),
            "linear: shapes differ (x " + std::to_string(x.rows) + "x" + std::to_string(x.cols) +
                ", W " + std::to_string(w.in) + " -> " + std::to_string(w.out) + ", y " +
                std::to_string(y.rows) + "x" + std::to_string(y.cols) + ")");
    const auto* packed = dynamic_cast<const CpuPreparedWeight*>(&w);
    if (!packed) return Backend::linear(x, w, bias, y);  // widened, for Eigen
    packed_gemm(x.data, x.rows, x.stride, packed->packed, bias.cols > 0 ? bias.data : nullptr,
                y.data, y.stride);
  }
  void embedding(const WeightView& table, const std::vector<int>& ids, Tensor& out) override {
    cpu::embedding(table, ids, out);
  }

  void linear(const Tensor& x, const Tensor& w, bool transpose_w, const PreparedWeight* prepared,
              const Tensor& bias, Tensor& y) override {
    const int in = transpose_w ? w.cols : w.rows, out = transpose_w ? w.rows : w.cols;
    require(x.cols == in && y.rows == x.rows && y.cols == out && bias.rows == 1 && bias.cols == out,
            "linear: shapes differ");
    const auto* packed = dynamic_cast<const CpuPreparedWeight*>(prepared);
    if (!packed) return Backend::linear(x, w, transpose_w, prepared, bias, y);  // Eigen
    require(packed->packed.k() == in && packed->packed.n() == out,
            "linear: the prepared weight belongs to another matrix");
    packed_gemm(x.data, x.rows, x.stride, packed->packed, bias.data, y.data, y.stride);
  }

  // C [n x m] = alpha · A [n x k] · op(B) + beta · C
  void matmul(const Tensor& a, const Tensor& b, bool transpose_b, Tensor& c, float alpha,
              float beta) override {
    const int k_b = transpose_b ? b.cols : b.rows;
    const int m_b = transpose_b ? b.rows : b.cols;
    require(a.cols == k_b && c.rows == a.rows && c.cols == m_b, "matmul: shapes differ");
    // Large products are cut into column blocks of C (rows of B when transposed) that the cores
    // share; each block is an ordinary single-threaded Eigen product.
    const double flops = 2.0 * a.rows * a.cols * static_cast<double>(c.cols);
    const int threads = work_sharing_threads();
    const int blocks = flops < 4e6 || threads == 1 ? 1 : std::min(4 * threads, c.cols / 64);
    if (blocks <= 1) return matmul_block(a, b, transpose_b, c, alpha, beta);
    const int width = (c.cols + blocks - 1) / blocks;
    share_work(blocks, [&](int i) {
      const int c0 = i * width, w = std::min(width, c.cols - c0);
      if (w <= 0) return;
      Tensor c_block = c.cols_view(c0, w);
      matmul_block(a, transpose_b ? b.rows_view(c0, w) : b.cols_view(c0, w), transpose_b, c_block,
                   alpha, beta);
    });
  }
  static void matmul_block(const Tensor& a, const Tensor& b, bool transpose_b, Tensor& c,
                           float alpha, float beta) {
    auto C = map(c);
    if (beta == 0.0f) {
      if (transpose_b)
        C.noalias() = alpha * (map(a) * map(b).transpose());
      else
        C.noalias() = alpha * (map(a) * map(b));
    } else {
      C *= beta;
      if (transpose_b)
        C.noalias() += alpha * (map(a) * map(b).transpose());
      else
        C.noalias() += alpha * (map(a) * map(b));
    }
  }

  void add_bias(Tensor& x, const Tensor& bias) override {
    require(bias.rows == 1 && bias.cols == x.cols, "add_bias: bias must be [1 x cols]");
    map(x).rowwise() += map(bias).row(0);
  }
  void add(Tensor& x, const Tensor& y) override {
    require(x.rows == y.rows && x.cols == y.cols, "add: shapes differ");
    map(x) += map(y);
  }
  void scale(Tensor& x, float s) override { map(x) *= s; }

  void mask_fill(Tensor& x, const AttentionMask& mask) override {
    require(mask.key_padding.empty() || static_cast<int>(mask.key_padding.size()) == x.cols,
            "mask_fill: key padding length differs from the number of keys");
    cpu::mask_fill(x.data, x.rows, x.cols, x.stride, mask);
  }

  void softmax_rows(Tensor& x) override { cpu::softmax_rows(x.data, x.rows, x.cols, x.stride); }
  void softcap(Tensor& x, float cap) override { cpu::softcap(x, cap); }

  // The heads side by side on the cores (cpu_ops.cpp); self_attention_heads is Backend's, on this.
  void attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int heads, int kv_heads,
                       int head_dim, float score_factor, float logit_softcap,
                       const AttentionMask& mask, Tensor& context,
                       std::vector<Matrix>* weights) override {
    check_attention_shapes(q, k, v, heads, kv_heads, head_dim, mask, context);
    cpu::attention_heads(q, k, v, heads, kv_heads, head_dim, score_factor, logit_softcap, mask,
                         context, weights);
  }

  void layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                  Tensor& y) override {
    require(y.rows == x.rows && y.cols == x.cols && gamma.cols == x.cols && beta.cols == x.cols,
            "layer_norm: shapes differ");
    auto X = map(x);
    auto Y = map(y);
    const auto g = map(gamma).row(0).array();
    const auto b = map(beta).row(0).array();
    for (int i = 0; i < x.rows; ++i) {
      const float mean = X.row(i).mean();
      const float var = (X.row(i).array() - mean).square().mean();
      Y.row(i) = ((X.row(i).array() - mean) / std::sqrt(var + eps) * g + b).matrix();
    }
  }

  void gelu(Tensor& x, Gelu kind) override { cpu::gelu(x, kind); }
  void rms_norm(const Tensor& x, const Tensor& weight, float eps, float weight_offset,
                Tensor& y) override {
    cpu::rms_norm(x, weight, eps, weight_offset, y);
  }
  void gated_activation(const Tensor& gate, const Tensor& up, Activation act,
                        Tensor& out) override {
    cpu::gated_activation(gate, up, act, out);
  }
  void rope(Tensor& x, int heads, int head_dim, const std::vector<float>& inv_freq,
            int pos0) override {
    cpu::rope(x, heads, head_dim, inv_freq, pos0);
  }

 private:
  const std::optional<GemmIsa> isa_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(CpuPrecision precision) {
  return std::make_unique<CpuBackend>(precision);
}

}  // namespace attnscope
