#pragma once
// The op cases of the backend equivalence harness (ggml's test-backend-ops idea): each case builds
// its inputs deterministically, runs one op on the backend it is given and returns the result, so
// the same case can run on the backend under test and on the CPU reference and be compared with
// tolerance tol + |ref|·eps.
#include <functional>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "tests/common/reference.h"

namespace attnscope::test {

struct OpCase {
  std::string name;
  double tol, eps;
  std::function<Matrix(Backend&)> run;
};

inline std::vector<OpCase> backend_op_cases() {
  std::vector<OpCase> cases;
  // matmul over shapes that stress edges: 1s, odd sizes, transposes, strided column views.
  struct Mm {
    int n, k, m;
    bool tb;
  };
  for (Mm s : {Mm{1, 1, 1, false}, Mm{3, 5, 7, false}, Mm{3, 5, 7, true}, Mm{64, 64, 64, true},
               Mm{17, 768, 33, false}, Mm{257, 64, 129, true}}) {
    cases.push_back({"matmul " + std::to_string(s.n) + "x" + std::to_string(s.k) + "x" +
                         std::to_string(s.m) + (s.tb ? " B^T" : ""),
                     1e-4, 1e-4, [s](Backend& be) {
                       Tensor a = be.upload(randn(s.n, s.k, 1));
                       Tensor b = be.upload(s.tb ? randn(s.m, s.k, 2) : randn(s.k, s.m, 2));
                       Tensor c = be.upload(randn(s.n, s.m, 3));
                       be.matmul(a, b, s.tb, c, 0.5f, 0.25f);
                       return be.download(c);
                     }});
  }
  cases.push_back({"matmul on head column views", 1e-4, 1e-4, [](Backend& be) {
                     // qkv is [n x 3d]; head 1's Q and K are strided views into it.
                     Tensor qkv = be.upload(randn(9, 3 * 16, 4));
                     Tensor q = qkv.cols_view(4, 4), k = qkv.cols_view(16 + 4, 4);
                     Tensor s = be.alloc(9, 9);
                     be.matmul(q, k, true, s);
                     Tensor out = be.alloc(9, 3 * 16);
                     Tensor v = qkv.cols_view(32 + 4, 4), o = out.cols_view(4, 4);
                     be.matmul(s, v, false, o);
                     return be.download(out);
                   }});
  cases.push_back({"add_bias", 1e-6, 1e-6, [](Backend& be) {
                     Tensor x = be.upload(randn(7, 13, 5));
                     be.add_bias(x, be.upload(randn(1, 13, 6)));
                     return be.download(x);
                   }});
  cases.push_back({"add on views", 1e-6, 1e-6, [](Backend& be) {
                     Tensor x = be.upload(randn(7, 10, 7));
                     Tensor y = be.upload(randn(7, 10, 8));
                     Tensor xv = x.cols_view(2, 5);
                     be.add(xv, y.cols_view(5, 5));
                     return be.download(x);
                   }});
  cases.push_back({"scale", 1e-6, 1e-6, [](Backend& be) {
                     Tensor x = be.upload(randn(5, 6, 9));
                     be.scale(x, -0.125f);
                     return be.download(x);
                   }});
  for (int variant = 0; variant < 4; ++variant) {
    cases.push_back({"mask_fill + softmax_rows variant " + std::to_string(variant), 1e-6, 1e-5,
                     [variant](Backend& be) {
                       Tensor x = be.upload(randn(33, 33, 10 + variant, 3.0f));
                       AttentionMask m;
                       m.causal = variant & 1;
                       m.mask_self = variant & 2;
                       if (variant == 3) {
                         m.key_padding.assign(33, 0);
                         m.key_padding[5] = m.key_padding[30] = 1;
                       }
                       be.mask_fill(x, m);
                       be.softmax_rows(x);
                       return be.download(x);
                     }});
  }
  cases.push_back({"softmax_rows with huge logits", 1e-6, 1e-5, [](Backend& be) {
                     Matrix m = randn(4, 300, 20, 1e4f);
                     Tensor x = be.upload(m);
                     be.softmax_rows(x);
                     return be.download(x);
                   }});
  cases.push_back({"layer_norm", 1e-5, 1e-4, [](Backend& be) {
                     Tensor x = be.upload(randn(11, 768, 21, 2.0f));
                     Tensor y = be.alloc(11, 768);
                     be.layer_norm(x, be.upload(randn(1, 768, 22)), be.upload(randn(1, 768, 23)),
                                   1e-5f, y);
                     return be.download(y);
                   }});
  for (Gelu g : {Gelu::kTanh, Gelu::kErf}) {
    cases.push_back({g == Gelu::kTanh ? "gelu tanh" : "gelu erf", 1e-6, 1e-5, [g](Backend& be) {
                       Tensor x = be.upload(randn(9, 100, 24, 3.0f));
                       be.gelu(x, g);
                       return be.download(x);
                     }});
  }
  for (bool tw : {false, true}) {
    cases.push_back({std::string("linear with the backend's prepared weight") + (tw ? ", W^T" : ""),
                     1e-4, 1e-4, [tw](Backend& be) {
                       Tensor x = be.upload(randn(13, 96, 26));
                       Tensor w = be.upload(tw ? randn(50, 96, 27) : randn(96, 50, 27));
                       const auto prepared = be.prepare_weight(w, tw);
                       Tensor y = be.alloc(13, 50);
                       be.linear(x, w, tw, prepared.get(), be.upload(randn(1, 50, 28)), y);
                       return be.download(y);
                     }});
  }
  cases.push_back({"self_attention_heads, causal: context and every head's weights", 1e-5, 1e-4,
                   [](Backend& be) {
                     Tensor qkv = be.upload(randn(20, 3 * 24, 29, 2.0f));
                     Tensor context = be.alloc(20, 24);
                     AttentionMask m;
                     m.causal = true;
                     std::vector<Matrix> w;
                     be.self_attention_heads(qkv, 4, 0.4f, m, context, &w);
                     Matrix out(20, 24 + 4 * 20);
                     out << be.download(context), w[0], w[1], w[2], w[3];
                     return out;
                   }});
  cases.push_back({"copy between views", 0, 0, [](Backend& be) {
                     Tensor src = be.upload(randn(6, 8, 25));
                     Tensor dst = be.alloc(6, 12);
                     Tensor view = dst.cols_view(3, 8);
                     be.copy(src, view);
                     return be.download(dst);
                   }});
  return cases;
}

}  // namespace attnscope::test
