#pragma once
// The number formats weights come in (safetensors F32, F16, BF16) and their exact conversions to
// and from float, one value at a time. Self-contained and inline: the CUDA module and the kernels
// include it without linking the core. The vector kernels widen 16 values at a time with
// instructions (packed_gemm.cpp); these are the readable definitions they must agree with.
#include <cstdint>
#include <cstring>

namespace attnscope {

enum class DType { kF32, kF16, kBF16 };

inline int dtype_bytes(DType t) {
  return t == DType::kF32 ? 4 : 2;
}
inline const char* dtype_name(DType t) {
  return t == DType::kF32 ? "F32" : t == DType::kF16 ? "F16" : "BF16";
}

// bfloat16 is the top half of a float: widening is exact.
inline float bf16_to_float(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// IEEE half precision (1 sign, 5 exponent, 10 mantissa bits) to float: exact, subnormals, inf and
// NaN included.
inline float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, u;
  if (exponent == 0x1f) {  // inf / NaN
    u = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal: rebias 15 -> 127
    u = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // ±0
    u = sign;
  } else {  // subnormal: mantissa · 2^-24, normalised for float
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    u = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Round to nearest even (what PyTorch's .to(torch.bfloat16) does); NaN stays a (quiet) NaN.
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

// Round to nearest even, overflow to ±inf, subnormal halves kept (PyTorch's .to(torch.float16)).
inline std::uint16_t float_to_f16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (a < 0x38800000u) {                        // below 2^-14: a subnormal half (or 0)
    if (a < 0x33000000u) return sign;           // below 2^-25: rounds to 0
    const std::uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(a >> 23);  // 14..24
    std::uint32_t half = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1u), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) ++half;
    return sign | static_cast<std::uint16_t>(half);
  }
  std::uint32_t h = ((a >> 23) - 112) << 10 | ((a >> 13) & 0x3ffu);
  const std::uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return sign | static_cast<std::uint16_t>(h);
}

// Element i of a buffer of `t` values, as float.
inline float load_as_float(const void* data, DType t, std::size_t i) {
  if (t == DType::kF32) return static_cast<const float*>(data)[i];
  const std::uint16_t h = static_cast<const std::uint16_t*>(data)[i];
  return t == DType::kBF16 ? bf16_to_float(h) : f16_to_float(h);
}

}  // namespace attnscope
