#include "core/backend/finite_check.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/backend/quant.h"

namespace attnscope {

std::size_t first_non_finite_value(const void* data, DType t, std::size_t n) {
  if (dtype_is_quantized(t)) {
    const auto per = static_cast<std::size_t>(dtype_block_values(t));
    const std::int64_t block = first_non_finite_block(t, data, n / per);
    return block < 0 ? kAllFinite : static_cast<std::size_t>(block) * per;
  }
  const auto* bytes = static_cast<const unsigned char*>(data);
  const bool wide = t == DType::kF32;
  const std::uint32_t exponent = wide ? 0x7f800000u : t == DType::kBF16 ? 0x7f80u : 0x7c00u;
  auto at = [&](std::size_t i) {
    std::uint32_t v = 0;
    if (wide) {
      std::memcpy(&v, bytes + 4 * i, 4);
    } else {
      std::uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      v = h;
    }
    return (v & exponent) == exponent;
  };
  // Blocks without an early exit (GCC vectorises those), then the one block that has it.
  constexpr std::size_t kBlock = 4096;
  for (std::size_t b = 0; b < n; b += kBlock) {
    const std::size_t e = std::min(n, b + kBlock);
    bool any = false;
    for (std::size_t i = b; i < e; ++i) any |= at(i);
    if (!any) continue;
    for (std::size_t i = b; i < e; ++i)
      if (at(i)) return i;
  }
  return kAllFinite;
}

}  // namespace attnscope
