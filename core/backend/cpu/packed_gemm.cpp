#include "core/backend/cpu/packed_gemm.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "core/backend/cpu/work_sharing.h"
#include "core/util/error.h"
#include "core/util/matrix.h"  // first include of the intrinsics headers, under its GCC 12 pragma

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace attnscope {
namespace {

// One instruction set as the kernel needs it: a float vector V of kWidth lanes, and the block
// shape: kMr rows of C by kVecs vectors (kVecs·kWidth columns) kept in registers. AVX-512 has 32
// vector registers: 8 x 3 accumulators + 3 panel vectors; AVX2 has 16: 6 x 2 + 2.
#if defined(__AVX512F__)
struct Avx512 {
  using V = __m512;
  static constexpr int kWidth = 16, kMr = 8, kVecs = 3;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_load_ps(p); }  // panels are 64-byte aligned
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
};
#endif
#if defined(__AVX2__) && defined(__FMA__)
struct Avx2 {
  using V = __m256;
  static constexpr int kWidth = 8, kMr = 6, kVecs = 2;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_load_ps(p); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};
#endif

template <class Isa>
constexpr int panel_width() {
  return Isa::kVecs * Isa::kWidth;
}

int panel_width_of(GemmIsa isa) {
  switch (isa) {
#if defined(__AVX512F__)
    case GemmIsa::kAvx512:
      return panel_width<Avx512>();
#endif
#if defined(__AVX2__) && defined(__FMA__)
    case GemmIsa::kAvx2:
      return panel_width<Avx2>();
#endif
    default:
      throw BackendError("packed GEMM: " + to_string(isa) + " is not built into this program");
  }
}

#if defined(__AVX2__) && defined(__FMA__)  // the kernel and its drivers need the intrinsics

constexpr int kFloatsPerLine = 16;  // a 64-byte cache line

// A share of the next panel to bring into L2 while this one is computed: `lines` cache lines from
// `start`, spread evenly over the steps of k. The weights come from memory (GPT-2 small's are
// 340 MB), and without this the kernel waited for them at the start of every panel (94 instead of
// 142 GFLOP/s on one core). Spreading the lines over all row blocks of the panel, not asking for
// them all in the first, keeps the rate under what memory delivers.
struct Prefetch {
  const float* start = nullptr;
  int lines = 0;
};

// C [MR x cols] = A [MR x k] · panel [k x NR] + bias, for cols <= NR valid columns of the panel.
// `bias` points at the panel's first column (nullptr: none). The loops over MR and the panel's
// vectors are unrolled so that the accumulators stay in registers.
template <class Isa, int MR>
void kernel(const float* a, int lda, const float* panel, int k, const float* bias, float* c,
            int ldc, int cols, Prefetch prefetch) {
  using V = typename Isa::V;
  constexpr int W = Isa::kWidth, NV = Isa::kVecs, NR = NV * W;
  V acc[MR][NV];
  float padded_bias[NR];
  if (bias && cols < NR) {  // the last panel: never read past the bias's end
    std::fill(padded_bias, padded_bias + NR, 0.0f);
    std::copy(bias, bias + cols, padded_bias);
    bias = padded_bias;
  }
#pragma GCC unroll 8
  for (int j = 0; j < NV; ++j) {
    const V b0 = bias ? Isa::loadu(bias + j * W) : Isa::zero();
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) acc[i][j] = b0;
  }
  const char* line = reinterpret_cast<const char*>(prefetch.start);
  int due = 0;  // Bresenham: `lines` prefetches over `k` steps
  for (int p = 0; p < k; ++p) {
    for (due += prefetch.lines; due >= k; due -= k, line += 64) _mm_prefetch(line, _MM_HINT_T1);
    const float* row = panel + static_cast<std::ptrdiff_t>(p) * NR;
    V b[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) b[j] = Isa::load(row + j * W);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V x = Isa::broadcast(a + static_cast<std::ptrdiff_t>(i) * lda + p);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = Isa::fmadd(x, b[j], acc[i][j]);
    }
  }
  if (cols == NR) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j)
        Isa::storeu(c + static_cast<std::ptrdiff_t>(i) * ldc + j * W, acc[i][j]);
    return;
  }
  float tile[NR];  // a partial panel: write the valid columns only
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NV; ++j) Isa::storeu(tile + j * W, acc[i][j]);
    std::copy(tile, tile + cols, c + static_cast<std::ptrdiff_t>(i) * ldc);
  }
}

using KernelFn = void (*)(const float*, int, const float*, int, const float*, float*, int, int,
                          Prefetch);

// kernel<Isa, rows> for rows = 1 … kMr.
template <class Isa, int... R>
constexpr auto kernel_table(std::integer_sequence<int, R...>) {
  return std::array<KernelFn, sizeof...(R)>{&kernel<Isa, R + 1>...};
}

// Rows [r0, r1) x panels [p0, p1) of C.
template <class Isa>
void gemm_block(const float* a, int lda, const PackedWeight& w, const float* bias, float* c,
                int ldc, int r0, int r1, int p0, int p1) {
  static constexpr auto kernels = kernel_table<Isa>(std::make_integer_sequence<int, Isa::kMr>{});
  constexpr int NR = panel_width<Isa>();
  const int blocks = (r1 - r0 + Isa::kMr - 1) / Isa::kMr;
  const long panel_lines = static_cast<long>(w.k()) * NR / kFloatsPerLine;
  for (int p = p0; p < p1; ++p) {
    const int col = p * NR;
    const int cols = std::min(NR, w.n() - col);
    const float* b = bias ? bias + col : nullptr;
    const float* next = p + 1 < p1 ? w.panel(p + 1) : nullptr;
    for (int blk = 0; blk < blocks; ++blk) {
      const int r = r0 + blk * Isa::kMr;
      const int rows = std::min(Isa::kMr, r1 - r);
      Prefetch pf;
      if (next) {  // lines [first, last) of the next panel for this row block
        const long first = panel_lines * blk / blocks, last = panel_lines * (blk + 1) / blocks;
        pf = {next + first * kFloatsPerLine, static_cast<int>(last - first)};
      }
      kernels[rows - 1](a + static_cast<std::ptrdiff_t>(r) * lda, lda, w.panel(p), w.k(), b,
                        c + static_cast<std::ptrdiff_t>(r) * ldc + col, ldc, cols, pf);
    }
  }
}

template <class Isa>
void gemm(const float* a, int m, int lda, const PackedWeight& w, const float* bias, float* c,
          int ldc) {
  // Work items are (row chunk, panel group) pairs. A row chunk of A (kRowChunk x k floats: 768 KB
  // for k = 3072) stays in the core's L2 cache while the panels stream past it.
  constexpr int kRowChunk = 64;
  const int row_chunks = (m + kRowChunk - 1) / kRowChunk;
  const int panels = w.panels();
  const double flops = 2.0 * m * w.k() * static_cast<double>(w.n());
  const int threads = work_sharing_threads();
  // About four items per thread, so a thread that started late (the machine is busy) still finds
  // work; but each item gets at least ~1 MFLOP so the hand-over costs stay small.
  int groups = 1;
  if (threads > 1 && flops > 2e6)
    groups = std::clamp(static_cast<int>(4 * threads / row_chunks), 1,
                        std::max(1, static_cast<int>(flops / row_chunks / 1e6)));
  groups = std::min(groups, panels);
  const int per_group = (panels + groups - 1) / groups;
  const int items = row_chunks * groups;
  auto run = [&](int item) {
    const int rc = item / groups, g = item % groups;
    const int r0 = rc * kRowChunk, r1 = std::min(m, r0 + kRowChunk);
    const int p0 = g * per_group, p1 = std::min(panels, p0 + per_group);
    if (p0 < p1) gemm_block<Isa>(a, lda, w, bias, c, ldc, r0, r1, p0, p1);
  };
  if (items == 1)
    run(0);
  else
    share_work(items, run);
}

#endif  // __AVX2__ && __FMA__

void free_floats(float* p) {
  std::free(p);
}

float* alloc_floats(std::size_t count) {
  const std::size_t bytes = (std::max<std::size_t>(count, 1) * sizeof(float) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p) throw std::bad_alloc();
  return static_cast<float*>(p);
}

}  // namespace

std::vector<GemmIsa> packed_gemm_isas() {
  std::vector<GemmIsa> isas;
#if defined(__AVX512F__)
  isas.push_back(GemmIsa::kAvx512);
#endif
#if defined(__AVX2__) && defined(__FMA__)
  isas.push_back(GemmIsa::kAvx2);
#endif
  return isas;
}

std::string to_string(GemmIsa isa) {
  return isa == GemmIsa::kAvx512 ? "AVX-512" : "AVX2";
}

PackedWeight::PackedWeight(const float* w, int rows, int cols, int stride, bool transposed,
                           GemmIsa isa)
    : k_(transposed ? cols : rows),
      n_(transposed ? rows : cols),
      isa_(isa),
      panel_width_(panel_width_of(isa)),
      data_(nullptr, free_floats) {
  const int nr = panel_width_;
  data_.reset(alloc_floats(static_cast<std::size_t>(panels()) * k_ * nr));
  // Once per weight matrix (GPT-2 small: 340 MB in ~0.25 s on one core), on every core.
  auto pack = [&](int p) {
    float* dst = data_.get() + static_cast<std::size_t>(p) * k_ * nr;
    const int col0 = p * nr, valid = std::min(nr, n_ - col0);
    for (int kk = 0; kk < k_; ++kk) {
      float* out = dst + static_cast<std::size_t>(kk) * nr;
      if (transposed) {
        for (int j = 0; j < valid; ++j)
          out[j] = w[static_cast<std::size_t>(col0 + j) * stride + kk];
      } else {
        std::memcpy(out, w + static_cast<std::size_t>(kk) * stride + col0, valid * sizeof(float));
      }
      std::fill(out + valid, out + nr, 0.0f);
    }
  };
  if (static_cast<double>(k_) * n_ < 1e5) {
    for (int p = 0; p < panels(); ++p) pack(p);
  } else {
    share_work(panels(), pack);
  }
}

void packed_gemm(const float* a, int m, int lda, const PackedWeight& w, const float* bias, float* c,
                 int ldc) {
  if (m <= 0 || w.n() <= 0) return;
  switch (w.isa()) {
#if defined(__AVX512F__)
    case GemmIsa::kAvx512:
      return gemm<Avx512>(a, m, lda, w, bias, c, ldc);
#endif
#if defined(__AVX2__) && defined(__FMA__)
    case GemmIsa::kAvx2:
      return gemm<Avx2>(a, m, lda, w, bias, c, ldc);
#endif
    default:
      (void)a, (void)lda, (void)bias, (void)c, (void)ldc;
      throw BackendError("packed GEMM: " + to_string(w.isa()) + " is not built into this program");
  }
}

}  // namespace attnscope
