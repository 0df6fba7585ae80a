#pragma once
// Whether a weight matrix in its file's format holds a NaN or an infinity, before any of it is
// used: a NaN weight otherwise surfaces only as attention rows of zeros ("the weights sum to 0"),
// naming neither the NaN nor the tensor.
#include <cstddef>

#include "core/backend/dtype.h"

namespace attnscope {

inline constexpr std::size_t kAllFinite = static_cast<std::size_t>(-1);

// The index of the first NaN or infinity among `n` values of format `t` (kAllFinite when none):
// F32/F16/BF16 tested on their exponent bits, block formats by their f16 scales (the index of the
// block's first value; quant.h's first_non_finite_block). `n` is a whole number of blocks.
std::size_t first_non_finite_value(const void* data, DType t, std::size_t n);

}  // namespace attnscope
