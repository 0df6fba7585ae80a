#pragma once
// The CPU's product with a weight matrix, y = x·W + b, for the linear layers of the transformers
// (about 95% of GPT-2's arithmetic). W is repacked once, when a model's weights reach the CPU
// backend, into column panels that the vector kernel reads front to back; a general GEMM (Eigen's,
// OpenBLAS's) repacks W on every call instead, which cost Eigen a quarter of its time here.
//
// The kernel keeps an MR x NR block of y in vector registers and adds one rank-1 update per step of
// k: NR/width loads of W's panel, MR broadcasts of x, MR·NR/width fused multiply-adds. It is
// written once over a small "instruction set" type and built for AVX-512 and for AVX2+FMA, as far
// as the compiler flags (CMakeLists.txt: the build machine's processor) allow. Without AVX2 nothing
// is packed and the CPU backend keeps using Eigen.
//
// On processors with AMX (Intel Xeon 4th generation and later) there is a third kernel, on the
// matrix tiles: they multiply bfloat16 (8 significant bits) about 7 times faster per core than
// AVX-512 multiplies floats (measured here: 1.07 TFLOP/s against ~160 GFLOP/s). To come near float
// accuracy every float x is split in two bfloat16, x = hi + lo + r with |r| <= 2^-16 |x|, and a·b
// is computed as hi·hi + hi·lo + lo·hi with float accumulation ("bf16x3"; Henry, Tang & Heinecke,
// "Leveraging the bfloat16 artificial intelligence datatype for higher-precision computations",
// ARITH 2019), three tile products for one: net ~2.3x a core's float rate. Each product is then
// exact to about 3·2^-16 of itself (float: 2^-24), so sums land about 9x further from the exact
// value than a float sum's own rounding (tests/unit/packed_gemm_test.cpp measures both). The
// CPU backend uses this kernel by default where it runs; cpu_backend.h: CpuPrecision.
//
// Weights in 16-bit formats (bfloat16, IEEE half) stay 16-bit in their panels, half the bytes of
// float: the kernel widens each panel row in registers before the multiply-adds (bfloat16: zero-
// extend and shift left by 16; half: vcvtph2ps), so a bf16 model takes no more memory than its file
// and streams half the bytes. Their products run on AVX-512/AVX2 (float arithmetic, exact widening)
// even where AMX is present: an AMX kernel for bf16 weights is not written yet (no AMX here to test
// one on).
//
// Weights in ggml's block formats (GGUF: Q4_K, Q6_K, …; core/backend/quant.h) are not copied at
// all: the PackedWeight points at the blocks where they lie (a GGUF's mapping) and every product
// dequantises each panel's part, [768 x NR] at a time, into a float buffer of the thread's (in L2)
// that the float kernel then reads for all rows of its chunk of x (up to 64): one dequantisation
// per weight value per 64 tokens, bit for bit quant.h's values (dequantize.h), and no float copy
// of the model. Such a weight is W = Rᵀ for R [n x k] in ggml's layout (each output's row of k
// values in blocks), i.e. `transposed`, as nn.Linear and ggml store it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/dtype.h"

namespace attnscope {

enum class GemmIsa { kAmxBf16x3, kAvx512, kAvx2 };

// The kernels this build has and this processor and system allow (AMX needs the kernel's
// permission, asked for once), fastest first (empty: none).
std::vector<GemmIsa> packed_gemm_isas();
std::string to_string(GemmIsa isa);

// W [k x n] repacked into ceil(n / NR) column panels (the last one padded with zeros), in
// 64-byte-aligned memory. AVX-512/AVX2: a panel is [k x NR] values of W's format (float, or the
// 16-bit values unchanged), row after row. AMX (float weights only): NR = 32
// and k is padded to a multiple of 32; for each block of 32 rows of k a panel holds four 16 x 32
// bfloat16 tiles in the pair-interleaved layout the tiles multiply: hi of columns 0-15, hi of
// 16-31, lo of 0-15, lo of 16-31 (see bf16_slice for their order).
class PackedWeight {
 public:
  // `w` is [k x n] with `stride` floats between rows; with `transposed`, `w` holds Wᵀ: [n x k].
  // `isa` must be one of packed_gemm_isas().
  PackedWeight(const float* w, int rows, int cols, int stride, bool transposed, GemmIsa isa)
      : PackedWeight(w, DType::kF32, rows, cols, stride, transposed, isa) {}
  // The same for a weight of format `dtype` (`stride` in values). A 16-bit weight with
  // isa = kAmxBf16x3 is packed for AVX-512 instead (isa() tells). A quantised weight must be
  // `transposed` with stride == cols (ggml's rows of blocks); `w` is then read by every product
  // and must stay mapped and unchanged while this PackedWeight is used.
  PackedWeight(const void* w, DType dtype, int rows, int cols, int stride, bool transposed,
               GemmIsa isa);

  int k() const { return k_; }
  int n() const { return n_; }
  GemmIsa isa() const { return isa_; }
  DType dtype() const { return dtype_; }
  int panel_width() const { return panel_width_; }
  int panels() const { return (n_ + panel_width_ - 1) / panel_width_; }
  // Panel p for the float kernels, and for AMX.
  const float* panel(int p) const { return reinterpret_cast<const float*>(panel_bytes(p)); }
  const unsigned char* panel_bytes(int p) const {
    return data_.get() + static_cast<std::size_t>(p) * panel_bytes_;
  }
  // AMX: the four tiles of block `kb` of k (32 rows of W) of panel p. The blocks up to the end of
  // kb's chunk of k (kAmxChunkBlocks blocks) follow it; chunks are stored one after the other, each
  // panel by panel, in the order the kernel reads them.
  const std::uint16_t* bf16_slice(int p, int kb) const {
    const int first = kb / kAmxChunkBlocks * kAmxChunkBlocks;
    const int blocks_here = std::min(kAmxChunkBlocks, k_blocks_ - first);
    const std::size_t slice = static_cast<std::size_t>(first) * panels() +
                              static_cast<std::size_t>(p) * blocks_here + (kb - first);
    return reinterpret_cast<const std::uint16_t*>(data_.get()) + slice * kAmxSliceElems;
  }
  static constexpr int kAmxChunkBlocks = 24;          // k = 768 per chunk
  static constexpr int kAmxSliceElems = 4 * 16 * 32;  // bfloat16 per block of k of one panel
  std::size_t bytes() const { return panel_bytes_ * panels(); }  // 0 for a quantised weight
  // A quantised weight: row j of R (output column j of W), k values in blocks.
  const unsigned char* quantized_row(int j) const {
    return quantized_ + static_cast<std::size_t>(j) * quantized_row_bytes_;
  }

 private:
  int k_ = 0, n_ = 0;
  GemmIsa isa_;
  DType dtype_ = DType::kF32;
  int panel_width_ = 0;
  std::size_t panel_bytes_ = 0;
  int k_blocks_ = 0;                          // AMX: blocks of 32 rows of k
  const unsigned char* quantized_ = nullptr;  // a quantised weight's blocks, where they lie
  std::size_t quantized_row_bytes_ = 0;
  std::unique_ptr<unsigned char[], void (*)(unsigned char*)> data_;
};

// C [m x n] = A [m x k] · W + bias (bias: n floats or nullptr). A's and C's rows are `lda` and
// `ldc` floats apart. Shared between the cores with share_work when the product is large enough.
void packed_gemm(const float* a, int m, int lda, const PackedWeight& w, const float* bias, float* c,
                 int ldc);

}  // namespace attnscope
