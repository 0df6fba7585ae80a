// attention_forward on the CPU backend vs a naive triple-loop reference, n queries = n keys, d
// = 64. Run: build/bin/attention_bench --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "core/attention/attention.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"

namespace {

using attnscope::Matrix;

Matrix random_matrix(int rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  Matrix m(rows, cols);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = dist(rng);
  return m;
}

// The formula written the obvious way: loops, no blocking, no vectorisation hints.
Matrix naive_attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  const int n = q.rows(), m = k.rows(), d = q.cols();
  const float factor = 1.0f / std::sqrt(float(d));
  Matrix out = Matrix::Zero(n, v.cols());
  std::vector<float> row(m);
  for (int i = 0; i < n; ++i) {
    float mx = -INFINITY;
    for (int j = 0; j < m; ++j) {
      float s = 0;
      for (int t = 0; t < d; ++t) s += q(i, t) * k(j, t);
      row[j] = s * factor;
      mx = std::max(mx, row[j]);
    }
    float sum = 0;
    for (int j = 0; j < m; ++j) sum += row[j] = std::exp(row[j] - mx);
    for (int j = 0; j < m; ++j)
      for (int t = 0; t < v.cols(); ++t) out(i, t) += row[j] / sum * v(j, t);
  }
  return out;
}

void BM_AttentionForwardCpu(benchmark::State& state) {
  const int n = state.range(0);
  const Matrix q = random_matrix(n, 64, 1), k = random_matrix(n, 64, 2),
               v = random_matrix(n, 64, 3);
  auto cpu = attnscope::make_cpu_backend();
  for (auto _ : state) benchmark::DoNotOptimize(attnscope::attention_forward(*cpu, q, k, v, {}));
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_AttentionNaive(benchmark::State& state) {
  const int n = state.range(0);
  const Matrix q = random_matrix(n, 64, 1), k = random_matrix(n, 64, 2),
               v = random_matrix(n, 64, 3);
  for (auto _ : state) benchmark::DoNotOptimize(naive_attention(q, k, v));
  state.SetItemsProcessed(state.iterations() * n);
}

// CUDA, where a device exists (the bench is skipped with a message otherwise).
void BM_AttentionForwardCuda(benchmark::State& state) {
  std::string why;
  auto cuda = attnscope::try_cuda_backend(why);
  if (!cuda) {
    state.SkipWithError(("no CUDA device: " + why).c_str());
    return;
  }
  const int n = state.range(0);
  const Matrix q = random_matrix(n, 64, 1), k = random_matrix(n, 64, 2),
               v = random_matrix(n, 64, 3);
  for (auto _ : state) benchmark::DoNotOptimize(attnscope::attention_forward(*cuda, q, k, v, {}));
  state.SetItemsProcessed(state.iterations() * n);
}

// OpenGL compute shaders (on llvmpipe where no GPU exists: for information, never picked by auto).
void BM_AttentionForwardOpenGl(benchmark::State& state) {
  const attnscope::OpenGlProbe gl = attnscope::try_opengl_backend();
  if (!gl.backend) {
    state.SkipWithError(("no OpenGL: " + gl.why).c_str());
    return;
  }
  const int n = state.range(0);
  const Matrix q = random_matrix(n, 64, 1), k = random_matrix(n, 64, 2),
               v = random_matrix(n, 64, 3);
  for (auto _ : state)
    benchmark::DoNotOptimize(attnscope::attention_forward(*gl.backend, q, k, v, {}));
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(gl.renderer);
}

BENCHMARK(BM_AttentionForwardCpu)
    ->Arg(8)
    ->Arg(64)
    ->Arg(512)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionNaive)
    ->Arg(8)
    ->Arg(64)
    ->Arg(512)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionForwardOpenGl)
    ->Arg(8)
    ->Arg(64)
    ->Arg(512)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionForwardCuda)
    ->Arg(8)
    ->Arg(64)
    ->Arg(512)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
