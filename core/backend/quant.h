#pragma once
// ggml's block formats (GGUF's quantised tensor types) and their dequantisation, written from the
// block structs in ggml's src/ggml-common.h and the reference dequantize_row_* in
// src/ggml-quants.c. Those values are the model: attnscope computes with exactly them.
//
// Every product here is exact in float: an f16 scale has 11 significant bits and the integers it
// meets have at most 13 together (Q6_K: 8-bit scale · 6-bit quant; IQ4_XS: 6-bit scale · 7-bit
// table value), so d · s · q never rounds, in any order. The only rounding is the subtraction of
// the minimum (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K: d · q - m, or + m), which therefore gives the same
// bits with or without FMA contraction. The vector versions (core/backend/cpu/quant_simd.cpp) rely
// on this to agree bit for bit.
//
// Self-contained and inline (the CUDA module includes it without linking the core); included by
// dtype.h.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/backend/dtype.h"

namespace attnscope {

namespace quant {

// IQ4_NL's and IQ4_XS's non-linear 4-bit code book (kvalues_iq4nl in ggml-common.h).
inline constexpr std::int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                 1,    13,   25,  38,  53,  69,  89,  113};

inline float half_at(const std::uint8_t* p) {  // a little-endian f16, widened exactly
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_float(h);
}

// Q4_K's and Q5_K's 12 bytes of packed 6-bit scales and mins: sub-block j in 0..7 (ggml's
// get_scale_min_k4). Sub-blocks 0-3 keep theirs in the low 6 bits of bytes j and j + 4; 4-7 in a
// nibble of byte j + 4 with the two top bits taken from bytes j - 4 (scale) and j (min).
inline void k4_scale_min(int j, const std::uint8_t* s, int& scale, int& min) {
  if (j < 4) {
    scale = s[j] & 63;
    min = s[j + 4] & 63;
  } else {
    scale = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
    min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Q3_K's 12 bytes of packed 6-bit scales: sub-block i in 0..15, minus 32. The low nibble is in
// byte i (i < 8) or the high nibble of byte i - 8; the two top bits are bits 2·(i/4) of byte
// 8 + i % 4.
inline int q3k_scale(int i, const std::uint8_t* s) {
  const int low = i < 8 ? s[i] & 0xf : s[i - 8] >> 4;
  const int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// One block of `t` (dtype_block_values(t) values) from `b` into `y`.
inline void dequantize_block(DType t, const std::uint8_t* b, float* y) {
  switch (t) {
    case DType::kF32:
      std::memcpy(y, b, 4);
      return;
    case DType::kF16:
    case DType::kBF16: {
      std::uint16_t h;
      std::memcpy(&h, b, 2);
      y[0] = t == DType::kF16 ? f16_to_float(h) : bf16_to_float(h);
      return;
    }
    case DType::kQ4_0: {  // (nibble - 8) · d; low nibbles are values 0-15, high ones 16-31
      const float d = half_at(b);
      const std::uint8_t* qs = b + 2;
      for (int j = 0; j < 16; ++j) {
        y[j] = static_cast<float>((qs[j] & 0xf) - 8) * d;
        y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
      }
      return;
    }
    case DType::kQ4_1: {  // nibble · d + m
      const float d = half_at(b), m = half_at(b + 2);
      const std::uint8_t* qs = b + 4;
      for (int j = 0; j < 16; ++j) {
        y[j] = static_cast<float>(qs[j] & 0xf) * d + m;
        y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
      }
      return;
    }
    case DType::kQ5_0:
    case DType::kQ5_1: {  // a nibble plus a fifth bit (bit j of qh for value j): (q - 16)·d or q·d
                          // + m
      const bool with_min = t == DType::kQ5_1;
      const float d = half_at(b), m = with_min ? half_at(b + 2) : 0.0f;
      const std::uint8_t* p = b + (with_min ? 4 : 2);
      std::uint32_t qh;
      std::memcpy(&qh, p, 4);
      const std::uint8_t* qs = p + 4;
      for (int j = 0; j < 16; ++j) {
        const int q0 = (qs[j] & 0xf) | static_cast<int>(((qh >> j) & 1u) << 4);
        const int q1 = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
        if (with_min) {
          y[j] = static_cast<float>(q0) * d + m;
          y[j + 16] = static_cast<float>(q1) * d + m;
        } else {
          y[j] = static_cast<float>(q0 - 16) * d;
          y[j + 16] = static_cast<float>(q1 - 16) * d;
        }
      }
      return;
    }
    case DType::kQ8_0: {  // int8 · d
      const float d = half_at(b);
      const auto* qs = reinterpret_cast<const std::int8_t*>(b + 2);
      for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(qs[j]) * d;
      return;
    }
    case DType::kQ2_K: {  // 16 sub-blocks of 16: (d · scale4) · q2 - dmin · min4
      const std::uint8_t* scales = b;
      const std::uint8_t* q = b + 16;
      const float d = half_at(b + 80), dmin = half_at(b + 82);
      int is = 0;
      for (int half = 0; half < 2; ++half, q += 32)
        for (int shift = 0; shift < 8; shift += 2)
          for (int part = 0; part < 2; ++part) {
            const std::uint8_t sc = scales[is++];
            const float dl = d * static_cast<float>(sc & 0xf);
            const float ml = dmin * static_cast<float>(sc >> 4);
            for (int l = 0; l < 16; ++l)
              *y++ = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
          }
      return;
    }
    case DType::kQ3_K: {  // 16 sub-blocks of 16: d · (scale6 - 32) · (q2 - (high bit clear ? 4 :
                          // 0))
      const std::uint8_t* hmask = b;
      const std::uint8_t* q = b + 32;
      const std::uint8_t* scales = b + 96;
      const float d = half_at(b + 108);
      int is = 0, bit = 0;
      for (int half = 0; half < 2; ++half, q += 32)
        for (int shift = 0; shift < 8; shift += 2, ++bit)
          for (int part = 0; part < 2; ++part) {
            const float dl = d * static_cast<float>(q3k_scale(is++, scales));
            for (int l = 0; l < 16; ++l) {
              const int k = l + 16 * part;
              const int v = ((q[k] >> shift) & 3) - ((hmask[k] >> bit) & 1 ? 0 : 4);
              *y++ = dl * static_cast<float>(v);
            }
          }
      return;
    }
    case DType::kQ4_K:
    case DType::kQ5_K: {  // 8 sub-blocks of 32: (d · scale6) · q - dmin · min6
      const bool five = t == DType::kQ5_K;
      const float d = half_at(b), dmin = half_at(b + 2);
      const std::uint8_t* scales = b + 4;
      const std::uint8_t* qh = b + 16;
      const std::uint8_t* q = b + (five ? 48 : 16);
      for (int chunk = 0; chunk < 4; ++chunk, q += 32)
        for (int part = 0; part < 2; ++part) {
          int sc, mn;
          k4_scale_min(2 * chunk + part, scales, sc, mn);
          const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(mn);
          const int bit = 2 * chunk + part;
          for (int l = 0; l < 32; ++l) {
            int v = part == 0 ? q[l] & 0xf : q[l] >> 4;
            if (five) v += ((qh[l] >> bit) & 1) << 4;
            *y++ = dl * static_cast<float>(v) - ml;
          }
        }
      return;
    }
    case DType::kQ6_K: {  // 16 sub-blocks of 16: d · int8 scale · (6-bit q - 32)
      const std::uint8_t* ql = b;
      const std::uint8_t* qh = b + 128;
      const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192);
      const float d = half_at(b + 208);
      for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128)
        for (int l = 0; l < 32; ++l) {
          const int is = l / 16;
          const int q1 = ((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32;
          const int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
          const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
          const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
          y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
          y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
          y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
          y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
        }
      return;
    }
    case DType::kIQ4_NL: {  // d · table[index]
      const float d = half_at(b);
      const std::uint8_t* qs = b + 2;
      for (int j = 0; j < 16; ++j) {
        y[j] = d * static_cast<float>(kIq4nlValues[qs[j] & 0xf]);
        y[j + 16] = d * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
      }
      return;
    }
    case DType::kIQ4_XS: {  // 8 sub-blocks of 32: d · (scale6 - 32) · table[index]
      const float d = half_at(b);
      std::uint16_t scales_h;
      std::memcpy(&scales_h, b + 2, 2);
      const std::uint8_t* scales_l = b + 4;
      const std::uint8_t* qs = b + 8;
      for (int ib = 0; ib < 8; ++ib, qs += 16, y += 32) {
        const int ls =
            ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | (((scales_h >> (2 * ib)) & 3) << 4);
        const float dl = d * static_cast<float>(ls - 32);
        for (int j = 0; j < 16; ++j) {
          y[j] = dl * static_cast<float>(kIq4nlValues[qs[j] & 0xf]);
          y[j + 16] = dl * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
        }
      }
      return;
    }
  }
}

// Where a block's f16 scales lie (byte offsets; -1 = none): d, and dmin or m.
struct ScaleOffsets {
  int first = -1, second = -1;
};
inline ScaleOffsets scale_offsets(DType t) {
  switch (t) {
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ8_0:
    case DType::kIQ4_NL:
    case DType::kIQ4_XS:
      return {0, -1};
    case DType::kQ4_1:
    case DType::kQ5_1:
    case DType::kQ4_K:
    case DType::kQ5_K:
      return {0, 2};
    case DType::kQ2_K:
      return {80, 82};
    case DType::kQ3_K:
      return {108, -1};
    case DType::kQ6_K:
      return {208, -1};
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      break;
  }
  return {};
}

}  // namespace quant

// n values (a multiple of dtype_block_values(t)) from `src` in format `t` into `dst`: ggml's
// dequantize_row_* for the block formats, the exact widening for F16/BF16, a copy for F32.
inline void dequantize_row(DType t, const void* src, float* dst, int n) {
  const auto* b = static_cast<const std::uint8_t*>(src);
  const int per = dtype_block_values(t), bytes = dtype_block_bytes(t);
  for (int i = 0; i < n; i += per, b += bytes, dst += per) quant::dequantize_block(t, b, dst);
}

// The index of the first of `blocks` blocks whose f16 scale (d, or dmin/m) is infinite or NaN,
// or -1 when every one is finite. ggml just multiplies: such a block would put inf/NaN (0 · inf)
// into the weights. With finite scales every dequantised value is finite (at most
// 65504 · 127 · 32 in magnitude), so this is the whole finiteness check of a quantised tensor,
// reading 2-4 bytes a block.
inline std::int64_t first_non_finite_block(DType t, const void* data, std::size_t blocks) {
  const quant::ScaleOffsets o = quant::scale_offsets(t);
  if (o.first < 0) return -1;
  const auto* b = static_cast<const std::uint8_t*>(data);
  const std::size_t bytes = static_cast<std::size_t>(dtype_block_bytes(t));
  auto bad = [](const std::uint8_t* p) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return (h & 0x7c00u) == 0x7c00u;  // all-ones exponent: inf or NaN
  };
  for (std::size_t i = 0; i < blocks; ++i, b += bytes)
    if (bad(b + o.first) || (o.second >= 0 && bad(b + o.second)))
      return static_cast<std::int64_t>(i);
  return -1;
}

// Whether a quantised [rows x cols] matrix (ggml's layout) dequantises to finite values only.
inline bool quantized_rows_finite(DType t, const void* data, int rows, int cols) {
  const std::size_t blocks = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) /
                             static_cast<std::size_t>(dtype_block_values(t));
  return first_non_finite_block(t, data, blocks) < 0;
}

inline float quantized_value(const void* data, DType t, std::size_t i) {
  const std::size_t per = static_cast<std::size_t>(dtype_block_values(t));
  float block[256];
  quant::dequantize_block(t,
                          static_cast<const std::uint8_t*>(data) +
                              i / per * static_cast<std::size_t>(dtype_block_bytes(t)),
                          block);
  return block[i % per];
}

}  // namespace attnscope
