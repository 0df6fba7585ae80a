// The CPU's row and elementwise ops and attention (cpu_ops.h), written with Eigen's vectorised
// array expressions: the scalar std:: calls cost GPT-2 small ~50 ms per forward at 64 tokens in
// gelu alone. Large tensors are cut into row blocks that the cores share.
#include "core/backend/cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <unsupported/Eigen/SpecialFunctions>

#include "core/backend/cpu/dequantize.h"
#include "core/backend/cpu/work_sharing.h"
#include "core/util/error.h"

namespace attnscope::cpu {
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
  if (!ok) throw BackendError("cpu backend: " + what);
}

// fn(r0, r1) over row blocks of about 32K values, on the cores when there is more than one block.
template <class Fn>
void for_row_blocks(int rows, int cols, Fn fn) {
  constexpr int kValuesPerBlock = 1 << 15;
  const int per_block = std::max(1, kValuesPerBlock / std::max(1, cols));
  const int blocks = (rows + per_block - 1) / per_block;
  auto block = [&](int b) {
    const int r0 = b * per_block;
    fn(r0, std::min(rows, r0 + per_block));
  };
  if (blocks == 1)
    block(0);
  else if (blocks > 1)
    share_work(blocks, block);
}

}  // namespace

void mask_fill(float* x, int rows, int cols, int stride, const AttentionMask& mask, int first_row) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < rows; ++i) {
    float* row = x + static_cast<std::ptrdiff_t>(i) * stride;
    const int q = mask.query_offset + first_row + i;  // the query's absolute position
    if (mask.causal && q + 1 < cols) std::fill(row + std::max(0, q + 1), row + cols, ninf);
    if (mask.window > 0 && q - mask.window >= 0)  // keys j <= q - window
      std::fill(row, row + std::min(cols, q - mask.window + 1), ninf);
    if (mask.mask_self && q >= 0 && q < cols) row[q] = ninf;
    if (!mask.key_padding.empty())
      for (int j = 0; j < cols; ++j)
        if (mask.key_padding[j]) row[j] = ninf;
  }
}

void softmax_rows(float* x, int rows, int cols, int stride) {
  Map X(x, rows, cols, Eigen::OuterStride<>(stride));
  for (int i = 0; i < rows; ++i) {
    auto row = X.row(i);
    const float mx = cols ? row.maxCoeff() : 0.0f;
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

void softcap(Tensor& x, float cap) {
  require(cap > 0, "softcap: the cap must be positive");
  const float inv = 1.0f / cap;
  for_row_blocks(x.rows, x.cols, [&](int r0, int r1) {
    Tensor part = x.rows_view(r0, r1 - r0);
    auto X = map(part).array();
    X = cap * (X * inv).tanh();
  });
}

void rms_norm(const Tensor& x, const Tensor& weight, float eps, float weight_offset, Tensor& y) {
  const int g = weight.cols;
  require(weight.rows == 1 && g > 0 && x.cols % g == 0 && y.rows == x.rows && y.cols == x.cols,
          "rms_norm: shapes differ (x " + std::to_string(x.rows) + "x" + std::to_string(x.cols) +
              ", weight " + std::to_string(weight.rows) + "x" + std::to_string(g) + ", y " +
              std::to_string(y.rows) + "x" + std::to_string(y.cols) + ")");
  const Eigen::ArrayXf scale = map(weight).row(0).transpose().array() + weight_offset;
  const int groups = x.cols / g;
  for_row_blocks(x.rows, x.cols, [&](int r0, int r1) {
    for (int i = r0; i < r1; ++i)
      for (int h = 0; h < groups; ++h) {
        const float* in = x.data + static_cast<std::ptrdiff_t>(i) * x.stride + h * g;
        float* out = y.data + static_cast<std::ptrdiff_t>(i) * y.stride + h * g;
        const Eigen::Map<const Eigen::ArrayXf> xi(in, g);
        const float ms = xi.square().sum() / static_cast<float>(g);
        const float r = 1.0f / std::sqrt(ms + eps);
        Eigen::Map<Eigen::ArrayXf>(out, g) = xi * r * scale;  // out may be in (same values read)
      }
  });
}

void gelu(Tensor& x, Gelu kind) {
  for_row_blocks(x.rows, x.cols, [&](int r0, int r1) {
    Tensor part = x.rows_view(r0, r1 - r0);
    auto X = map(part).array();
    if (kind == Gelu::kErf) {
      X = 0.5f * X * (1.0f + (X * 0.70710678118654752f).erf());
    } else {
      const float c = 0.79788456080286536f;  // sqrt(2/pi)
      X = 0.5f * X * (1.0f + (c * (X + 0.044715f * X.cube())).tanh());
    }
  });
}

void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out) {
  require(gate.rows == up.rows && gate.cols == up.cols && out.rows == gate.rows &&
              out.cols == gate.cols,
          "gated_activation: shapes differ");
  for_row_blocks(gate.rows, gate.cols, [&](int r0, int r1) {
    const int n = r1 - r0;
    const auto G = map(gate.rows_view(r0, n)).array();
    const auto U = map(up.rows_view(r0, n)).array();
    Tensor o = out.rows_view(r0, n);
    auto O = map(o).array();
    switch (act) {
      case Activation::kSiLU:  // x·sigmoid(x); exp(-x) = inf for x < -88 gives -0, as torch
        O = G / (1.0f + (-G).exp()) * U;
        break;
      case Activation::kGeluTanh: {
        const float c = 0.79788456080286536f;
        O = 0.5f * G * (1.0f + (c * (G + 0.044715f * G.cube())).tanh()) * U;
        break;
      }
      case Activation::kGeluErf:
        O = 0.5f * G * (1.0f + (G * 0.70710678118654752f).erf()) * U;
        break;
    }
  });
}

void rope(Tensor& x, int heads, int head_dim, const std::vector<float>& inv_freq, int pos0) {
  const int half = head_dim / 2;
  require(head_dim > 0 && head_dim % 2 == 0 && heads > 0 && x.cols == heads * head_dim,
          "rope: x has " + std::to_string(x.cols) + " columns, not heads · head_dim = " +
              std::to_string(heads) + " · " + std::to_string(head_dim));
  require(static_cast<int>(inv_freq.size()) == half,
          "rope: inv_freq has " + std::to_string(inv_freq.size()) +
              " entries, not head_dim / 2 = " + std::to_string(half));
  require(pos0 >= 0, "rope: negative position");
  for_row_blocks(x.rows, x.cols, [&](int r0, int r1) {
    std::vector<float> cs(half), sn(half);
    for (int i = r0; i < r1; ++i) {
      const float pos = static_cast<float>(pos0 + i);
      for (int j = 0; j < half; ++j) {
        const float angle = pos * inv_freq[j];  // rounded to float, as Hugging Face's product
        cs[j] = static_cast<float>(std::cos(static_cast<double>(angle)));
        sn[j] = static_cast<float>(std::sin(static_cast<double>(angle)));
      }
      float* row = x.data + static_cast<std::ptrdiff_t>(i) * x.stride;
      for (int h = 0; h < heads; ++h) {
        float* x1 = row + h * head_dim;
        float* x2 = x1 + half;
        for (int j = 0; j < half; ++j) {
          const float a = x1[j], b = x2[j];
          x1[j] = a * cs[j] - b * sn[j];
          x2[j] = b * cs[j] + a * sn[j];
        }
      }
    }
  });
}

void embedding(const WeightView& table, const std::vector<int>& ids, Tensor& out) {
  require(out.rows == static_cast<int>(ids.size()) && out.cols == table.cols,
          "embedding: out is " + std::to_string(out.rows) + "x" + std::to_string(out.cols) +
              ", not ids x " + std::to_string(table.cols));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const int id = ids[i];
    if (id < 0 || id >= table.rows)
      throw BackendError("cpu backend: embedding: token id " + std::to_string(id) +
                         " is outside the table's " + std::to_string(table.rows) + " rows");
    float* dst = out.data + static_cast<std::ptrdiff_t>(i) * out.stride;
    const std::size_t base = static_cast<std::size_t>(id) * table.cols;
    if (dtype_is_quantized(table.dtype)) {  // just this row, block by block
      dequantize_row_fast(
          table.dtype,
          static_cast<const unsigned char*>(table.data) +
              static_cast<std::size_t>(id) * dtype_row_bytes(table.dtype, table.cols),
          dst, table.cols);
      continue;
    }
    switch (table.dtype) {
      case DType::kF32:
        std::copy_n(static_cast<const float*>(table.data) + base, table.cols, dst);
        break;
      case DType::kBF16: {
        const auto* src = static_cast<const std::uint16_t*>(table.data) + base;
        for (int c = 0; c < table.cols; ++c) dst[c] = bf16_to_float(src[c]);
        break;
      }
      case DType::kF16: {
        const auto* src = static_cast<const std::uint16_t*>(table.data) + base;
        for (int c = 0; c < table.cols; ++c) dst[c] = f16_to_float(src[c]);
        break;
      }
      default:
        break;  // quantised: above
    }
  }
}

void attention_head(const Tensor& qh, const Tensor& kh, const Tensor* vh, float score_factor,
                    float logit_softcap, const AttentionMask& mask, Matrix& s, Tensor* out) {
  const int n = qh.rows, m = kh.rows;
  s.resize(n, m);
  // With a causal mask or a window, each block of query rows multiplies only the keys one of them
  // may see (about half of them at n = m when causal), and the rest of its rows is set to -inf
  // before the mask and softmax.
  const bool banded = mask.causal || mask.window > 0;
  const float ninf = -std::numeric_limits<float>::infinity();
  constexpr int kRowBlock = 64;
  const int block = banded ? kRowBlock : std::max(n, 1);
  for (int r0 = 0; r0 < n; r0 += block) {
    const int rows = std::min(block, n - r0);
    int lo = 0, hi = m;  // the keys some query of rows [r0, r0 + rows) may see
    if (mask.causal) hi = std::clamp(mask.query_offset + r0 + rows, 0, m);
    if (mask.window > 0) lo = std::clamp(mask.query_offset + r0 - mask.window + 1, 0, m);
    hi = std::max(hi, lo);
    auto S = s.middleRows(r0, rows);
    S.leftCols(lo).setConstant(ninf);
    S.rightCols(m - hi).setConstant(ninf);
    auto band = S.middleCols(lo, hi - lo);
    band.noalias() =
        score_factor * (map(qh).middleRows(r0, rows) * map(kh).middleRows(lo, hi - lo).transpose());
    if (logit_softcap > 0) band = logit_softcap * (band.array() * (1.0f / logit_softcap)).tanh();
    if (mask.any()) mask_fill(S.data(), rows, m, m, mask, r0);
    softmax_rows(S.data(), rows, m, m);
    if (vh && out) {
      Tensor out_rows = out->rows_view(r0, rows);
      map(out_rows).noalias() = band * map(*vh).middleRows(lo, hi - lo);
    }
  }
}

void attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int heads, int kv_heads,
                     int head_dim, float score_factor, float logit_softcap,
                     const AttentionMask& mask, Tensor& context, std::vector<Matrix>* weights) {
  const int n = q.rows, m = k.rows, group = heads / kv_heads, dh = head_dim;
  if (weights) weights->resize(heads);
  // Each head in its own scores matrix: the weights are computed right where the trace keeps them,
  // so nothing is copied out afterwards.
  auto head = [&](int h) {
    Matrix local;
    Matrix& s = weights ? (*weights)[h] : local;
    const int g = h / group;
    const Tensor qh = q.cols_view(h * dh, dh), kh = k.cols_view(g * dh, dh),
                 vh = v.cols_view(g * dh, dh);
    Tensor out = context.cols_view(h * dh, dh);
    attention_head(qh, kh, &vh, score_factor, logit_softcap, mask, s, &out);
  };
  // Worth handing to the other cores only when there is work (~4·n·m·d flops in all).
  if (4.0 * n * m * static_cast<double>(heads * dh) < 2e6) {
    for (int h = 0; h < heads; ++h) head(h);
  } else {
    share_work(heads, head);
  }
}

}  // namespace attnscope::cpu
