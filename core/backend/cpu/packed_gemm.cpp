#include "core/backend/cpu/packed_gemm.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

#include "core/backend/cpu/dequantize.h"
#include "core/backend/cpu/work_sharing.h"
#include "core/util/error.h"
#include "core/util/matrix.h"  // first include of the intrinsics headers, under its GCC 12 pragma

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512F__)
#define ATTNSCOPE_AMX 1
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace attnscope {
namespace {

// A weight value as the panels store it: float, or the 16 bits of a bfloat16 / half unchanged.
struct Bf16Bits {
  std::uint16_t bits;
};
struct F16Bits {
  std::uint16_t bits;
};
static_assert(sizeof(Bf16Bits) == 2 && sizeof(F16Bits) == 2);

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
  static void store(float* p, V v) { _mm512_store_ps(p, v); }
  static V broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  // kWidth weight values widened to float (panel rows are 32-byte aligned for 16-bit values).
  static V load_w(const float* p) { return load(p); }
  static V load_w(const Bf16Bits* p) {
    const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static V load_w(const F16Bits* p) {
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
  }
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
  static void store(float* p, V v) { _mm256_store_ps(p, v); }
  static V broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V load_w(const float* p) { return load(p); }
  static V load_w(const Bf16Bits* p) {
    const __m128i h = _mm_load_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static V load_w(const F16Bits* p) {
#if defined(__F16C__)
    return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
#else
    alignas(32) float f[kWidth];
    for (int i = 0; i < kWidth; ++i) f[i] = f16_to_float(p[i].bits);
    return load(f);
#endif
  }
};
#endif

template <class Isa>
constexpr int panel_width() {
  return Isa::kVecs * Isa::kWidth;
}

#if defined(ATTNSCOPE_AMX)
// AMX needs the system's permission to use the tiles' 8 KB of state, asked for once per process
// (Linux 5.16 and later); without it the first tile instruction would kill the program.
bool amx_permitted() {
  static const bool permitted = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;  // CPUID.(7,0):EDX
    if ((d & kAmxBf16) == 0 || (d & kAmxTile) == 0) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return permitted;
}

#endif

[[maybe_unused]] constexpr int kAmxPanel = 32;  // two 16-column tiles
[[maybe_unused]] constexpr int kAmxK = 32;      // k per tile: 16 rows of bfloat16 pairs

int panel_width_of(GemmIsa isa) {
  switch (isa) {
#if defined(ATTNSCOPE_AMX)
    case GemmIsa::kAmxBf16x3:
      if (!amx_permitted())  // a tile instruction would stop the program
        throw BackendError("packed GEMM: this processor or system does not allow AMX");
      return kAmxPanel;
#endif
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

// A share of the next panel to bring into L2 while this one is computed: `lines` cache lines from
// `start`, spread evenly over the steps of k. The weights come from memory (GPT-2 small's are
// 340 MB), and without this the kernel waited for them at the start of every panel (94 instead of
// 142 GFLOP/s on one core). Spreading the lines over all row blocks of the panel, not asking for
// them all in the first, keeps the rate under what memory delivers.
struct Prefetch {
  const void* start = nullptr;
  int lines = 0;
};

// C [MR x cols] = A [MR x k] · panel [k x NR] + bias, for cols <= NR valid columns of the panel;
// with `accumulate`, C += A · panel instead (a later chunk of k; bias is then nullptr). `bias`
// points at the panel's first column (nullptr: none). The loops over MR and the panel's vectors
// are unrolled so that the accumulators stay in registers.
template <class Isa, int MR, class T>
void kernel(const float* a, int lda, const T* panel, int k, const float* bias, float* c, int ldc,
            int cols, bool accumulate, Prefetch prefetch) {
  using V = typename Isa::V;
  constexpr int W = Isa::kWidth, NV = Isa::kVecs, NR = NV * W;
  V acc[MR][NV];
  float padded[NR];
  if (accumulate) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const float* row = c + static_cast<std::ptrdiff_t>(i) * ldc;
      if (cols < NR) {  // the last panel: never read past C's valid columns
        std::fill(padded, padded + NR, 0.0f);
        std::copy(row, row + cols, padded);
        row = padded;
      }
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = Isa::loadu(row + j * W);
    }
  } else {
    if (bias && cols < NR) {  // the last panel: never read past the bias's end
      std::fill(padded, padded + NR, 0.0f);
      std::copy(bias, bias + cols, padded);
      bias = padded;
    }
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      const V b0 = bias ? Isa::loadu(bias + j * W) : Isa::zero();
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) acc[i][j] = b0;
    }
  }
  const char* line = reinterpret_cast<const char*>(prefetch.start);
  int due = 0;  // Bresenham: `lines` prefetches over `k` steps
  for (int p = 0; p < k; ++p) {
    for (due += prefetch.lines; due >= k; due -= k, line += 64) _mm_prefetch(line, _MM_HINT_T1);
    const T* row = panel + static_cast<std::ptrdiff_t>(p) * NR;
    V b[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) b[j] = Isa::load_w(row + j * W);
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

template <class T>
using KernelFn = void (*)(const float*, int, const T*, int, const float*, float*, int, int, bool,
                          Prefetch);

// kernel<Isa, rows, T> for rows = 1 … kMr.
template <class Isa, class T, int... R>
constexpr auto kernel_table(std::integer_sequence<int, R...>) {
  return std::array<KernelFn<T>, sizeof...(R)>{&kernel<Isa, R + 1, T>...};
}

// A 64-byte-aligned buffer of this thread's, kept from product to product (Tag: which one).
template <class T, int Tag>
T* thread_buffer(std::size_t elems) {
  thread_local std::unique_ptr<T[], void (*)(T*)> buf(nullptr, [](T* p) { std::free(p); });
  thread_local std::size_t capacity = 0;
  if (elems > capacity) {
    void* p = std::aligned_alloc(64, (std::max<std::size_t>(elems, 1) * sizeof(T) + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    buf.reset(static_cast<T*>(p));
    capacity = elems;
  }
  return buf.get();
}

// k is walked in chunks of kFloatChunk: a row chunk's A for one chunk of k (64 x 768 floats,
// 192 KB) and a panel's part of it stay in L2 with room for the next part coming in (at k = 3072,
// mlp_down, A alone took 768 KB).
constexpr int kFloatChunk = 768;

// Rows [r0, r1) x panels [p0, p1) of C, for panels of T.
template <class Isa, class T>
void gemm_block(const float* a, int lda, const PackedWeight& w, const float* bias, float* c,
                int ldc, int r0, int r1, int p0, int p1) {
  static constexpr auto kernels = kernel_table<Isa, T>(std::make_integer_sequence<int, Isa::kMr>{});
  static constexpr auto float_kernels =
      kernel_table<Isa, float>(std::make_integer_sequence<int, Isa::kMr>{});
  constexpr int NR = panel_width<Isa>();
  constexpr int kValuesPerLine = 64 / sizeof(T);
  auto panel = [&](int p) { return reinterpret_cast<const T*>(w.panel_bytes(p)); };
  const int blocks = (r1 - r0 + Isa::kMr - 1) / Isa::kMr;
  for (int kc = 0; kc < w.k() || kc == 0; kc += kFloatChunk) {
    const int kn = std::min(kFloatChunk, w.k() - kc);
    for (int p = p0; p < p1; ++p) {
      const int col = p * NR;
      const int cols = std::min(NR, w.n() - col);
      const float* b = bias && kc == 0 ? bias + col : nullptr;
      // The next part of a panel to read (the next panel's, or the first panel's of the next
      // chunk of k), into L2, spread over this part's row blocks.
      const T* next = nullptr;
      long next_lines = 0;
      if (p + 1 < p1) {
        next = panel(p + 1) + static_cast<std::ptrdiff_t>(kc) * NR;
        next_lines = static_cast<long>(kn) * NR / kValuesPerLine;
      } else if (kc + kFloatChunk < w.k()) {
        next = panel(p0) + static_cast<std::ptrdiff_t>(kc + kFloatChunk) * NR;
        next_lines = static_cast<long>(std::min(kFloatChunk, w.k() - kc - kFloatChunk)) * NR /
                     kValuesPerLine;
      }
      // 16-bit weights read by more than one row block: widened once into a float copy of this
      // part (this thread's, in L2), which the float kernel then reads for every row block.
      // Widening in the kernel itself costs two more instructions per panel vector on the ports
      // the multiply-adds use: 2.5x slower than float at 64 tokens (bench/llm_ops_bench).
      const T* part = panel(p) + static_cast<std::ptrdiff_t>(kc) * NR;
      const float* widened = nullptr;
      if constexpr (!std::is_same_v<T, float>) {
        if (blocks > 1) {
          float* buf = thread_buffer<float, 2>(static_cast<std::size_t>(kFloatChunk) * NR);
          for (int i = 0; i < kn * NR; i += Isa::kWidth) Isa::store(buf + i, Isa::load_w(part + i));
          widened = buf;
        }
      }
      for (int blk = 0; blk < blocks; ++blk) {
        const int r = r0 + blk * Isa::kMr;
        const int rows = std::min(Isa::kMr, r1 - r);
        Prefetch pf;
        if (next) {  // lines [first, last) of the next part for this row block
          const long first = next_lines * blk / blocks, last = next_lines * (blk + 1) / blocks;
          pf = {next + first * kValuesPerLine, static_cast<int>(last - first)};
        }
        const float* ar = a + static_cast<std::ptrdiff_t>(r) * lda + kc;
        float* cr = c + static_cast<std::ptrdiff_t>(r) * ldc + col;
        if (widened)
          float_kernels[rows - 1](ar, lda, widened, kn, b, cr, ldc, cols, kc > 0, pf);
        else
          kernels[rows - 1](ar, lda, part, kn, b, cr, ldc, cols, kc > 0, pf);
      }
    }
  }
}

// out [kn x NR] = rowsᵀ for rows [NR x kn] (kn a multiple of 16): blocks of 16 x 16 (AVX-512) or
// 8 x 8 (AVX2) transposed in registers, 3x faster than element by element.
#if defined(__AVX512F__)
void transpose_to_panel(Avx512, const float* rows, int kn, float* out) {
  constexpr int NR = panel_width<Avx512>();
  for (int g = 0; g < NR / 16; ++g)
    for (int k0 = 0; k0 < kn; k0 += 16) {
      __m512 r[16], t[16];
      for (int i = 0; i < 16; ++i)
        r[i] = _mm512_loadu_ps(rows + static_cast<std::ptrdiff_t>(g * 16 + i) * kn + k0);
      for (int i = 0; i < 8; ++i) {  // pairs of rows interleaved
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
      }
      for (int i = 0; i < 4; ++i) {  // r[4i + m]: column 4L + m of rows 4i … 4i + 3 in lane L
        const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
        const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
      }
      for (int i = 0; i < 2; ++i)  // then the 128-bit lanes
        for (int m = 0; m < 4; ++m) {
          t[8 * i + m] = _mm512_shuffle_f32x4(r[8 * i + m], r[8 * i + 4 + m], 0x88);
          t[8 * i + 4 + m] = _mm512_shuffle_f32x4(r[8 * i + m], r[8 * i + 4 + m], 0xdd);
        }
      for (int m = 0; m < 8; ++m) {
        r[m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88);
        r[8 + m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0xdd);
      }
      for (int i = 0; i < 16; ++i)
        _mm512_store_ps(out + static_cast<std::ptrdiff_t>(k0 + i) * NR + g * 16, r[i]);
    }
}
#endif
void transpose_to_panel(Avx2, const float* rows, int kn, float* out) {
  constexpr int NR = panel_width<Avx2>();
  for (int g = 0; g < NR / 8; ++g)
    for (int k0 = 0; k0 < kn; k0 += 8) {
      __m256 r[8], t[8], s[8];
      for (int i = 0; i < 8; ++i)
        r[i] = _mm256_loadu_ps(rows + static_cast<std::ptrdiff_t>(g * 8 + i) * kn + k0);
      for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
      }
      for (int i = 0; i < 2; ++i) {
        s[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        s[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        s[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        s[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
      }
      for (int m = 0; m < 4; ++m) {
        r[m] = _mm256_permute2f128_ps(s[m], s[4 + m], 0x20);
        r[4 + m] = _mm256_permute2f128_ps(s[m], s[4 + m], 0x31);
      }
      for (int i = 0; i < 8; ++i)
        _mm256_store_ps(out + static_cast<std::ptrdiff_t>(k0 + i) * NR + g * 8, r[i]);
    }
}

// Columns [col, col + cols) of W, rows [kc, kc + kn) of k, of a quantised weight (W = Rᵀ, R in
// ggml's rows of blocks) as a float panel part [kn x NR] (columns past `cols` zero): each of R's
// rows dequantised (dequantize.h; kc and kn are multiples of 256, whole blocks) into `rows`
// [NR x kn], then transposed into `out`.
template <class Isa>
void dequantize_panel(const PackedWeight& w, int col, int cols, int kc, int kn, float* rows,
                      float* out) {
  constexpr int NR = panel_width<Isa>();
  const DType t = w.dtype();
  const std::size_t skip =
      static_cast<std::size_t>(kc / dtype_block_values(t)) * dtype_block_bytes(t);
  for (int j = 0; j < cols; ++j)
    cpu::dequantize_row_fast(t, w.quantized_row(col + j) + skip,
                             rows + static_cast<std::ptrdiff_t>(j) * kn, kn);
  if (cols < NR)
    std::fill(rows + static_cast<std::ptrdiff_t>(cols) * kn,
              rows + static_cast<std::ptrdiff_t>(NR) * kn, 0.0f);
  transpose_to_panel(Isa{}, rows, kn, out);
}

// Rows [r0, r1) x panels [p0, p1) of C for a quantised weight: each panel's part of k dequantised
// once into this thread's float buffer, which the float kernel reads for every row block.
template <class Isa>
void gemm_block_quantized(const float* a, int lda, const PackedWeight& w, const float* bias,
                          float* c, int ldc, int r0, int r1, int p0, int p1) {
  static constexpr auto float_kernels =
      kernel_table<Isa, float>(std::make_integer_sequence<int, Isa::kMr>{});
  constexpr int NR = panel_width<Isa>();
  float* rows = thread_buffer<float, 3>(static_cast<std::size_t>(kFloatChunk) * NR);
  float* part = thread_buffer<float, 2>(static_cast<std::size_t>(kFloatChunk) * NR);
  const int blocks = (r1 - r0 + Isa::kMr - 1) / Isa::kMr;
  for (int kc = 0; kc < w.k(); kc += kFloatChunk) {
    const int kn = std::min(kFloatChunk, w.k() - kc);
    for (int p = p0; p < p1; ++p) {
      const int col = p * NR;
      const int cols = std::min(NR, w.n() - col);
      const float* b = bias && kc == 0 ? bias + col : nullptr;
      dequantize_panel<Isa>(w, col, cols, kc, kn, rows, part);
      for (int blk = 0; blk < blocks; ++blk) {
        const int r = r0 + blk * Isa::kMr;
        const int nrows = std::min(Isa::kMr, r1 - r);
        const float* ar = a + static_cast<std::ptrdiff_t>(r) * lda + kc;
        float* cr = c + static_cast<std::ptrdiff_t>(r) * ldc + col;
        float_kernels[nrows - 1](ar, lda, part, kn, b, cr, ldc, cols, kc > 0, Prefetch{});
      }
    }
  }
}

// Work items are (row chunk, panel group) pairs: into how many groups of panels, of how many
// panels each, a product's panels are cut. About four items per thread, so a thread that started
// late (the machine is busy) still finds work; but each item gets at least `min_item_flops`, so the
// hand-over costs stay small.
struct PanelGroups {
  int groups, per_group;
};
PanelGroups split_panels(int m, const PackedWeight& w, int row_chunks, double min_item_flops) {
  const double flops = 2.0 * m * w.k() * static_cast<double>(w.n());
  const int threads = work_sharing_threads();
  int groups = 1;
  if (threads > 1 && flops > 2e6)
    groups = std::clamp(static_cast<int>(4 * threads / row_chunks), 1,
                        std::max(1, static_cast<int>(flops / row_chunks / min_item_flops)));
  groups = std::min(groups, w.panels());
  return {groups, (w.panels() + groups - 1) / groups};
}

template <class Isa>
void gemm(const float* a, int m, int lda, const PackedWeight& w, const float* bias, float* c,
          int ldc) {
  // Work items are (row chunk, panel group) pairs. A row chunk of A (kRowChunk x k floats: 768 KB
  // for k = 3072) stays in the core's L2 cache while the panels stream past it.
  constexpr int kRowChunk = 64;
  const int row_chunks = (m + kRowChunk - 1) / kRowChunk;
  const int panels = w.panels();
  const PanelGroups split = split_panels(m, w, row_chunks, 1e6);
  const int groups = split.groups, per_group = split.per_group;  // plain names: clang 14 cannot
                                                                 // capture structured bindings
  const int items = row_chunks * groups;
  auto run = [&](int item) {
    const int rc = item / groups, g = item % groups;
    const int r0 = rc * kRowChunk, r1 = std::min(m, r0 + kRowChunk);
    const int p0 = g * per_group, p1 = std::min(panels, p0 + per_group);
    if (p0 >= p1) return;
    switch (w.dtype()) {
      case DType::kF32:
        return gemm_block<Isa, float>(a, lda, w, bias, c, ldc, r0, r1, p0, p1);
      case DType::kBF16:
        return gemm_block<Isa, Bf16Bits>(a, lda, w, bias, c, ldc, r0, r1, p0, p1);
      case DType::kF16:
        return gemm_block<Isa, F16Bits>(a, lda, w, bias, c, ldc, r0, r1, p0, p1);
      default:  // the block formats
        return gemm_block_quantized<Isa>(a, lda, w, bias, c, ldc, r0, r1, p0, p1);
    }
  };
  if (items == 1)
    run(0);
  else
    share_work(items, run);
}

#if defined(ATTNSCOPE_AMX)

// x -> (hi, lo), both bfloat16 rounded to nearest even: hi = bf16(x), lo = bf16(x - hi) (x - hi is
// exact in float); NaN stays NaN. 16 floats at a time, for the weights (once) and the activations.
__m512i to_bf16_bits(__m512 x) {  // bfloat16 in the high halves, low halves zero
  const __m512i u = _mm512_castps_si512(x);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  r = _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
  return _mm512_and_si512(r, _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
}
void split_16(__m512 x, std::uint16_t* hi, std::uint16_t* lo) {
  const __m512i h = to_bf16_bits(x);
  const __m512i l = to_bf16_bits(_mm512_sub_ps(x, _mm512_castsi512_ps(h)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi),
                      _mm512_cvtepi32_epi16(_mm512_srli_epi32(h, 16)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo),
                      _mm512_cvtepi32_epi16(_mm512_srli_epi32(l, 16)));
}

constexpr int kTileElems = 16 * kAmxK;  // bfloat16 per tile: 16 rows of 64 bytes

// A [m x k] as tiles: for each block of 16 rows and each block of 32 of k, a hi tile then a lo
// tile (16 rows x 32 bfloat16; rows past m and k past the end are zero). Blocks [b0, b1).
void pack_a_rows(const float* a, int m, int lda, int k, int k_blocks, std::uint16_t* out, int b0,
                 int b1) {
  for (int rb = b0; rb < b1; ++rb) {
    for (int r = 0; r < 16; ++r) {
      const int row = rb * 16 + r;
      const float* src = row < m ? a + static_cast<std::ptrdiff_t>(row) * lda : a;  // else unread
      for (int kb = 0; kb < k_blocks; ++kb) {
        std::uint16_t* hi =
            out + (static_cast<std::size_t>(rb) * k_blocks + kb) * 2 * kTileElems + r * kAmxK;
        std::uint16_t* lo = hi + kTileElems;
        for (int half = 0; half < 2; ++half) {
          const int k0 = kb * kAmxK + half * 16;
          const int valid = row < m ? std::clamp(k - k0, 0, 16) : 0;
          const __m512 x = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << valid) - 1u),
                                                 src + (valid > 0 ? k0 : 0));
          split_16(x, hi + half * 16, lo + half * 16);
        }
      }
    }
  }
}

struct TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

// All eight tiles 16 rows x 64 bytes (16 floats, or 16 pairs of bfloat16, per row).
void configure_tiles() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.bytes_per_row[t] = 64;
    cfg.rows[t] = 16;
  }
  _tile_loadconfig(&cfg);
}

// c [16·R x 32] (+)= A rows (R = 1 or 2 blocks of 16, laid out as pack_a_rows does) · `k_blocks`
// blocks of k of one panel (`w`: its slice); `first`: c starts from zero, else it is added to. Per
// block of k: hi·hi, lo·hi, hi·lo, into the same float accumulators. `c` is 16·R rows of 32 floats
// (a scratch block, not C itself). Tiles (configure_tiles):
//   R = 2: C in 0-3 (2 x 2), A in 4-5, W in 6-7; 10 tile loads per 12 products.
//   R = 1: C in 0-1, A hi in 4, A lo in 5, W hi in 6-7, W lo in 2-3; 6 loads per 6 products.
template <int R>
void amx_block(const std::uint16_t* a0, const std::uint16_t* a1, const std::uint16_t* w,
               int k_blocks, float* c, bool first, Prefetch prefetch) {
  constexpr int kStride = 32 * sizeof(float);
  if (first) {
    _tile_zero(0);
    _tile_zero(1);
    if constexpr (R == 2) {
      _tile_zero(2);
      _tile_zero(3);
    }
  } else {  // continue the sum of the earlier chunks of k
    _tile_loadd(0, c, kStride);
    _tile_loadd(1, c + 16, kStride);
    if constexpr (R == 2) {
      _tile_loadd(2, c + 16 * 32, kStride);
      _tile_loadd(3, c + 16 * 32 + 16, kStride);
    }
  }
  const char* line = reinterpret_cast<const char*>(prefetch.start);
  int due = 0;
  for (int kb = 0; kb < k_blocks; ++kb) {
    for (due += prefetch.lines; due >= k_blocks; due -= k_blocks, line += 64)
      _mm_prefetch(line, _MM_HINT_T1);
    const std::uint16_t* ah0 = a0 + static_cast<std::size_t>(kb) * 2 * kTileElems;
    const std::uint16_t* wk = w + static_cast<std::size_t>(kb) * 4 * kTileElems;
    if constexpr (R == 2) {
      const std::uint16_t* ah1 = a1 + static_cast<std::size_t>(kb) * 2 * kTileElems;
      _tile_loadd(4, ah0, 64);
      _tile_loadd(5, ah1, 64);
      _tile_loadd(6, wk, 64);
      _tile_loadd(7, wk + kTileElems, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
      _tile_loadd(4, ah0 + kTileElems, 64);  // lo of A
      _tile_loadd(5, ah1 + kTileElems, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
      _tile_loadd(4, ah0, 64);
      _tile_loadd(5, ah1, 64);
      _tile_loadd(6, wk + 2 * kTileElems, 64);  // lo of W
      _tile_loadd(7, wk + 3 * kTileElems, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    } else {
      (void)a1;
      _tile_loadd(4, ah0, 64);
      _tile_loadd(5, ah0 + kTileElems, 64);
      _tile_loadd(6, wk, 64);
      _tile_loadd(7, wk + kTileElems, 64);
      _tile_loadd(2, wk + 2 * kTileElems, 64);
      _tile_loadd(3, wk + 3 * kTileElems, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(0, 5, 6);
      _tile_dpbf16ps(1, 5, 7);
      _tile_dpbf16ps(0, 4, 2);
      _tile_dpbf16ps(1, 4, 3);
    }
  }
  _tile_stored(0, c, kStride);
  _tile_stored(1, c + 16, kStride);
  if constexpr (R == 2) {
    _tile_stored(2, c + 16 * 32, kStride);
    _tile_stored(3, c + 16 * 32 + 16, kStride);
  }
}

void gemm_amx(const float* a, int m, int lda, const PackedWeight& w, const float* bias, float* c,
              int ldc) {
  const int k_blocks = (w.k() + kAmxK - 1) / kAmxK;
  const int row_blocks = (m + 15) / 16;
  const std::size_t block_elems = static_cast<std::size_t>(k_blocks) * 2 * kTileElems;
  std::uint16_t* tiles = thread_buffer<std::uint16_t, 0>(row_blocks * block_elems);  // the caller's
  if (static_cast<double>(m) * w.k() < 2e5) {
    pack_a_rows(a, m, lda, w.k(), k_blocks, tiles, 0, row_blocks);
  } else {
    share_work(row_blocks,
               [&](int rb) { pack_a_rows(a, m, lda, w.k(), k_blocks, tiles, rb, rb + 1); });
  }
  // Work items as in gemm<Isa>: (row chunk, panel group); the kernel takes 32 rows (a "pair" of
  // 16-row blocks; the last may be a single block).
  constexpr int kPairsPerChunk = 2;  // 64 rows
  const int pairs = (row_blocks + 1) / 2;
  const int row_chunks = (pairs + kPairsPerChunk - 1) / kPairsPerChunk;
  const int panels = w.panels();
  const PanelGroups split = split_panels(m, w, row_chunks, 4e6);
  const int groups = split.groups, per_group = split.per_group;  // plain names: clang 14 cannot
                                                                 // capture structured bindings
  // k is walked in chunks of PackedWeight::kAmxChunkBlocks (768): a row pair's A tiles for one
  // chunk (96 KB) and a panel's slice of it (96 KB) stay in L2 with room for the next slice coming
  // in. With all of k = 3072 at once (mlp_down) they did not, and that product ran at ~60% of the
  // rate of the k = 768 ones. C waits in `acc` between chunks.
  constexpr int kChunk = PackedWeight::kAmxChunkBlocks;
  auto run = [&](int item) {
    const int rc = item / groups, g = item % groups;
    const int q0 = rc * kPairsPerChunk, q1 = std::min(pairs, q0 + kPairsPerChunk);
    const int p0 = g * per_group, p1 = std::min(panels, p0 + per_group);
    if (p0 >= p1) return;
    const int np = p1 - p0;
    // 32 x 32 C blocks, (pair, panel) of this item: at most 2 x per_group x 4 KB.
    float* acc = thread_buffer<float, 1>(static_cast<std::size_t>(q1 - q0) * np * 32 * 32);
    auto block_of = [&](int q, int p) {
      return acc + (static_cast<std::size_t>(q - q0) * np + (p - p0)) * 32 * 32;
    };
    configure_tiles();
    for (int kc = 0; kc < k_blocks; kc += kChunk) {
      const int kn = std::min(kChunk, k_blocks - kc);
      const long slice_lines = static_cast<long>(kn) * 4 * kTileElems * 2 / 64;
      for (int p = p0; p < p1; ++p) {
        // The next slice to read (the next panel's, or the first panel's of the next chunk) into
        // L2, spread over this slice's row pairs.
        const std::uint16_t* next = p + 1 < p1               ? w.bf16_slice(p + 1, kc)
                                    : kc + kChunk < k_blocks ? w.bf16_slice(p0, kc + kChunk)
                                                             : nullptr;
        const long next_lines = p + 1 < p1
                                    ? slice_lines
                                    : static_cast<long>(std::min(kChunk, k_blocks - kc - kChunk)) *
                                          4 * kTileElems * 2 / 64;
        for (int q = q0; q < q1; ++q) {
          Prefetch pf;
          if (next) {
            const long first = next_lines * (q - q0) / (q1 - q0);
            const long last = next_lines * (q - q0 + 1) / (q1 - q0);
            pf = {reinterpret_cast<const char*>(next) + first * 64, static_cast<int>(last - first)};
          }
          const std::uint16_t* a0 = tiles + 2 * q * block_elems + kc * 2 * kTileElems;
          if (2 * q + 1 < row_blocks)
            amx_block<2>(a0, a0 + block_elems, w.bf16_slice(p, kc), kn, block_of(q, p), kc == 0,
                         pf);
          else
            amx_block<1>(a0, nullptr, w.bf16_slice(p, kc), kn, block_of(q, p), kc == 0, pf);
        }
      }
    }
    for (int q = q0; q < q1; ++q) {
      const int rows = std::min(32, m - q * 32);
      for (int p = p0; p < p1; ++p) {
        const int col = p * kAmxPanel, cols = std::min(kAmxPanel, w.n() - col);
        const float* out = block_of(q, p);
        for (int i = 0; i < rows; ++i) {
          float* dst = c + static_cast<std::ptrdiff_t>(q * 32 + i) * ldc + col;
          const float* src = out + i * 32;
          if (bias) {
            for (int j = 0; j < cols; ++j) dst[j] = src[j] + bias[col + j];
          } else {
            std::copy(src, src + cols, dst);
          }
        }
      }
    }
    _tile_release();
  };
  const int items = row_chunks * groups;
  if (items == 1)
    run(0);
  else
    share_work(items, run);
}

#endif  // ATTNSCOPE_AMX

#endif  // __AVX2__ && __FMA__

void free_bytes(unsigned char* p) {
  std::free(p);
}

unsigned char* alloc_bytes(std::size_t count) {
  const std::size_t bytes = (std::max<std::size_t>(count, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p) throw std::bad_alloc();
  return static_cast<unsigned char*>(p);
}

}  // namespace

std::vector<GemmIsa> packed_gemm_isas() {
  std::vector<GemmIsa> isas;
#if defined(ATTNSCOPE_AMX)
  if (amx_permitted()) isas.push_back(GemmIsa::kAmxBf16x3);
#endif
#if defined(__AVX512F__)
  isas.push_back(GemmIsa::kAvx512);
#endif
#if defined(__AVX2__) && defined(__FMA__)
  isas.push_back(GemmIsa::kAvx2);
#endif
  return isas;
}

std::string to_string(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAmxBf16x3:
      return "AMX bf16x3";
    case GemmIsa::kAvx512:
      return "AVX-512";
    case GemmIsa::kAvx2:
      break;
  }
  return "AVX2";
}

PackedWeight::PackedWeight(const void* w, DType dtype, int rows, int cols, int stride,
                           bool transposed, GemmIsa isa)
    : k_(transposed ? cols : rows),
      n_(transposed ? rows : cols),
      // 16-bit weights: the AVX-512 kernel (packed_gemm.h); an AMX build always has AVX-512
      isa_(dtype != DType::kF32 && isa == GemmIsa::kAmxBf16x3 ? GemmIsa::kAvx512 : isa),
      dtype_(dtype),
      panel_width_(panel_width_of(isa_)),
      data_(nullptr, free_bytes) {
  const int nr = panel_width_;
  if (dtype_is_quantized(dtype)) {  // kept where it lies (packed_gemm.h)
    if (!transposed || stride != cols || cols % dtype_block_values(dtype) != 0)
      throw BackendError(std::string("packed GEMM: a ") + dtype_name(dtype) +
                         " weight must be [out x in] in rows of whole blocks");
    quantized_ = static_cast<const unsigned char*>(w);
    quantized_row_bytes_ = dtype_row_bytes(dtype, static_cast<std::size_t>(cols));
    return;
  }
  const std::size_t value_bytes = static_cast<std::size_t>(dtype_bytes(dtype));
  const auto* bytes = static_cast<const unsigned char*>(w);
  std::function<void(int)> pack;
  if (isa_ == GemmIsa::kAmxBf16x3) {
#if defined(ATTNSCOPE_AMX)
    const auto* wf = static_cast<const float*>(w);
    auto at = [&](int kk, int col) {  // W(kk, col)
      return transposed ? wf[static_cast<std::size_t>(col) * stride + kk]
                        : wf[static_cast<std::size_t>(kk) * stride + col];
    };
    const int k_blocks = (k_ + kAmxK - 1) / kAmxK;
    panel_bytes_ = static_cast<std::size_t>(k_blocks) * 4 * kTileElems * sizeof(std::uint16_t);
    k_blocks_ = k_blocks;
    pack = [&, k_blocks](int p) {
      const int col0 = p * kAmxPanel, valid = std::min(kAmxPanel, n_ - col0);
      alignas(64) float block[kAmxK][kAmxPanel];  // W's 32 x 32 block, zero outside W
      alignas(64) std::uint16_t hi[kAmxK][kAmxPanel], lo[kAmxK][kAmxPanel];
      for (int kb = 0; kb < k_blocks; ++kb) {
        const int k0 = kb * kAmxK, rows = std::min(kAmxK, k_ - k0);
        std::fill(&block[0][0], &block[0][0] + kAmxK * kAmxPanel, 0.0f);
        if (transposed) {  // W's column j is row col0 + j of Wᵀ: read it front to back
          for (int j = 0; j < valid; ++j)
            for (int kk = 0; kk < rows; ++kk) block[kk][j] = at(k0 + kk, col0 + j);
        } else {
          for (int kk = 0; kk < rows; ++kk)
            std::memcpy(block[kk], wf + static_cast<std::size_t>(k0 + kk) * stride + col0,
                        valid * sizeof(float));
        }
        for (int kk = 0; kk < kAmxK; ++kk)
          for (int half = 0; half < 2; ++half)
            split_16(_mm512_load_ps(&block[kk][half * 16]), &hi[kk][half * 16], &lo[kk][half * 16]);
        // Tile (hi or lo, columns 0-15 or 16-31): row kk / 2, column j % 16, pair element kk % 2.
        std::uint16_t* tiles = const_cast<std::uint16_t*>(bf16_slice(p, kb));
        for (int kk = 0; kk < kAmxK; ++kk) {
          for (int j = 0; j < kAmxPanel; ++j) {
            const std::size_t offset = (kk / 2) * kAmxK + (j % 16) * 2 + kk % 2;
            tiles[(j / 16) * kTileElems + offset] = hi[kk][j];
            tiles[(2 + j / 16) * kTileElems + offset] = lo[kk][j];
          }
        }
      }
    };
#endif
  } else {
    // Panel p is [k x nr] values of W's format, copied bit for bit (zero past W's last column).
    panel_bytes_ = static_cast<std::size_t>(k_) * nr * value_bytes;
    pack = [&](int p) {
      unsigned char* dst = data_.get() + p * panel_bytes_;
      const int col0 = p * nr, valid = std::min(nr, n_ - col0);
      const std::size_t row_bytes = static_cast<std::size_t>(nr) * value_bytes;
      if (transposed) {  // W's column j is row col0 + j of Wᵀ: read each front to back
        std::memset(dst, 0, panel_bytes_);
        for (int j = 0; j < valid; ++j) {
          const unsigned char* src =
              bytes + static_cast<std::size_t>(col0 + j) * stride * value_bytes;
          unsigned char* out = dst + j * value_bytes;
          if (value_bytes == 2) {
            for (int kk = 0; kk < k_; ++kk) std::memcpy(out + kk * row_bytes, src + kk * 2, 2);
          } else {
            for (int kk = 0; kk < k_; ++kk) std::memcpy(out + kk * row_bytes, src + kk * 4, 4);
          }
        }
      } else {
        for (int kk = 0; kk < k_; ++kk) {
          unsigned char* out = dst + kk * row_bytes;
          std::memcpy(out, bytes + (static_cast<std::size_t>(kk) * stride + col0) * value_bytes,
                      valid * value_bytes);
          std::memset(out + valid * value_bytes, 0, (nr - valid) * value_bytes);
        }
      }
    };
  }
  data_.reset(alloc_bytes(panel_bytes_ * panels()));
  // Once per weight matrix (GPT-2 small: 340 MB in ~0.25 s on one core), on every core.
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
#if defined(ATTNSCOPE_AMX)
    case GemmIsa::kAmxBf16x3:
      return gemm_amx(a, m, lda, w, bias, c, ldc);
#endif
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
