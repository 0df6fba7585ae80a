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
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

enum class GemmIsa { kAvx512, kAvx2 };

// The vector kernels this build has, widest first (empty: none).
std::vector<GemmIsa> packed_gemm_isas();
std::string to_string(GemmIsa isa);

// W [k x n] repacked into ceil(n / NR) panels of [k x NR] floats each (the last one padded with
// zeros), in 64-byte-aligned memory.
class PackedWeight {
 public:
  // `w` is [k x n] with `stride` floats between rows; with `transposed`, `w` holds Wᵀ: [n x k].
  // `isa` must be one of packed_gemm_isas().
  PackedWeight(const float* w, int rows, int cols, int stride, bool transposed, GemmIsa isa);

  int k() const { return k_; }
  int n() const { return n_; }
  GemmIsa isa() const { return isa_; }
  int panel_width() const { return panel_width_; }
  const float* panel(int p) const {
    return data_.get() + static_cast<std::size_t>(p) * k_ * panel_width_;
  }
  int panels() const { return (n_ + panel_width_ - 1) / panel_width_; }

 private:
  int k_ = 0, n_ = 0;
  GemmIsa isa_;
  int panel_width_ = 0;
  std::unique_ptr<float[], void (*)(float*)> data_;
};

// C [m x n] = A [m x k] · W + bias (bias: n floats or nullptr). A's and C's rows are `lda` and
// `ldc` floats apart. Shared between the cores with share_work when the product is large enough.
void packed_gemm(const float* a, int m, int lda, const PackedWeight& w, const float* bias, float* c,
                 int ldc);

}  // namespace attnscope
