// Issue 26's speed goal: a Llama-3.2-1B-shaped forward (16 layers, d 2048, 32/8 heads of 64,
// MLP 8192, vocab 128256, tied embeddings) on weights in Q4_K_M's mix against the same shape in
// bf16, side by side in one run. The quantised weights stay quantised (packed_gemm.h dequantises
// each panel into a float buffer on every product); the bf16 ones are packed 16-bit panels.
//
// Q4_K_M's mix as llama.cpp's llama_model_quantize chooses it (llama-quant.cpp,
// llama_tensor_get_type): attn_v and ffn_down Q6_K in the layers use_more_bits picks (the first
// and last eighth and every third between: 0, 1, 4, 7, 10, 13, 14, 15 of 16), Q4_K elsewhere;
// attn_q/k/output and ffn_gate/up Q4_K; the tied token_embd (the output matrix) Q6_K.
//
// Per layer as decoder_shape_bench: RMSNorm, q/k/v, RoPE, grouped-query attention with every
// head's weights read back (as a trace keeps them), o, residual, RMSNorm, gate/up, SiLU, down,
// residual; then the final norm and the tied lm_head for the last token. Args: tokens, format
// (0 bf16, 1 Q4_K_M), layers. Run (medians of 5; the issue asks Q4_K_M <= 1.5x bf16):
//   build/bench/gguf_quant_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// or bench/gguf_bench.sh, which also measures memory.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/quant.h"

namespace {

using namespace attnscope;

struct Shape {
  int layers, d, heads, kv_heads, head_dim, ff, vocab;
};
constexpr Shape kLlama1B{16, 2048, 32, 8, 64, 8192, 128256};

// llama.cpp's use_more_bits(i_layer, n_layers).
bool use_more_bits(int i, int n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// Random bytes from a cheap generator, 8 at a time.
void fill_random(unsigned char* p, std::size_t n, std::uint64_t seed) {
  std::uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint64_t v = s ^ (s >> 29);
    std::memcpy(p + i, &v, 8);
  }
  for (; i < n; ++i) p[i] = static_cast<unsigned char>(i * 131 + seed);
}

// [rows x cols] of `t` with values of about N(0, 0.02²) in size: random quants, f16 scales set.
WeightView random_weight(DType t, int rows, int cols, std::uint32_t seed) {
  WeightView w;
  w.dtype = t;
  w.rows = rows;
  w.cols = cols;
  const std::size_t bytes = dtype_row_bytes(t, static_cast<std::size_t>(cols)) * rows;
  auto mem = std::shared_ptr<unsigned char[]>(new unsigned char[bytes]);
  fill_random(mem.get(), bytes, seed);
  if (t == DType::kBF16) {
    auto* h = reinterpret_cast<std::uint16_t*>(mem.get());
    for (std::size_t i = 0; i < bytes / 2; ++i) {  // uniform(-0.035, 0.035): sigma 0.02
      const float u = static_cast<float>(h[i]) / 65536.0f - 0.5f;
      h[i] = float_to_bf16(u * 0.07f);
    }
  } else {
    // Q4_K: d·sc·q - dmin·m with sc, m < 64, q < 16; Q6_K: d·sc·q with |sc| <= 128, |q| <= 32.
    const float d = t == DType::kQ4_K ? 1.5e-4f : 1.7e-5f, dmin = t == DType::kQ4_K ? 1.1e-3f : 0;
    const quant::ScaleOffsets o = quant::scale_offsets(t);
    const std::uint16_t hd = float_to_f16(d), hm = float_to_f16(dmin);
    const std::size_t block = dtype_block_bytes(t);
    for (std::size_t b = 0; b < bytes; b += block) {
      std::memcpy(mem.get() + b + o.first, &hd, 2);
      if (o.second >= 0) std::memcpy(mem.get() + b + o.second, &hm, 2);
    }
  }
  w.data = mem.get();
  w.owner = mem;
  return w;
}

struct Layer {
  std::shared_ptr<const PreparedWeight> q, k, v, o, gate, up, down;
  Tensor norm1, norm2;
};

struct Decoder {
  Shape s;
  std::vector<Layer> layers;
  std::shared_ptr<const PreparedWeight> lm_head;
  Tensor final_norm;
  std::vector<float> inv_freq;
  std::size_t weight_bytes = 0;

  Decoder(Backend& be, Shape shape, bool quantized, int layer_count) : s(shape) {
    const int dq = s.heads * s.head_dim, dkv = s.kv_heads * s.head_dim;
    std::uint32_t seed = 1;
    auto w = [&](int out, int in, DType q) {
      const WeightView v = random_weight(quantized ? q : DType::kBF16, out, in, seed++);
      weight_bytes += dtype_row_bytes(v.dtype, static_cast<std::size_t>(in)) * out;
      return be.prepare_weight(v, true);
    };
    const Matrix ones = Matrix::Ones(1, s.d);
    for (int l = 0; l < layer_count; ++l) {
      const DType more = use_more_bits(l, s.layers) ? DType::kQ6_K : DType::kQ4_K;
      Layer L;
      L.q = w(dq, s.d, DType::kQ4_K);
      L.k = w(dkv, s.d, DType::kQ4_K);
      L.v = w(dkv, s.d, more);
      L.o = w(s.d, dq, DType::kQ4_K);
      L.gate = w(s.ff, s.d, DType::kQ4_K);
      L.up = w(s.ff, s.d, DType::kQ4_K);
      L.down = w(s.d, s.ff, more);
      L.norm1 = be.upload(ones);
      L.norm2 = be.upload(ones);
      layers.push_back(std::move(L));
    }
    lm_head = w(s.vocab, s.d, DType::kQ6_K);  // token_embd, tied
    final_norm = be.upload(ones);
    for (int j = 0; j < s.head_dim / 2; ++j)
      inv_freq.push_back(std::pow(5e5f, -2.0f * j / s.head_dim));
  }

  void forward(Backend& be, int n, std::vector<std::vector<Matrix>>& attention) {
    const int dq = s.heads * s.head_dim, dkv = s.kv_heads * s.head_dim;
    Tensor x = be.upload(Matrix::Constant(n, s.d, 0.5f));
    Tensor h = be.alloc(n, s.d), q = be.alloc(n, dq), k = be.alloc(n, dkv), v = be.alloc(n, dkv);
    Tensor ctx = be.alloc(n, dq), o = be.alloc(n, s.d), g = be.alloc(n, s.ff),
           u = be.alloc(n, s.ff);
    AttentionMask mask;
    mask.causal = true;
    attention.resize(layers.size());
    const Tensor none;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const Layer& L = layers[l];
      be.rms_norm(x, L.norm1, 1e-5f, 0.0f, h);
      be.linear(h, *L.q, none, q);
      be.linear(h, *L.k, none, k);
      be.linear(h, *L.v, none, v);
      be.rope(q, s.heads, s.head_dim, inv_freq, 0);
      be.rope(k, s.kv_heads, s.head_dim, inv_freq, 0);
      be.attention_heads(q, k, v, s.heads, s.kv_heads, s.head_dim,
                         1.0f / std::sqrt(static_cast<float>(s.head_dim)), 0.0f, mask, ctx,
                         &attention[l]);
      be.linear(ctx, *L.o, none, o);
      be.add(x, o);
      be.rms_norm(x, L.norm2, 1e-5f, 0.0f, h);
      be.linear(h, *L.gate, none, g);
      be.linear(h, *L.up, none, u);
      be.gated_activation(g, u, Activation::kSiLU, g);
      be.linear(g, *L.down, none, o);
      be.add(x, o);
    }
    Tensor last = x.rows_view(n - 1, 1), normed = be.alloc(1, s.d), logits = be.alloc(1, s.vocab);
    be.rms_norm(last, final_norm, 1e-5f, 0.0f, normed);
    be.linear(normed, *lm_head, none, logits);
    be.synchronize();
  }
};

void BM_Llama1BForward(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)), layer_count = static_cast<int>(state.range(2));
  const bool quantized = state.range(1) == 1;
  static const std::shared_ptr<Backend> be = make_cpu_backend();
  Decoder dec(*be, kLlama1B, quantized, layer_count);
  std::vector<std::vector<Matrix>> attention;
  dec.forward(*be, n, attention);  // warm-up: first touches, scratch buffers
  for (auto _ : state) dec.forward(*be, n, attention);
  state.counters["weight_MB"] = static_cast<double>(dec.weight_bytes) / 1e6;
  state.SetLabel(std::string(quantized ? "Q4_K_M" : "bf16") + ", Llama-3.2-1B shape, " +
                 std::to_string(layer_count) + " of 16 layers, " + be->description());
}

}  // namespace

// Args: tokens, 0 = bf16 / 1 = Q4_K_M, layers (ATTNSCOPE_BENCH_LAYERS, default all 16).
int main(int argc, char** argv) {
  const char* env = std::getenv("ATTNSCOPE_BENCH_LAYERS");
  const int layers = env ? std::atoi(env) : kLlama1B.layers;
  for (int format : {0, 1})
    benchmark::RegisterBenchmark("BM_Llama1BForward", BM_Llama1BForward)
        ->Args({64, format, layers})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
