#pragma once
// The harness cases of the modern-LLM ops (Llama, Mistral, Qwen, Gemma): linear on F32/BF16/F16
// weights, embedding, RMSNorm (whole rows and per head), RoPE, gated activations, softcap,
// windowed and offset masks, grouped-query attention. See op_cases.h for the harness.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/common/op_cases.h"

namespace attnscope::test {

// A weight as a file holds it: `m` rounded to `dtype`, its bits in memory the view owns, and the
// exact values of those bits (decoded independently of the backend, op_reference.h).
struct FileWeight {
  WeightView view;
  MatrixD values;
};
inline FileWeight file_weight(const Matrix& m, DType dtype) {
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  FileWeight w;
  w.values.resize(rows, cols);
  const std::size_t count = static_cast<std::size_t>(rows) * cols;
  if (dtype == DType::kF32) {
    auto mem = std::make_shared<std::vector<float>>(m.data(), m.data() + count);
    w.view.data = mem->data();
    w.view.owner = mem;
    w.values = to_double(m);
  } else {
    auto mem = std::make_shared<std::vector<std::uint16_t>>(count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint16_t h =
          dtype == DType::kBF16 ? float_to_bf16(m.data()[i]) : float_to_f16(m.data()[i]);
      (*mem)[i] = h;
      w.values.data()[i] = dtype == DType::kBF16 ? ref_bf16(h) : ref_f16(h);
    }
    w.view.data = mem->data();
    w.view.owner = mem;
  }
  w.view.dtype = dtype;
  w.view.rows = rows;
  w.view.cols = cols;
  return w;
}

// A [rows x cols] weight in one of ggml's block formats: random bytes (every quant and bit
// pattern) with f16 scales set so that the values are of order 1, and their values as quant.h's
// scalar code dequantises them (held bit for bit against numpy's in quant_test).
inline FileWeight quantized_weight(int rows, int cols, DType dtype, std::uint32_t seed) {
  const std::size_t row_bytes = dtype_row_bytes(dtype, static_cast<std::size_t>(cols));
  auto mem = std::make_shared<std::vector<unsigned char>>(row_bytes * rows);
  std::uint64_t state = 0x9e3779b97f4a7c15ull * (seed + 1);
  for (unsigned char& b : *mem) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    b = static_cast<unsigned char>(state >> 56);
  }
  float d = 0.01f, m = 0.0f;  // value scale of each format's quants
  switch (dtype) {
    case DType::kQ4_0:
      d = 0.2f;
      break;
    case DType::kQ4_1:
      d = 0.2f, m = -1.5f;
      break;
    case DType::kQ5_0:
      d = 0.1f;
      break;
    case DType::kQ5_1:
      d = 0.1f, m = -1.5f;
      break;
    case DType::kQ8_0:
      d = 0.015f;
      break;
    case DType::kQ2_K:
      d = 0.05f, m = 0.02f;
      break;
    case DType::kQ3_K:
      d = 0.03f;
      break;
    case DType::kQ4_K:
      d = 0.005f, m = 0.01f;
      break;
    case DType::kQ5_K:
      d = 0.003f, m = 0.01f;
      break;
    case DType::kQ6_K:
      d = 0.001f;
      break;
    case DType::kIQ4_NL:
      d = 0.01f;
      break;
    case DType::kIQ4_XS:
      d = 0.0005f;
      break;
    default:
      break;
  }
  const quant::ScaleOffsets o = quant::scale_offsets(dtype);
  const std::size_t block_bytes = dtype_block_bytes(dtype), blocks = mem->size() / block_bytes;
  for (std::size_t i = 0; i < blocks; ++i) {
    const float jitter = 0.6f + 0.8f * static_cast<float>(i % 7) / 7.0f;
    const std::uint16_t hd = float_to_f16(d * jitter), hm = float_to_f16(m * jitter);
    std::memcpy(mem->data() + i * block_bytes + o.first, &hd, 2);
    if (o.second >= 0) std::memcpy(mem->data() + i * block_bytes + o.second, &hm, 2);
  }
  FileWeight w;
  w.view.data = mem->data();
  w.view.owner = mem;
  w.view.dtype = dtype;
  w.view.rows = rows;
  w.view.cols = cols;
  w.values.resize(rows, cols);
  std::vector<float> row(static_cast<std::size_t>(cols));
  for (int r = 0; r < rows; ++r) {
    dequantize_row(dtype, mem->data() + r * row_bytes, row.data(), cols);
    for (int c = 0; c < cols; ++c) w.values(r, c) = row[static_cast<std::size_t>(c)];
  }
  return w;
}

inline constexpr DType kQuantizedTypes[] = {
    DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0,   DType::kQ2_K,
    DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS};

// Hugging Face's default inv_freq: theta^(-2j / dh).
inline std::vector<float> rope_inv_freq(int dh, double theta) {
  std::vector<float> f(dh / 2);
  for (int j = 0; j < dh / 2; ++j) f[j] = static_cast<float>(std::pow(theta, -2.0 * j / dh));
  return f;
}

inline AttentionMask to_mask(const RefMask& r) {
  AttentionMask m;
  m.causal = r.causal;
  m.mask_self = r.mask_self;
  m.window = r.window;
  m.query_offset = r.offset;
  m.key_padding = r.padding;
  return m;
}
inline std::string describe(const RefMask& r) {
  return std::string(r.causal ? "causal" : "not causal") + (r.mask_self ? ", mask_self" : "") +
         (r.window ? ", window " + std::to_string(r.window) : "") +
         (r.offset ? ", query offset " + std::to_string(r.offset) : "") +
         (r.padding.empty() ? "" : ", key padding");
}

inline void add_linear_cases(std::vector<OpCase>& cases) {
  struct Lin {
    int n, k, out;
    bool transposed, bias, strided_x;
  };
  std::uint32_t seed = 300;
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
    for (Lin s : {Lin{1, 64, 48, true, false, false}, Lin{17, 96, 50, false, true, true},
                  Lin{17, 768, 100, true, true, false}, Lin{513, 64, 33, true, false, false},
                  Lin{5, 1000, 70, true, true, false}, Lin{9, 2048, 49, false, false, true}}) {
      seed += 3;
      const Matrix xm = randn(s.n, s.k + 6, seed, 1.0f), bm = randn(1, s.out, seed + 1);
      const FileWeight w =
          file_weight(s.transposed ? randn(s.out, s.k, seed + 2) : randn(s.k, s.out, seed + 2), dt);
      const double scale = std::max(1.0, s.k / 768.0);
      OpCase c;
      c.name = std::string("linear ") + dtype_name(dt) + " weight, x " + shape(s.n, s.k) +
               (s.strided_x ? " (a strided view)" : "") + " -> " + std::to_string(s.out) +
               (s.transposed ? ", W [out x in]" : ", W [in x out]") + (s.bias ? " + bias" : "");
      c.tol = 1e-4 * scale;
      c.eps = 1e-4;
      if (dt == DType::kF32) c.amx_tol = 2e-3 * scale, c.amx_eps = 2e-5;
      c.run = [s, xm, bm, w](Backend& be) {
        Tensor xt = be.upload(xm);
        const Tensor x = s.strided_x ? xt.cols_view(3, s.k) : xt.cols_view(0, s.k);
        const auto prepared = be.prepare_weight(w.view, s.transposed);
        if (prepared->in != s.k || prepared->out != s.out)
          throw std::runtime_error("prepare_weight says " + std::to_string(prepared->in) + " -> " +
                                   std::to_string(prepared->out));
        GuardedOutput y = guarded(be, s.n, s.out);
        be.linear(x, *prepared, s.bias ? be.upload(bm) : Tensor{}, y.view);
        return read_guarded(be, y);
      };
      c.reference = [s, xm, bm, w] {
        const MatrixD x = to_double(xm).middleCols(s.strided_x ? 3 : 0, s.k);
        MatrixD y = x * (s.transposed ? MatrixD(w.values.transpose()) : w.values);
        if (s.bias) y.rowwise() += to_double(bm).row(0);
        return y;
      };
      cases.push_back(std::move(c));
    }
  // ggml's block formats, [out x in] as GGUF stores them: one row and 17 rows (one row chunk), 70
  // rows (two), k over several of the kernel's 768-long chunks, outputs not a multiple of a panel.
  for (DType dt : kQuantizedTypes)
    for (Lin s : {Lin{1, 256, 48, true, false, false}, Lin{17, 1024, 100, true, true, true},
                  Lin{70, 2048, 50, true, false, false}}) {
      seed += 3;
      const Matrix xm = randn(s.n, s.k + 6, seed, 1.0f), bm = randn(1, s.out, seed + 1);
      const FileWeight w = quantized_weight(s.out, s.k, dt, seed + 2);
      const double scale = std::max(1.0, s.k / 768.0);
      OpCase c;
      c.name = std::string("linear ") + dtype_name(dt) + " weight, x " + shape(s.n, s.k) +
               (s.strided_x ? " (a strided view)" : "") + " -> " + std::to_string(s.out) +
               ", W [out x in]" + (s.bias ? " + bias" : "");
      c.tol = 1e-4 * scale;
      c.eps = 1e-4;
      c.run = [s, xm, bm, w](Backend& be) {
        Tensor xt = be.upload(xm);
        const Tensor x = s.strided_x ? xt.cols_view(3, s.k) : xt.cols_view(0, s.k);
        const auto prepared = be.prepare_weight(w.view, true);
        if (prepared->in != s.k || prepared->out != s.out)
          throw std::runtime_error("prepare_weight says " + std::to_string(prepared->in) + " -> " +
                                   std::to_string(prepared->out));
        GuardedOutput y = guarded(be, s.n, s.out);
        be.linear(x, *prepared, s.bias ? be.upload(bm) : Tensor{}, y.view);
        return read_guarded(be, y);
      };
      c.reference = [s, xm, bm, w] {
        const MatrixD x = to_double(xm).middleCols(s.strided_x ? 3 : 0, s.k);
        MatrixD y = x * MatrixD(w.values.transpose());
        if (s.bias) y.rowwise() += to_double(bm).row(0);
        return y;
      };
      cases.push_back(std::move(c));
    }
}

inline void add_elementwise_cases(std::vector<OpCase>& cases) {
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
    for (const std::vector<int>& ids : {std::vector<int>{3, 0, 49, 3, 17}, std::vector<int>{7}}) {
      const FileWeight table = file_weight(randn(50, 24, 400, 2.0f), dt);
      cases.push_back({std::string("embedding ") + dtype_name(dt) + " 50x24, " +
                           std::to_string(ids.size()) + " ids",
                       0, 0,
                       [table, ids](Backend& be) {
                         GuardedOutput out = guarded(be, static_cast<int>(ids.size()), 24);
                         be.embedding(table.view, ids, out.view);
                         return read_guarded(be, out);
                       },
                       [table, ids] {
                         MatrixD out(ids.size(), 24);
                         for (std::size_t i = 0; i < ids.size(); ++i)
                           out.row(i) = table.values.row(ids[i]);
                         return out;
                       }});
    }
  for (DType dt : kQuantizedTypes) {  // only the rows asked for, block by block
    const FileWeight table = quantized_weight(50, 256, dt, 410 + static_cast<int>(dt));
    const std::vector<int> ids{3, 0, 49, 3, 17};
    cases.push_back({std::string("embedding ") + dtype_name(dt) + " 50x256, 5 ids", 0, 0,
                     [table, ids](Backend& be) {
                       GuardedOutput out = guarded(be, static_cast<int>(ids.size()), 256);
                       be.embedding(table.view, ids, out.view);
                       return read_guarded(be, out);
                     },
                     [table, ids] {
                       MatrixD out(ids.size(), 256);
                       for (std::size_t i = 0; i < ids.size(); ++i)
                         out.row(i) = table.values.row(ids[i]);
                       return out;
                     }});
  }
  struct Rms {
    int n, cols, group;
    float eps, offset;
    bool in_place;
  };
  std::uint32_t seed = 420;
  for (Rms r : {Rms{17, 576, 576, 1e-5f, 0, false}, Rms{3, 2048, 2048, 1e-6f, 1, false},
                Rms{17, 256, 64, 1e-6f, 0, false}, Rms{1, 512, 128, 1e-6f, 1, true},
                Rms{2, 8, 8, 1e-5f, 0, true}}) {
    seed += 2;
    const Matrix x = randn(r.n, r.cols + 10, seed, 3.0f), w = randn(1, r.group, seed + 1, 0.5f);
    cases.push_back(
        {"rms_norm " + shape(r.n, r.cols) + " in groups of " + std::to_string(r.group) + ", eps " +
             std::to_string(r.eps) + ", weight offset " + std::to_string(r.offset) +
             (r.in_place ? ", in place" : ", x a strided view"),
         1e-5, 1e-5,
         [r, x, w](Backend& be) {
           if (r.in_place) {
             GuardedOutput y = guarded(be, x.leftCols(r.cols));
             be.rms_norm(y.view, be.upload(w), r.eps, r.offset, y.view);
             return read_guarded(be, y);
           }
           Tensor xt = be.upload(x);
           GuardedOutput y = guarded(be, r.n, r.cols);
           be.rms_norm(xt.cols_view(4, r.cols), be.upload(w), r.eps, r.offset, y.view);
           return read_guarded(be, y);
         },
         [r, x, w] {
           return ref_rms_norm(
               r.in_place ? Matrix(x.leftCols(r.cols)) : Matrix(x.middleCols(4, r.cols)), w, r.eps,
               r.offset);
         }});
  }
  struct Rope {
    int n, heads, dh, pos0;
    double theta;
  };
  for (Rope r : {Rope{17, 4, 64, 0, 1e4}, Rope{3, 2, 128, 1000, 5e5}, Rope{1, 3, 64, 4095, 1e4},
                 Rope{513, 9, 64, 0, 1e5}, Rope{5, 1, 2, 7, 1e4}}) {
    seed += 2;
    const Matrix x = randn(r.n, 3 * r.heads * r.dh, seed);
    const std::vector<float> inv_freq = rope_inv_freq(r.dh, r.theta);
    const int d = r.heads * r.dh;
    cases.push_back(
        {"rope " + std::to_string(r.n) + " tokens from position " + std::to_string(r.pos0) + ", " +
             std::to_string(r.heads) + " heads of " + std::to_string(r.dh) + ", theta " +
             std::to_string(r.theta) + ", on the K block of a fused qkv",
         1e-5, 1e-5,
         [r, x, inv_freq, d](Backend& be) {
           GuardedOutput qkv = guarded(be, x);
           Tensor k = qkv.view.cols_view(d, d);
           be.rope(k, r.heads, r.dh, inv_freq, r.pos0);
           return read_guarded(be, qkv);
         },
         [r, x, inv_freq, d] {
           MatrixD y = to_double(x);
           y.middleCols(d, d) = ref_rope(x.middleCols(d, d), r.heads, r.dh, inv_freq, r.pos0);
           return y;
         }});
  }
  for (Activation act : {Activation::kSiLU, Activation::kGeluTanh, Activation::kGeluErf})
    for (bool in_place : {false, true}) {
      Matrix gate = randn(9, 100, 440, 3.0f);
      gate(0, 0) = -100.0f, gate(0, 1) = 100.0f, gate(0, 2) = -20.0f, gate(0, 3) = 0.0f;
      const Matrix up = randn(9, 100, 441, 2.0f);
      const char* name = act == Activation::kSiLU       ? "SiLU"
                         : act == Activation::kGeluTanh ? "GELU tanh"
                                                        : "GELU erf";
      cases.push_back(
          {std::string("gated_activation ") + name + " 9x100" + (in_place ? ", out = gate" : ""),
           // 1 + erf(x) and 1 + tanh(x) cancel in float for x < -3 (as in PyTorch's float32
           // GELU): absolute errors of ~1e-7·|x|, times |up| here.
           5e-6, 1e-5,
           [act, in_place, gate, up](Backend& be) {
             GuardedOutput g = guarded(be, gate);
             Tensor u = be.upload(up);
             if (in_place) {
               be.gated_activation(g.view, u, act, g.view);
               return read_guarded(be, g);
             }
             GuardedOutput out = guarded(be, 9, 100);
             be.gated_activation(g.view, u, act, out.view);
             return read_guarded(be, out);
           },
           [act, gate, up] {
             MatrixD out(9, 100);
             for (int i = 0; i < 9; ++i)
               for (int j = 0; j < 100; ++j) {
                 const double g = gate(i, j);
                 const double a = act == Activation::kSiLU
                                      ? ref_silu(g)
                                      : ref_gelu(g, act == Activation::kGeluErf);
                 out(i, j) = a * up(i, j);
               }
             return out;
           }});
    }
  for (float cap : {50.0f, 30.0f}) {
    const Matrix x = randn(9, 100, 450, 60.0f);
    cases.push_back({"softcap 9x100 (sigma 60) at " + std::to_string(cap), 1e-5, 1e-5,
                     [cap, x](Backend& be) {
                       GuardedOutput g = guarded(be, x);
                       be.softcap(g.view, cap);
                       return read_guarded(be, g);
                     },
                     [cap, x] {
                       return MatrixD(to_double(x).unaryExpr(
                           [cap](double v) { return cap * std::tanh(v / cap); }));
                     }});
  }
}

inline void add_mask_and_attention_cases(std::vector<OpCase>& cases) {
  struct MaskCase {
    int n, m;
    RefMask mask;
  };
  std::uint32_t seed = 500;
  for (MaskCase mc :
       {MaskCase{17, 40, {true, false, 8, 23, {}}}, MaskCase{33, 33, {true, false, 5, 0, {}}},
        MaskCase{5, 12, {true, true, 0, 7, {}}}, MaskCase{9, 9, {false, false, 3, 0, {}}},
        MaskCase{4, 6, {true, false, 2, 2, {0, 0, 0, 1, 0, 0}}}}) {
    const Matrix x = randn(mc.n, mc.m, ++seed, 3.0f);
    cases.push_back({"mask_fill + softmax_rows " + shape(mc.n, mc.m) + ", " + describe(mc.mask),
                     1e-6, 1e-5,
                     [mc, x](Backend& be) {
                       GuardedOutput g = guarded(be, x);
                       be.mask_fill(g.view, to_mask(mc.mask));
                       be.softmax_rows(g.view);
                       return read_guarded(be, g);
                     },
                     [mc, x] { return ref_masked_softmax(to_double(x), mc.mask); }});
  }
  struct Att {
    int n, m, heads, kv_heads, dh;
    double factor, cap;
    RefMask mask;
  };
  const double f64 = 0.125, f128 = 1.0 / std::sqrt(128.0);
  for (Att a : {Att{17, 17, 32, 8, 64, f64, 0, {true, false, 0, 0, {}}},
                Att{513, 513, 9, 3, 64, f64, 0, {true, false, 0, 0, {}}},
                Att{33, 33, 8, 2, 128, 1.0 / 16, 50, {true, false, 7, 0, {}}},
                Att{1, 40, 4, 2, 64, f64, 0, {true, false, 16, 39, {}}},
                Att{5, 21, 4, 4, 128, f128, 30, {true, false, 0, 16, {}}},
                Att{7, 7, 6, 6, 16, 0.25, 0, {false, false, 0, 0, {0, 0, 1, 0, 0, 0, 1}}},
                Att{3, 3, 2, 1, 8, 0.3, 0, {true, true, 0, 0, {}}}}) {
    seed += 3;
    // q, k and v are column blocks of one fused projection, as Qwen2's are not but GPT-2's are.
    const int dq = a.heads * a.dh, dkv = a.kv_heads * a.dh;
    const Matrix q = randn(a.n, dq, seed, 1.5f), k = randn(a.m, dkv, seed + 1, 1.5f),
                 v = randn(a.m, dkv, seed + 2);
    OpCase c;
    c.name = "attention_heads " + std::to_string(a.n) + " queries x " + std::to_string(a.m) +
             " keys, " + std::to_string(a.heads) + "/" + std::to_string(a.kv_heads) + " heads of " +
             std::to_string(a.dh) + ", factor " + std::to_string(a.factor) +
             (a.cap > 0 ? ", softcap " + std::to_string(a.cap) : "") + ", " + describe(a.mask) +
             ": context, then every head's weights";
    c.tol = 1e-5;
    c.eps = 1e-4;
    c.run = [a, q, k, v, dq](Backend& be) {
      Tensor kv = be.upload((Matrix(a.m, 2 * k.cols()) << k, v).finished());
      GuardedOutput context = guarded(be, a.n, dq);
      std::vector<Matrix> w;
      be.attention_heads(be.upload(q), kv.cols_view(0, k.cols()), kv.cols_view(k.cols(), k.cols()),
                         a.heads, a.kv_heads, a.dh, static_cast<float>(a.factor),
                         static_cast<float>(a.cap), to_mask(a.mask), context.view, &w);
      Matrix out(a.n, dq + a.heads * a.m);
      out.leftCols(dq) = read_guarded(be, context);
      for (int h = 0; h < a.heads; ++h) out.middleCols(dq + h * a.m, a.m) = w.at(h);
      return out;
    };
    c.reference = [a, q, k, v, dq] {
      const RefAttention r =
          ref_attention(q, k, v, a.heads, a.kv_heads, a.dh, a.factor, a.cap, a.mask);
      MatrixD out(a.n, dq + a.heads * a.m);
      out.leftCols(dq) = r.context;
      for (int h = 0; h < a.heads; ++h) out.middleCols(dq + h * a.m, a.m) = r.weights[h];
      return out;
    };
    cases.push_back(std::move(c));
  }
}

inline std::vector<OpCase> llm_op_cases() {
  std::vector<OpCase> cases;
  add_linear_cases(cases);
  add_elementwise_cases(cases);
  add_mask_and_attention_cases(cases);
  return cases;
}

}  // namespace attnscope::test
