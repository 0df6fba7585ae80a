#pragma once
#include <memory>

#include "core/backend/backend.h"

namespace attnscope {

// How the CPU runs the linear layers (core/backend/cpu/packed_gemm.h). kFastest: the fastest kernel
// this processor has, AMX bf16x3 where there is AMX (about 16 significant bits per product), unless
// the environment sets ATTNSCOPE_CPU_GEMM=fp32. kFloat: float arithmetic always (references,
// equivalence checks).
enum class CpuPrecision { kFastest, kFloat };

std::unique_ptr<Backend> make_cpu_backend(CpuPrecision precision = CpuPrecision::kFastest);

}  // namespace attnscope
