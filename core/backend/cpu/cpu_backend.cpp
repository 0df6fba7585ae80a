// The CPU backend: every op written plainly with Eigen. This is the reference the CUDA backend is
// checked against, so clarity beats cleverness here.
#include "core/backend/cpu/cpu_backend.h"

#include <cmath>
#include <cstring>
#include <limits>

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

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string description() const override {
    return "CPU (Eigen, " + std::to_string(Eigen::nbThreads()) + " thread" +
           (Eigen::nbThreads() == 1 ? "" : "s") + ")";
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

  // C [n x m] = alpha · A [n x k] · op(B) + beta · C
  void matmul(const Tensor& a, const Tensor& b, bool transpose_b, Tensor& c, float alpha,
              float beta) override {
    const int k_b = transpose_b ? b.cols : b.rows;
    const int m_b = transpose_b ? b.rows : b.cols;
    require(a.cols == k_b && c.rows == a.rows && c.cols == m_b, "matmul: shapes differ");
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
    const float ninf = -std::numeric_limits<float>::infinity();
    auto X = map(x);
    for (int i = 0; i < x.rows; ++i)
      for (int j = 0; j < x.cols; ++j)
        if ((mask.causal && j > i) || (mask.mask_self && j == i) ||
            (!mask.key_padding.empty() && mask.key_padding[j]))
          X(i, j) = ninf;
  }

  void softmax_rows(Tensor& x) override {
    auto X = map(x);
    for (int i = 0; i < x.rows; ++i) {
      auto row = X.row(i);
      const float mx = row.maxCoeff();
      if (!std::isfinite(mx)) {  // every entry masked (-inf): no key to attend to
        row.setZero();
        continue;
      }
      // Eigen's vectorised exp(-inf) returns a denormal, not 0: masked keys must weigh exactly 0.
      const float ninf = -std::numeric_limits<float>::infinity();
      row = (row.array() == ninf).select(0.0f, (row.array() - mx).exp());
      row /= row.sum();
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
    auto X = map(x);
    if (kind == Gelu::kErf) {
      X = X.unaryExpr(
          [](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); });
    } else {
      X = X.unaryExpr([](float v) {
        const float c = 0.79788456080286536f;  // sqrt(2/pi)
        return 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
      });
    }
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

}  // namespace attnscope
