// The CPU backend: every op written plainly with Eigen. This is the reference the CUDA backend is
// checked against, so clarity beats cleverness here.
#include "core/backend/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <unsupported/Eigen/SpecialFunctions>

#include "core/backend/cpu/packed_gemm.h"
#include "core/backend/cpu/work_sharing.h"
#include "core/util/error.h"

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

void require(bool ok, const char* what) {
  if (!ok) throw BackendError(std::string("cpu backend: ") + what);
}

// Masked entries of a [queries x keys] matrix become -inf.
void mask_in_place(Map& X, const AttentionMask& mask) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int rows = static_cast<int>(X.rows()), cols = static_cast<int>(X.cols());
  for (int i = 0; i < rows; ++i) {
    if (mask.causal && i + 1 < cols) X.row(i).tail(cols - i - 1).setConstant(ninf);
    if (mask.mask_self && i < cols) X(i, i) = ninf;
  }
  if (!mask.key_padding.empty())
    for (int j = 0; j < cols; ++j)
      if (mask.key_padding[j]) X.col(j).setConstant(ninf);
}

// Stable softmax of every row; a row that is entirely -inf becomes zeros.
void softmax_in_place(Map& X) {
  for (int i = 0; i < X.rows(); ++i) {
    auto row = X.row(i);
    const float mx = row.maxCoeff();
    if (!std::isfinite(mx)) {  // every entry masked (-inf): no key to attend to
      row.setZero();
      continue;
    }
    // Masked keys must get exactly 0, but Eigen's vectorised exp may clamp its argument and give
    // a denormal (~1e-39) for -inf. So every value below the smallest normal float becomes 0: the
    // masked keys, and keys more than 87 below the row's maximum, whose weight underflows anyway.
    row = (row.array() - mx).exp();
    row = (row.array() < std::numeric_limits<float>::min()).select(0.0f, row.array());
    row /= row.sum();
  }
}

struct CpuPreparedWeight final : PreparedWeight {
  explicit CpuPreparedWeight(const Tensor& w, bool transpose, GemmIsa isa)
      : packed(w.data, w.rows, w.cols, w.stride, transpose, isa) {}
  PackedWeight packed;
};

// The kernel for the linear layers (cpu_backend.h: CpuPrecision).
std::optional<GemmIsa> chosen_gemm_isa(CpuPrecision precision) {
  const char* env = std::getenv("ATTNSCOPE_CPU_GEMM");
  const bool float_only = precision == CpuPrecision::kFloat || (env && std::string(env) == "fp32");
  for (GemmIsa isa : packed_gemm_isas())
    if (!float_only || isa != GemmIsa::kAmxBf16x3) return isa;
  return std::nullopt;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuPrecision precision) : isa_(chosen_gemm_isa(precision)) {}

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
    std::shared_ptr<float[]> mem(new float[n == 0 ? 1 : n]());
    Tensor t;
    t.data = mem.get();
    t.rows = rows;
    t.cols = cols;
    t.stride = cols;
    t.owner = std::shared_ptr<void>(mem, mem.get());
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
    auto X = map(x);
    mask_in_place(X, mask);
  }

  void softmax_rows(Tensor& x) override {
    auto X = map(x);
    softmax_in_place(X);
  }

  // The heads side by side on the cores, each in its own scores matrix (the weights are computed
  // right where the trace keeps them, so nothing is copied out afterwards).
  void self_attention_heads(const Tensor& qkv, int heads, float score_factor,
                            const AttentionMask& mask, Tensor& context,
                            std::vector<Matrix>* weights) override {
    const int n = qkv.rows, d = context.cols;
    require(heads > 0 && d % heads == 0 && qkv.cols == 3 * d && context.rows == n,
            "self_attention_heads: shapes differ");
    require(mask.key_padding.empty() || static_cast<int>(mask.key_padding.size()) == n,
            "self_attention_heads: key padding length differs from the number of keys");
    const int dh = d / heads;
    if (weights) weights->resize(heads);
    auto head = [&](int h) {
      Matrix local;
      Matrix& s = weights ? (*weights)[h] : local;
      s.resize(n, n);
      const Tensor q = qkv.cols_view(h * dh, dh), k = qkv.cols_view(d + h * dh, dh),
                   v = qkv.cols_view(2 * d + h * dh, dh);
      s.noalias() = score_factor * (map(q) * map(k).transpose());
      Map S(s.data(), n, n, Eigen::OuterStride<>(n));
      if (mask.any()) mask_in_place(S, mask);
      softmax_in_place(S);
      Tensor out = context.cols_view(h * dh, dh);
      map(out).noalias() = s * map(v);
    };
    // Worth handing to the other cores only when there is work (~4·n²·d flops in all).
    if (4.0 * n * n * static_cast<double>(d) < 2e6) {
      for (int h = 0; h < heads; ++h) head(h);
    } else {
      share_work(heads, head);
    }
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

  void gelu(Tensor& x, Gelu kind) override {
    // Whole-array expressions so Eigen vectorises tanh/erf: the scalar std:: calls cost GPT-2 small
    // ~50 ms per forward at 64 tokens (12 layers x 64 x 3072 values), more than its attention.
    // Row blocks on the cores when large (GPT-2 small's MLP at 64 tokens: 196,608 values).
    constexpr int kValuesPerBlock = 1 << 15;
    const int rows_per_block = std::max(1, kValuesPerBlock / std::max(1, x.cols));
    const int blocks = (x.rows + rows_per_block - 1) / rows_per_block;
    auto block = [&](int b) {
      const int r0 = b * rows_per_block;
      Tensor part = x.rows_view(r0, std::min(rows_per_block, x.rows - r0));
      auto X = map(part).array();
      if (kind == Gelu::kErf) {
        X = 0.5f * X * (1.0f + (X * 0.70710678118654752f).erf());
      } else {
        const float c = 0.79788456080286536f;  // sqrt(2/pi)
        X = 0.5f * X * (1.0f + (c * (X + 0.044715f * X.cube())).tanh());
      }
    };
    if (blocks <= 1) {
      if (blocks == 1) block(0);
    } else {
      share_work(blocks, block);
    }
  }

 private:
  const std::optional<GemmIsa> isa_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(CpuPrecision precision) {
  return std::make_unique<CpuBackend>(precision);
}

}  // namespace attnscope
