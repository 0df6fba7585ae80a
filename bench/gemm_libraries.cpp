// The linear layers' product y = x·W (x [m x k], W [k x n]) in attnscope's packed kernel against
// the maintained libraries issue 11 names: OpenBLAS, BLIS and oneDNN (sgemm, and its bf16 GEMM),
// plus Eigen, on the decoder shapes (SmolLM2-135M, Llama-3.2-1B) at 64 and 512 tokens.
//
//   build/bin/gemm_libraries [--rounds 9] [--threads N] [--shapes smollm|llama|all]
//
// The libraries are opened at run time with dlopen (each in its own namespace: OpenBLAS and BLIS
// both define cblas_sgemm), so this program builds without them and says which it found; on
// Debian: apt-get install libopenblas0-pthread libblis4-openmp libdnnl2 (the -dev packages are not
// needed). Every engine runs with the same number of threads (default: work_sharing_threads(), the
// cores attnscope uses). Engines take turns within each round, so a busy machine slows them alike;
// reported: the median time of each, GFLOP/s, and the median over rounds of each engine's time
// divided by attnscope's in the same round. Each result is checked against a double-precision
// product on sampled entries (max relative error shown), so a wrongly called library cannot look
// fast.
//
// attnscope (float): W packed once (packed_gemm.h) as the CPU backend does when a model loads.
// attnscope (bf16 W): the same with W kept in bfloat16, widened in registers (a bf16 model's path);
// the libraries' float sgemm then needs a float copy of W (twice the memory). oneDNN's
// gemm_bf16bf16f32 also rounds x to bf16 (8 significant bits), so it does less exact arithmetic.
#include <dlfcn.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/backend/cpu/packed_gemm.h"
#include "core/backend/cpu/work_sharing.h"

namespace {

using namespace attnscope;

// CBLAS' row-major/no-transpose constants (cblas.h), so that no header of either library is needed.
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111;
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                            int, float, float*, int);
using DnnlSgemm = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                          std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);
using DnnlGemmBf16 = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float,
                             const std::uint16_t*, std::int64_t, const std::uint16_t*, std::int64_t,
                             float, float*, std::int64_t);

void* open_first(const std::vector<const char*>& names, std::string& which) {
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
      which = n;
      return h;
    }
  }
  return nullptr;
}

struct Shape {
  const char* name;
  int k, n;
};

using PrepareFn = std::function<void(const float* w, const std::uint16_t* w16, int k, int n)>;
using RunFn =
    std::function<void(const float* a, const std::uint16_t* a16, int m, int k, int n, float* c)>;

struct Engine {
  Engine(std::string n, PrepareFn p, RunFn r)
      : name(std::move(n)), prepare(std::move(p)), run(std::move(r)) {}
  std::string name;
  PrepareFn prepare;  // for one shape (may be empty)
  RunFn run;          // c = a·w
  std::vector<double> times;
  double max_error = 0;
};

std::uint16_t to_bf16(float x) {  // round to nearest even
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t h) {
  std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

double seconds_of(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 9, threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::string which_shapes = "all";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--shapes" && i + 1 < argc) {
      which_shapes = argv[++i];
    } else {
      std::printf(
          "usage: gemm_libraries [--rounds 9] [--threads N] [--shapes smollm|llama|all]\n"
          "attnscope's packed GEMM vs OpenBLAS, BLIS, oneDNN and Eigen on the decoder shapes.\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  // The thread count: attnscope reads ATTNSCOPE_THREADS once; OpenBLAS/BLIS/oneDNN read theirs
  // when they are loaded, so set them all before any dlopen.
  const std::string t = std::to_string(threads);
  setenv("ATTNSCOPE_THREADS", t.c_str(), 1);
  setenv("OPENBLAS_NUM_THREADS", t.c_str(), 1);
  setenv("BLIS_NUM_THREADS", t.c_str(), 1);
  setenv("OMP_NUM_THREADS", t.c_str(), 1);
  Eigen::setNbThreads(threads);
  if (work_sharing_threads() != threads) {
    std::printf("attnscope uses %d threads, not %d\n", work_sharing_threads(), threads);
    return 1;
  }

  const std::vector<GemmIsa> isas = packed_gemm_isas();
  if (isas.empty()) {
    std::printf("attnscope's packed kernel needs AVX2 (this build or processor has none)\n");
    return 1;
  }
  // The float kernel the AMD machines run: AVX-512 (or AVX2) even where AMX is present.
  GemmIsa float_isa = isas.back();
  for (GemmIsa i : isas)
    if (i != GemmIsa::kAmxBf16x3) {
      float_isa = i;
      break;
    }

  std::vector<Engine> engines;
  std::shared_ptr<PackedWeight> packed, packed16, packed_amx;
  engines.emplace_back(
      "attnscope " + to_string(float_isa),
      [&](const float* w, const std::uint16_t*, int k, int n) {
        packed = std::make_shared<PackedWeight>(w, k, n, n, false, float_isa);
      },
      [&](const float* a, const std::uint16_t*, int m, int k, int, float* c) {
        packed_gemm(a, m, k, *packed, nullptr, c, packed->n());
      });
  if (isas.front() == GemmIsa::kAmxBf16x3) {
    engines.emplace_back(
        "attnscope AMX bf16x3",
        [&](const float* w, const std::uint16_t*, int k, int n) {
          packed_amx = std::make_shared<PackedWeight>(w, k, n, n, false, GemmIsa::kAmxBf16x3);
        },
        [&](const float* a, const std::uint16_t*, int m, int k, int, float* c) {
          packed_gemm(a, m, k, *packed_amx, nullptr, c, packed_amx->n());
        });
  }
  engines.emplace_back(
      "attnscope bf16 W",
      [&](const float*, const std::uint16_t* w16, int k, int n) {
        packed16 = std::make_shared<PackedWeight>(w16, DType::kBF16, k, n, n, false, float_isa);
      },
      [&](const float* a, const std::uint16_t*, int m, int k, int, float* c) {
        packed_gemm(a, m, k, *packed16, nullptr, c, packed16->n());
      });
  std::vector<std::string> found;
  const float* lib_w = nullptr;
  const std::uint16_t* lib_w16 = nullptr;
  engines.emplace_back(
      "Eigen", nullptr,
      [&lib_w](const float* a, const std::uint16_t*, int m, int k, int n, float* c) {
        using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
        Eigen::Map<M>(c, m, n).noalias() =
            Eigen::Map<const M>(a, m, k) * Eigen::Map<const M>(lib_w, k, n);
      });
  std::string path;
  if (void* h = open_first(
          {"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "libopenblas.so.0"},
          path)) {
    if (auto f = reinterpret_cast<CblasSgemm>(dlsym(h, "cblas_sgemm"))) {
      found.push_back("OpenBLAS: " + path);
      engines.emplace_back(
          "OpenBLAS sgemm", nullptr,
          [f, &lib_w](const float* a, const std::uint16_t*, int m, int k, int n, float* c) {
            f(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, 1.0f, a, k, lib_w, n, 0.0f, c,
              n);
          });
    }
  }
  for (const char* lib : {"/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4",
                          "/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4", "libblis.so.4"}) {
    void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    if (auto f = reinterpret_cast<CblasSgemm>(dlsym(h, "cblas_sgemm"))) {
      found.push_back(std::string("BLIS: ") + lib);
      engines.emplace_back(
          "BLIS sgemm", nullptr,
          [f, &lib_w](const float* a, const std::uint16_t*, int m, int k, int n, float* c) {
            f(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, 1.0f, a, k, lib_w, n, 0.0f, c,
              n);
          });
    }
    break;
  }
  if (void* h = open_first({"libdnnl.so.2", "libdnnl.so"}, path)) {
    if (auto f = reinterpret_cast<DnnlSgemm>(dlsym(h, "dnnl_sgemm"))) {
      found.push_back("oneDNN: " + path);
      engines.emplace_back(
          "oneDNN sgemm", nullptr,
          [f, &lib_w](const float* a, const std::uint16_t*, int m, int k, int n, float* c) {
            f('N', 'N', m, n, k, 1.0f, a, k, lib_w, n, 0.0f, c, n);
          });
    }
    if (auto f = reinterpret_cast<DnnlGemmBf16>(dlsym(h, "dnnl_gemm_bf16bf16f32"))) {
      engines.emplace_back(
          "oneDNN bf16 (x→bf16)", nullptr,
          [f, &lib_w16](const float*, const std::uint16_t* a16, int m, int k, int n, float* c) {
            f('N', 'N', m, n, k, 1.0f, a16, k, lib_w16, n, 0.0f, c, n);
          });
    }
  }

  std::printf("y = x·W, %d rounds, engines in turns, %d threads each\n", rounds, threads);
  for (const std::string& f : found) std::printf("  %s\n", f.c_str());
  if (found.empty()) std::printf("  no OpenBLAS, BLIS or oneDNN found: attnscope and Eigen only\n");

  std::vector<Shape> shapes;
  if (which_shapes == "smollm" || which_shapes == "all") {
    shapes.insert(shapes.end(), {{"135M q/o 576→576", 576, 576},
                                 {"135M k/v 576→192", 576, 192},
                                 {"135M gate/up 576→1536", 576, 1536},
                                 {"135M down 1536→576", 1536, 576}});
  }
  if (which_shapes == "llama" || which_shapes == "all") {
    shapes.insert(shapes.end(), {{"1B q/o 2048→2048", 2048, 2048},
                                 {"1B k/v 2048→512", 2048, 512},
                                 {"1B gate/up 2048→8192", 2048, 8192},
                                 {"1B down 8192→2048", 8192, 2048}});
  }
  std::mt19937 rng(20261201);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const Shape& s : shapes) {
    std::vector<float> w(static_cast<std::size_t>(s.k) * s.n);
    std::vector<std::uint16_t> w16(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
      w16[i] = to_bf16(normal(rng) * 0.02f);
      w[i] = from_bf16(w16[i]);  // the same values in both formats: a bf16 model's weights
    }
    lib_w = w.data();
    lib_w16 = w16.data();
    for (Engine& e : engines)
      if (e.prepare) e.prepare(w.data(), w16.data(), s.k, s.n);
    for (int m : {64, 512}) {
      std::vector<float> a(static_cast<std::size_t>(m) * s.k);
      std::vector<std::uint16_t> a16(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = normal(rng);
        a16[i] = to_bf16(a[i]);
      }
      std::vector<float> c(static_cast<std::size_t>(m) * s.n);
      // Reference entries in double precision.
      std::vector<std::pair<int, int>> probes;
      for (int p = 0; p < 64; ++p)
        probes.push_back({static_cast<int>(rng() % m), static_cast<int>(rng() % s.n)});
      std::vector<double> ref;
      double scale = 0;
      for (auto [i, j] : probes) {
        double sum = 0, abs_sum = 0;
        for (int q = 0; q < s.k; ++q) {
          double term = static_cast<double>(a[static_cast<std::size_t>(i) * s.k + q]) *
                        w[static_cast<std::size_t>(q) * s.n + j];
          sum += term;
          abs_sum += std::fabs(term);
        }
        ref.push_back(sum);
        scale = std::max(scale, abs_sum);
      }
      for (Engine& e : engines) {
        e.times.clear();
        std::fill(c.begin(), c.end(), 0.0f);
        e.run(a.data(), a16.data(), m, s.k, s.n, c.data());  // warm-up, and the check
        e.max_error = 0;
        for (std::size_t p = 0; p < probes.size(); ++p) {
          auto [i, j] = probes[p];
          e.max_error = std::max(
              e.max_error, std::fabs(c[static_cast<std::size_t>(i) * s.n + j] - ref[p]) / scale);
        }
      }
      const int inner = std::max(1, static_cast<int>(2e8 / (2.0 * m * s.k * s.n)));
      for (int r = 0; r < rounds; ++r) {
        for (std::size_t q = 0; q < engines.size(); ++q) {
          Engine& e = engines[(q + r) % engines.size()];
          e.times.push_back(seconds_of([&] {
                              for (int i = 0; i < inner; ++i)
                                e.run(a.data(), a16.data(), m, s.k, s.n, c.data());
                            }) /
                            inner);
        }
      }
      std::printf("\n%s, m = %d tokens (%.1f MFLOP)\n", s.name, m, 2.0 * m * s.k * s.n / 1e6);
      std::printf("  %-24s %10s %9s %12s %12s\n", "engine", "median ms", "GFLOP/s", "vs attnscope",
                  "max rel err");
      const std::vector<double>& base = engines.front().times;
      for (const Engine& e : engines) {
        std::vector<double> ratio;
        for (int r = 0; r < rounds; ++r) ratio.push_back(e.times[r] / base[r]);
        const double ms = median(e.times) * 1e3;
        std::printf("  %-24s %10.3f %9.1f %11.2fx %12.1e\n", e.name.c_str(), ms,
                    2.0 * m * s.k * s.n / (ms * 1e6), median(ratio), e.max_error);
      }
    }
  }
  return 0;
}
