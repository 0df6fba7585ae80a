#pragma once
// The op cases of the backend harness (ggml's test-backend-ops idea). Each case builds its inputs
// deterministically, runs one op on the backend it is given and returns the result; it also says
// what the result must be, computed in double precision from the formula (op_reference.h). So
// every backend — the CPU's fast kernels and its float path, CUDA, … — is held against the same
// double reference with tolerance tol + |ref|·eps (tests/unit/backend_ops_test.cpp,
// tests/gpu/backend_equivalence_test.cpp). Outputs are written inside a frame of guard values
// (GuardedOutput) that must come back untouched: a write out of bounds fails the case.
// Today's GPT-2/BERT ops are here; the modern-LLM ops are in llm_op_cases.h.
#include <array>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "tests/common/op_reference.h"
#include "tests/common/reference.h"

namespace attnscope::test {

struct OpCase {
  std::string name;  // the op and its parameters, printed when the case fails
  double tol, eps;
  std::function<Matrix(Backend&)> run;
  std::function<MatrixD()> reference;
  // The tolerance (abs, rel) on an AMX host, whose CPU default multiplies float weights in bf16x3
  // (~2^-16 of each product: packed_gemm.h), for cases that go through `linear` with float
  // weights; 0 = tol and eps everywhere.
  double amx_tol = 0, amx_eps = 0;
};

// An output [rows x cols] inside a frame of guard values: one row above and below, five columns
// on each side (so the output is also a strided view, stride cols + 10).
inline constexpr float kGuard = 1234.5f;
struct GuardedOutput {
  Tensor whole, view;
};
inline GuardedOutput guarded(Backend& be, const Matrix& init) {
  const int rows = static_cast<int>(init.rows()), cols = static_cast<int>(init.cols());
  Matrix whole = Matrix::Constant(rows + 2, cols + 10, kGuard);
  whole.block(1, 5, rows, cols) = init;
  GuardedOutput g;
  g.whole = be.upload(whole);
  g.view = g.whole.rows_view(1, rows).cols_view(5, cols);
  return g;
}
inline GuardedOutput guarded(Backend& be, int rows, int cols) {
  return guarded(be, Matrix::Zero(rows, cols));
}
// The output's values; throws std::runtime_error naming the place when a guard value changed.
inline Matrix read_guarded(Backend& be, const GuardedOutput& g) {
  const Matrix whole = be.download(g.whole);
  const int rows = g.view.rows, cols = g.view.cols;
  for (int i = 0; i < whole.rows(); ++i)
    for (int j = 0; j < whole.cols(); ++j) {
      const bool inside = i >= 1 && i <= rows && j >= 5 && j < 5 + cols;
      if (!inside && whole(i, j) != kGuard)
        throw std::runtime_error("wrote outside its output: at row " + std::to_string(i - 1) +
                                 ", column " + std::to_string(j - 5) + " of a " +
                                 std::to_string(rows) + "x" + std::to_string(cols) + " output");
    }
  return whole.block(1, 5, rows, cols);
}

inline std::string shape(int r, int c) {
  return std::to_string(r) + "x" + std::to_string(c);
}

inline std::vector<OpCase> gpt2_bert_op_cases() {
  std::vector<OpCase> cases;
  // matmul over shapes that stress edges: 1s, odd sizes, transposes, strided column views.
  struct Mm {
    int n, k, m;
    bool tb;
  };
  for (Mm s : {Mm{1, 1, 1, false}, Mm{3, 5, 7, false}, Mm{3, 5, 7, true}, Mm{64, 64, 64, true},
               Mm{17, 768, 33, false}, Mm{257, 64, 129, true}}) {
    auto inputs = [s] {
      return std::array<Matrix, 3>{
          randn(s.n, s.k, 1), s.tb ? randn(s.m, s.k, 2) : randn(s.k, s.m, 2), randn(s.n, s.m, 3)};
    };
    cases.push_back({"matmul " + std::to_string(s.n) + "x" + std::to_string(s.k) + "x" +
                         std::to_string(s.m) + (s.tb ? " B^T" : "") + ", alpha 0.5, beta 0.25",
                     1e-4, 1e-4,
                     [s, inputs](Backend& be) {
                       const auto in = inputs();
                       GuardedOutput c = guarded(be, in[2]);
                       be.matmul(be.upload(in[0]), be.upload(in[1]), s.tb, c.view, 0.5f, 0.25f);
                       return read_guarded(be, c);
                     },
                     [s, inputs] {
                       const auto in = inputs();
                       const MatrixD b =
                           s.tb ? MatrixD(to_double(in[1]).transpose()) : to_double(in[1]);
                       return MatrixD(0.5 * to_double(in[0]) * b + 0.25 * to_double(in[2]));
                     }});
  }
  cases.push_back({"matmul on head column views", 1e-4, 1e-4,
                   [](Backend& be) {
                     // qkv is [n x 3d]; head 1's Q and K are strided views into it.
                     Tensor qkv = be.upload(randn(9, 3 * 16, 4));
                     Tensor q = qkv.cols_view(4, 4), k = qkv.cols_view(16 + 4, 4);
                     Tensor s = be.alloc(9, 9);
                     be.matmul(q, k, true, s);
                     GuardedOutput out = guarded(be, 9, 3 * 16);
                     Tensor v = qkv.cols_view(32 + 4, 4), o = out.view.cols_view(4, 4);
                     be.matmul(s, v, false, o);
                     return read_guarded(be, out);
                   },
                   [] {
                     const MatrixD qkv = to_double(randn(9, 3 * 16, 4));
                     MatrixD out = MatrixD::Zero(9, 48);
                     out.middleCols(4, 4) = qkv.middleCols(4, 4) *
                                            qkv.middleCols(20, 4).transpose() *
                                            qkv.middleCols(36, 4);
                     return out;
                   }});
  cases.push_back({"add_bias 7x13", 1e-6, 1e-6,
                   [](Backend& be) {
                     GuardedOutput x = guarded(be, randn(7, 13, 5));
                     be.add_bias(x.view, be.upload(randn(1, 13, 6)));
                     return read_guarded(be, x);
                   },
                   [] {
                     MatrixD x = to_double(randn(7, 13, 5));
                     x.rowwise() += to_double(randn(1, 13, 6)).row(0);
                     return x;
                   }});
  cases.push_back({"add on views 7x5", 1e-6, 1e-6,
                   [](Backend& be) {
                     GuardedOutput x = guarded(be, randn(7, 10, 7));
                     Tensor y = be.upload(randn(7, 10, 8));
                     Tensor xv = x.view.cols_view(2, 5);
                     be.add(xv, y.cols_view(5, 5));
                     return read_guarded(be, x);
                   },
                   [] {
                     MatrixD x = to_double(randn(7, 10, 7));
                     x.middleCols(2, 5) += to_double(randn(7, 10, 8)).middleCols(5, 5);
                     return x;
                   }});
  cases.push_back({"scale 5x6 by -0.125", 1e-6, 1e-6,
                   [](Backend& be) {
                     GuardedOutput x = guarded(be, randn(5, 6, 9));
                     be.scale(x.view, -0.125f);
                     return read_guarded(be, x);
                   },
                   [] { return MatrixD(-0.125 * to_double(randn(5, 6, 9))); }});
  for (int variant = 0; variant < 4; ++variant) {
    auto mask_of = [variant] {
      RefMask m;
      m.causal = variant & 1;
      m.mask_self = variant & 2;
      if (variant == 3) {
        m.padding.assign(33, 0);
        m.padding[5] = m.padding[30] = 1;
      }
      return m;
    };
    cases.push_back(
        {"mask_fill + softmax_rows 33x33, causal " + std::to_string(variant & 1) + ", mask_self " +
             std::to_string((variant & 2) / 2) + ", padding " + std::to_string(variant == 3),
         1e-6, 1e-5,
         [variant, mask_of](Backend& be) {
           GuardedOutput x = guarded(be, randn(33, 33, 10 + variant, 3.0f));
           const RefMask r = mask_of();
           AttentionMask m;
           m.causal = r.causal;
           m.mask_self = r.mask_self;
           m.key_padding = r.padding;
           be.mask_fill(x.view, m);
           be.softmax_rows(x.view);
           return read_guarded(be, x);
         },
         [variant, mask_of] {
           return ref_masked_softmax(to_double(randn(33, 33, 10 + variant, 3.0f)), mask_of());
         }});
  }
  cases.push_back({"softmax_rows 4x300 with huge logits (sigma 1e4)", 1e-6, 1e-5,
                   [](Backend& be) {
                     GuardedOutput x = guarded(be, randn(4, 300, 20, 1e4f));
                     be.softmax_rows(x.view);
                     return read_guarded(be, x);
                   },
                   [] { return ref_masked_softmax(to_double(randn(4, 300, 20, 1e4f)), {}); }});
  cases.push_back({"layer_norm 11x768", 1e-5, 1e-4,
                   [](Backend& be) {
                     Tensor x = be.upload(randn(11, 768, 21, 2.0f));
                     GuardedOutput y = guarded(be, 11, 768);
                     be.layer_norm(x, be.upload(randn(1, 768, 22)), be.upload(randn(1, 768, 23)),
                                   1e-5f, y.view);
                     return read_guarded(be, y);
                   },
                   [] {
                     const Matrix x = randn(11, 768, 21, 2.0f), g = randn(1, 768, 22),
                                  b = randn(1, 768, 23);
                     MatrixD y(11, 768);
                     for (int i = 0; i < 11; ++i) {
                       double mean = 0, var = 0;
                       for (int j = 0; j < 768; ++j) mean += x(i, j) / 768.0;
                       for (int j = 0; j < 768; ++j)
                         var += (x(i, j) - mean) * (x(i, j) - mean) / 768.0;
                       for (int j = 0; j < 768; ++j)
                         y(i, j) = (x(i, j) - mean) / std::sqrt(var + 1e-5) * g(0, j) + b(0, j);
                     }
                     return y;
                   }});
  for (Gelu g : {Gelu::kTanh, Gelu::kErf}) {
    cases.push_back({g == Gelu::kTanh ? "gelu tanh 9x100" : "gelu erf 9x100", 1e-6, 1e-5,
                     [g](Backend& be) {
                       GuardedOutput x = guarded(be, randn(9, 100, 24, 3.0f));
                       be.gelu(x.view, g);
                       return read_guarded(be, x);
                     },
                     [g] {
                       return MatrixD(to_double(randn(9, 100, 24, 3.0f)).unaryExpr([g](double v) {
                         return ref_gelu(v, g == Gelu::kErf);
                       }));
                     }});
  }
  for (bool tw : {false, true}) {
    cases.push_back(
        {std::string("linear (Tensor weight) 13x96 -> 50 with the backend's prepared weight") +
             (tw ? ", W^T" : ""),
         1e-4, 1e-4,
         [tw](Backend& be) {
           Tensor x = be.upload(randn(13, 96, 26));
           Tensor w = be.upload(tw ? randn(50, 96, 27) : randn(96, 50, 27));
           const auto prepared = be.prepare_weight(w, tw);
           GuardedOutput y = guarded(be, 13, 50);
           be.linear(x, w, tw, prepared.get(), be.upload(randn(1, 50, 28)), y.view);
           return read_guarded(be, y);
         },
         [tw] {
           const MatrixD w = to_double(tw ? randn(50, 96, 27) : randn(96, 50, 27));
           MatrixD y = to_double(randn(13, 96, 26)) * (tw ? MatrixD(w.transpose()) : w);
           y.rowwise() += to_double(randn(1, 50, 28)).row(0);
           return y;
         },
         1e-3, 2e-5});
  }
  cases.push_back({"self_attention_heads 20 tokens, 4 heads of 6, causal: context and weights",
                   1e-5, 1e-4,
                   [](Backend& be) {
                     Tensor qkv = be.upload(randn(20, 3 * 24, 29, 2.0f));
                     GuardedOutput context = guarded(be, 20, 24);
                     AttentionMask m;
                     m.causal = true;
                     std::vector<Matrix> w;
                     be.self_attention_heads(qkv, 4, 0.4f, m, context.view, &w);
                     Matrix out(20, 24 + 4 * 20);
                     out << read_guarded(be, context), w[0], w[1], w[2], w[3];
                     return out;
                   },
                   [] {
                     const Matrix qkv = randn(20, 3 * 24, 29, 2.0f);
                     RefMask m;
                     m.causal = true;
                     const RefAttention r = ref_attention(qkv.leftCols(24), qkv.middleCols(24, 24),
                                                          qkv.rightCols(24), 4, 4, 6, 0.4, 0, m);
                     MatrixD out(20, 24 + 4 * 20);
                     out << r.context, r.weights[0], r.weights[1], r.weights[2], r.weights[3];
                     return out;
                   }});
  cases.push_back({"copy between views 6x8", 0, 0,
                   [](Backend& be) {
                     Tensor src = be.upload(randn(6, 8, 25));
                     GuardedOutput dst = guarded(be, 6, 12);
                     Tensor view = dst.view.cols_view(3, 8);
                     be.copy(src, view);
                     return read_guarded(be, dst);
                   },
                   [] {
                     MatrixD d = MatrixD::Zero(6, 12);
                     d.middleCols(3, 8) = to_double(randn(6, 8, 25));
                     return d;
                   }});
  return cases;
}

// The modern-LLM ops' cases (llm_op_cases.h, included below).
inline std::vector<OpCase> llm_op_cases();

// Every case: today's ops and the modern-LLM ones.
inline std::vector<OpCase> backend_op_cases() {
  std::vector<OpCase> cases = gpt2_bert_op_cases();
  for (OpCase& c : llm_op_cases()) cases.push_back(std::move(c));
  return cases;
}

}  // namespace attnscope::test

#include "tests/common/llm_op_cases.h"  // IWYU pragma: keep
