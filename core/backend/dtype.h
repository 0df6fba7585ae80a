#pragma once
// The number formats weights come in — safetensors' F32, F16, BF16 and GGUF's quantised blocks
// (ggml's Q4_0 … IQ4_XS, core/backend/quant.h) — and their exact conversions to float.
// Self-contained and inline: the CUDA module and the kernels include it without linking the core.
// The vector kernels widen 16 values at a time with instructions (packed_gemm.cpp, quant_simd.cpp);
// these are the readable definitions they must agree with.
//
// A quantised matrix [rows x cols] is stored as ggml stores it: each row is cols / block_values
// blocks, rows contiguous (a GGUF tensor with dims {cols, rows}); its bytes are
// rows · dtype_row_bytes(t, cols), never rows · cols · something.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace attnscope {

// The order after kBF16 is a contract (issue 26): ggml's block formats attnscope reads.
enum class DType {
  kF32,
  kF16,
  kBF16,
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ2_K,
  kQ3_K,
  kQ4_K,
  kQ5_K,
  kQ6_K,
  kIQ4_NL,
  kIQ4_XS,
};

inline bool dtype_is_quantized(DType t) {
  return t != DType::kF32 && t != DType::kF16 && t != DType::kBF16;
}
// Values per block: 1 (F32, F16, BF16), 32 (Q4_0 … Q8_0, IQ4_NL) or 256 (the K-quants, IQ4_XS).
inline int dtype_block_values(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      return 1;
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kQ8_0:
    case DType::kIQ4_NL:
      return 32;
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
    case DType::kIQ4_XS:
      return 256;
  }
  return 1;
}
// Bytes per block (ggml-common.h's block structs, no padding).
inline int dtype_block_bytes(DType t) {
  switch (t) {
    case DType::kF32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kQ4_0:
      return 18;  // f16 d, 16 bytes of nibbles
    case DType::kQ4_1:
      return 20;  // f16 d, f16 m, 16 bytes of nibbles
    case DType::kQ5_0:
      return 22;  // f16 d, 4 bytes of fifth bits, 16 bytes of nibbles
    case DType::kQ5_1:
      return 24;  // f16 d, f16 m, 4 bytes of fifth bits, 16 bytes of nibbles
    case DType::kQ8_0:
      return 34;  // f16 d, 32 int8
    case DType::kQ2_K:
      return 84;  // 16 scale bytes, 64 bytes of 2-bit quants, f16 d, f16 dmin
    case DType::kQ3_K:
      return 110;  // 32 bytes hmask, 64 bytes low bits, 12 bytes 6-bit scales, f16 d
    case DType::kQ4_K:
      return 144;  // f16 d, f16 dmin, 12 bytes 6-bit scales/mins, 128 bytes of nibbles
    case DType::kQ5_K:
      return 176;  // as Q4_K plus 32 bytes of fifth bits before the nibbles
    case DType::kQ6_K:
      return 210;  // 128 bytes low nibbles, 64 bytes high 2 bits, 16 int8 scales, f16 d
    case DType::kIQ4_NL:
      return 18;  // f16 d, 16 bytes of indices into kvalues_iq4nl
    case DType::kIQ4_XS:
      return 136;  // f16 d, u16 scales_h, 4 bytes scales_l, 128 bytes of indices
  }
  return 4;
}
// Bytes of one row of `cols` values (cols a multiple of dtype_block_values(t)).
inline std::size_t dtype_row_bytes(DType t, std::size_t cols) {
  return cols / static_cast<std::size_t>(dtype_block_values(t)) *
         static_cast<std::size_t>(dtype_block_bytes(t));
}
// Bytes of one value: for F32, F16 and BF16 only (0 for a block format, whose size is per block:
// use dtype_row_bytes).
inline int dtype_bytes(DType t) {
  return dtype_is_quantized(t) ? 0 : dtype_block_bytes(t);
}
inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kQ4_0:
      return "Q4_0";
    case DType::kQ4_1:
      return "Q4_1";
    case DType::kQ5_0:
      return "Q5_0";
    case DType::kQ5_1:
      return "Q5_1";
    case DType::kQ8_0:
      return "Q8_0";
    case DType::kQ2_K:
      return "Q2_K";
    case DType::kQ3_K:
      return "Q3_K";
    case DType::kQ4_K:
      return "Q4_K";
    case DType::kQ5_K:
      return "Q5_K";
    case DType::kQ6_K:
      return "Q6_K";
    case DType::kIQ4_NL:
      return "IQ4_NL";
    case DType::kIQ4_XS:
      return "IQ4_XS";
  }
  return "?";
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

// Element i of a block-quantised buffer (core/backend/quant.h, included below).
inline float quantized_value(const void* data, DType t, std::size_t i);

// Element i of a buffer of `t` values, as float. For a block format, element i of the buffer read
// as consecutive blocks (so for a matrix, element r · cols + c: rows hold whole blocks).
inline float load_as_float(const void* data, DType t, std::size_t i) {
  if (t == DType::kF32) return static_cast<const float*>(data)[i];
  if (dtype_is_quantized(t)) return quantized_value(data, t, i);
  const std::uint16_t h = static_cast<const std::uint16_t*>(data)[i];
  return t == DType::kBF16 ? bf16_to_float(h) : f16_to_float(h);
}

}  // namespace attnscope

#include "core/backend/quant.h"  // IWYU pragma: export
