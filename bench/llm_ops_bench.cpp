// The modern-LLM ops at Llama-3.2-1B shapes (d 2048, 32 heads, 8 KV heads, head_dim 64, MLP 8192)
// and SmolLM2-135M shapes (d 576, 9 heads, 3 KV heads, head_dim 64, MLP 1536), 32/64/512 tokens:
//   - linear with F32, BF16 and F16 weights side by side (the F32 one is the float path GPT-2
//     uses), on the CPU by default or on CUDA with ATTNSCOPE_BENCH_BACKEND=cuda;
//   - attention_heads (grouped-query, every head's weights kept), rms_norm, rope, gated_activation;
//   - for comparison, OpenBLAS's and oneDNN's sgemm at the same shapes (x · Wᵀ, W [out x in]), when
//     their shared libraries are on this machine (loaded at run time: no build dependency).
// Run: build/bin/llm_ops_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
// (medians: the machines are shared). Rates are in GFLOP/s (`rate`).
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"

namespace {

using namespace attnscope;

Backend& bench_backend() {
  static const std::shared_ptr<Backend> backend = []() -> std::shared_ptr<Backend> {
    const char* env = std::getenv("ATTNSCOPE_BENCH_BACKEND");
    if (env && std::string(env) == "cuda") {
      std::string why;
      auto cuda = try_cuda_backend(why);
      if (!cuda) {
        std::fprintf(stderr, "llm_ops_bench: no CUDA backend (%s)\n", why.c_str());
        std::exit(1);
      }
      return cuda;
    }
    return make_cpu_backend();
  }();
  return *backend;
}

Matrix random_matrix(int rows, int cols, unsigned seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  Matrix m(rows, cols);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = dist(rng);
  return m;
}

// A weight [out x in] (nn.Linear's layout) in `dtype`, owning its memory.
WeightView random_weight(int out, int in, DType dtype) {
  const Matrix m = random_matrix(out, in, 7, 0.02f);
  WeightView w;
  w.dtype = dtype;
  w.rows = out;
  w.cols = in;
  if (dtype == DType::kF32) {
    auto mem = std::make_shared<std::vector<float>>(m.data(), m.data() + m.size());
    w.data = mem->data();
    w.owner = mem;
  } else {
    auto mem = std::make_shared<std::vector<std::uint16_t>>(m.size());
    for (Eigen::Index i = 0; i < m.size(); ++i)
      (*mem)[i] = dtype == DType::kBF16 ? float_to_bf16(m.data()[i]) : float_to_f16(m.data()[i]);
    w.data = mem->data();
    w.owner = mem;
  }
  return w;
}

// Args: tokens, in, out, dtype (0 F32, 1 BF16, 2 F16).
void BM_Linear(benchmark::State& state) {
  const int n = state.range(0), in = state.range(1), out = state.range(2);
  const DType dtype = static_cast<DType>(state.range(3));
  Backend& be = bench_backend();
  const auto w = be.prepare_weight(random_weight(out, in, dtype), /*transpose_w=*/true);
  const Tensor x = be.upload(random_matrix(n, in, 1));
  Tensor y = be.alloc(n, out);
  for (auto _ : state) {
    be.linear(x, *w, Tensor{}, y);
    be.synchronize();
  }
  state.counters["rate"] = benchmark::Counter(2.0 * n * in * out * state.iterations() / 1e9,
                                              benchmark::Counter::kIsRate);
  state.SetLabel(std::string(dtype_name(dtype)) + " weights, " + be.description());
}

void linear_shapes(benchmark::internal::Benchmark* b) {
  // Llama-3.2-1B: q/o 2048 -> 2048, k/v 2048 -> 512, gate/up 2048 -> 8192, down 8192 -> 2048;
  // SmolLM2-135M: q/o 576 -> 576, k/v 576 -> 192, gate/up 576 -> 1536, down 1536 -> 576.
  const std::vector<std::pair<int, int>> shapes = {{2048, 512}, {2048, 8192}, {8192, 2048},
                                                   {576, 192},  {576, 1536},  {1536, 576}};
  for (int n : {32, 64, 512})
    for (auto [in, out] : shapes)
      for (int dt = 0; dt < 3; ++dt) b->Args({n, in, out, dt});
}
BENCHMARK(BM_Linear)->Apply(linear_shapes)->UseRealTime()->Unit(benchmark::kMillisecond);

// Args: tokens, heads, kv_heads (head_dim 64, causal, every head's weights kept as the trace does).
void BM_AttentionHeads(benchmark::State& state) {
  const int n = state.range(0), heads = state.range(1), kv = state.range(2), dh = 64;
  Backend& be = bench_backend();
  const Tensor q = be.upload(random_matrix(n, heads * dh, 1));
  const Tensor k = be.upload(random_matrix(n, kv * dh, 2));
  const Tensor v = be.upload(random_matrix(n, kv * dh, 3));
  Tensor context = be.alloc(n, heads * dh);
  AttentionMask mask;
  mask.causal = true;
  std::vector<Matrix> weights;
  for (auto _ : state) {
    be.attention_heads(q, k, v, heads, kv, dh, 0.125f, 0.0f, mask, context, &weights);
    be.synchronize();
  }
  state.counters["rate"] = benchmark::Counter(4.0 * n * n * heads * dh * state.iterations() / 1e9,
                                              benchmark::Counter::kIsRate);
  // Achieved memory bandwidth, GB/s, of the traffic the op cannot avoid: q, k, v read once, the
  // context and every head's [n x n] weights written once (the weights dominate: 4·heads·n² bytes).
  const double bytes = 4.0 * (2.0 * n * heads * dh + 2.0 * n * kv * dh + double(heads) * n * n);
  state.counters["GB/s"] =
      benchmark::Counter(bytes * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(be.description());
}
BENCHMARK(BM_AttentionHeads)
    ->ArgsProduct({{32, 64, 512}, {32}, {8}})
    ->ArgsProduct({{32, 64, 512}, {9}, {3}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Args: tokens, d. The per-token ops of one layer: two RMSNorms of the hidden state, RoPE of q and
// k, the gated activation of the MLP (d_ff = 4d).
void BM_LayerElementwise(benchmark::State& state) {
  const int n = state.range(0), d = state.range(1), dh = 64, ff = 4 * d;
  Backend& be = bench_backend();
  const Tensor x = be.upload(random_matrix(n, d, 1));
  const Tensor w = be.upload(random_matrix(1, d, 2));
  Tensor y = be.alloc(n, d), qk = be.upload(random_matrix(n, 2 * d, 3));
  Tensor gate = be.upload(random_matrix(n, ff, 4)), up = be.upload(random_matrix(n, ff, 5));
  Tensor out = be.alloc(n, ff);
  std::vector<float> inv_freq(dh / 2);
  for (int j = 0; j < dh / 2; ++j) inv_freq[j] = std::pow(5e5f, -2.0f * j / dh);
  for (auto _ : state) {
    be.rms_norm(x, w, 1e-5f, 0.0f, y);
    be.rms_norm(x, w, 1e-5f, 0.0f, y);
    be.rope(qk, 2 * d / dh, dh, inv_freq, 0);
    be.gated_activation(gate, up, Activation::kSiLU, out);
    be.synchronize();
  }
  state.SetLabel(be.description());
}
BENCHMARK(BM_LayerElementwise)
    ->ArgsProduct({{32, 64, 512}, {576, 2048}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// ---- maintained libraries, loaded at run time -----------------------------------------------
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                            int, float, float*, int);
using DnnlSgemm = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                          std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);
template <class Fn>
Fn load_symbol(const char* library, const char* symbol) {
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  return h ? reinterpret_cast<Fn>(dlsym(h, symbol)) : nullptr;
}

// Args: tokens, in, out, library (0 OpenBLAS, 1 oneDNN). C [n x out] = X [n x in] · Wᵀ.
void BM_LibrarySgemm(benchmark::State& state) {
  const int n = state.range(0), in = state.range(1), out = state.range(2);
  const bool dnnl = state.range(3) == 1;
  static const auto openblas = load_symbol<CblasSgemm>("libopenblas.so.0", "cblas_sgemm");
  static const auto onednn = load_symbol<DnnlSgemm>("libdnnl.so.2", "dnnl_sgemm");
  if ((dnnl && !onednn) || (!dnnl && !openblas)) {
    state.SkipWithError(dnnl ? "libdnnl.so.2 not found" : "libopenblas.so.0 not found");
    return;
  }
  const Matrix x = random_matrix(n, in, 1), w = random_matrix(out, in, 7, 0.02f);
  Matrix c(n, out);
  for (auto _ : state) {
    if (dnnl)
      onednn('N', 'T', n, out, in, 1.0f, x.data(), in, w.data(), in, 0.0f, c.data(), out);
    else  // CblasRowMajor 101, CblasNoTrans 111, CblasTrans 112
      openblas(101, 111, 112, n, out, in, 1.0f, x.data(), in, w.data(), in, 0.0f, c.data(), out);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["rate"] = benchmark::Counter(2.0 * n * in * out * state.iterations() / 1e9,
                                              benchmark::Counter::kIsRate);
  state.SetLabel(dnnl ? "oneDNN sgemm" : "OpenBLAS sgemm");
}
void library_shapes(benchmark::internal::Benchmark* b) {
  for (int n : {32, 64, 512})
    for (auto [in, out] : std::vector<std::pair<int, int>>{{2048, 8192}, {8192, 2048}, {576, 1536}})
      for (int lib = 0; lib < 2; ++lib) b->Args({n, in, out, lib});
}
BENCHMARK(BM_LibrarySgemm)->Apply(library_shapes)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
