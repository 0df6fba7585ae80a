#pragma once
// ggml's block formats dequantised on the CPU with vector instructions, for the linear layers'
// kernel (packed_gemm.cpp dequantises quantised weights into its float panels on every product)
// and the embedding. Bit for bit the scalar definitions of core/backend/quant.h: every product
// there is exact, so the vector order of operations changes nothing (quant_test checks each
// instruction set this build has against numpy). Q8_0, Q4_K, Q5_K and Q6_K (a Q4_K_M file's
// types) are vectorised; the others run quant.h's scalar code.
#include <vector>

#include "core/backend/dtype.h"

namespace attnscope::cpu {

enum class DequantIsa { kScalar, kAvx2, kAvx512 };

// The instruction sets this build dequantises with, fastest first (kScalar always last).
std::vector<DequantIsa> dequantize_isas();

// n values (whole blocks) of `t` from `src` into `dst`, with the fastest of dequantize_isas().
void dequantize_row_fast(DType t, const void* src, float* dst, int n);
// The same with one given instruction set (for tests and benchmarks).
void dequantize_row_with(DequantIsa isa, DType t, const void* src, float* dst, int n);

}  // namespace attnscope::cpu
