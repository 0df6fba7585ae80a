#include "core/backend/cpu/dequantize.h"

#include <cstdint>
#include <cstring>

#include "core/util/matrix.h"  // first include of the intrinsics headers, under its GCC 12 pragma

#if defined(__AVX2__)
#include <immintrin.h>
#endif

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() (__Y = __Y), which it then reports
// as used uninitialised where they are inlined (GCC bug 105593, fixed in GCC 13; matrix.h).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace attnscope::cpu {
namespace {

using quant::half_at;
using quant::k4_scale_min;

// One instruction set as the dequantisers need it: kWidth float lanes, and kWidth bytes widened to
// 32-bit integers.
#if defined(__AVX512F__) && defined(__AVX512BW__)
struct Avx512 {
  using V = __m512;
  using I = __m512i;
  static constexpr int kWidth = 16;
  static I bytes(const std::uint8_t* p) {  // 16 unsigned bytes -> 16 int32
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I sbytes(const std::uint8_t* p) {  // 16 signed bytes -> 16 int32
    return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I and_(I a, int m) { return _mm512_and_si512(a, _mm512_set1_epi32(m)); }
  static I or_(I a, I b) { return _mm512_or_si512(a, b); }
  static I srl(I a, int s) { return _mm512_srli_epi32(a, static_cast<unsigned>(s)); }
  static I sll(I a, int s) { return _mm512_slli_epi32(a, static_cast<unsigned>(s)); }
  static I sub(I a, int b) { return _mm512_sub_epi32(a, _mm512_set1_epi32(b)); }
  static V to_float(I a) { return _mm512_cvtepi32_ps(a); }
  // q · d - m: q · d is exact, so one rounding, as in the scalar code.
  static void store(float* y, I q, float d) {
    _mm512_storeu_ps(y, _mm512_mul_ps(to_float(q), _mm512_set1_ps(d)));
  }
  static void store(float* y, I q, float d, float m) {
    _mm512_storeu_ps(
        y, _mm512_sub_ps(_mm512_mul_ps(to_float(q), _mm512_set1_ps(d)), _mm512_set1_ps(m)));
  }
};
#endif
#if defined(__AVX2__)
struct Avx2 {
  using V = __m256;
  using I = __m256i;
  static constexpr int kWidth = 8;
  static I bytes(const std::uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static I sbytes(const std::uint8_t* p) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static I and_(I a, int m) { return _mm256_and_si256(a, _mm256_set1_epi32(m)); }
  static I or_(I a, I b) { return _mm256_or_si256(a, b); }
  static I srl(I a, int s) { return _mm256_srli_epi32(a, s); }
  static I sll(I a, int s) { return _mm256_slli_epi32(a, s); }
  static I sub(I a, int b) { return _mm256_sub_epi32(a, _mm256_set1_epi32(b)); }
  static V to_float(I a) { return _mm256_cvtepi32_ps(a); }
  static void store(float* y, I q, float d) {
    _mm256_storeu_ps(y, _mm256_mul_ps(to_float(q), _mm256_set1_ps(d)));
  }
  static void store(float* y, I q, float d, float m) {
    _mm256_storeu_ps(
        y, _mm256_sub_ps(_mm256_mul_ps(to_float(q), _mm256_set1_ps(d)), _mm256_set1_ps(m)));
  }
};
#endif

// Q8_0: int8 · d.
template <class S>
void q8_0(const std::uint8_t* b, float* y) {
  const float d = half_at(b);
  for (int j = 0; j < 32; j += S::kWidth) S::store(y + j, S::sbytes(b + 2 + j), d);
}

// Q4_K and Q5_K: 4 chunks of 64 values; in each, 32 low nibbles (sub-block 2c) then 32 high
// nibbles (2c + 1), Q5_K's fifth bit being bit 2c (2c + 1) of qh[l].
template <class S, bool kFive>
void q45_k(const std::uint8_t* b, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const std::uint8_t* scales = b + 4;
  const std::uint8_t* qh = b + 16;
  const std::uint8_t* q = b + (kFive ? 48 : 16);
  for (int chunk = 0; chunk < 4; ++chunk, q += 32)
    for (int part = 0; part < 2; ++part) {
      int sc, mn;
      k4_scale_min(2 * chunk + part, scales, sc, mn);
      const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(mn);
      const int bit = 2 * chunk + part;
      for (int l = 0; l < 32; l += S::kWidth, y += S::kWidth) {
        typename S::I v = S::bytes(q + l);
        v = part == 0 ? S::and_(v, 0xf) : S::srl(v, 4);
        if constexpr (kFive) v = S::or_(v, S::sll(S::and_(S::srl(S::bytes(qh + l), bit), 1), 4));
        S::store(y, v, dl, ml);
      }
    }
}

// Q6_K: 2 halves of 128; value l (+32, +64, +96) of a half takes the low (high) nibble of ql[l]
// or ql[l + 32] and bits 0-1 (2-3, 4-5, 6-7) of qh[l]; 16 values share one int8 scale.
template <class S>
void q6_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* ql = b;
  const std::uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128)
    for (int l = 0; l < 32; l += S::kWidth) {
      const int is = l / 16;
      const typename S::I lo = S::bytes(ql + l), hi = S::bytes(ql + l + 32), h = S::bytes(qh + l);
      const typename S::I q1 = S::or_(S::and_(lo, 0xf), S::sll(S::and_(h, 3), 4));
      const typename S::I q2 = S::or_(S::and_(hi, 0xf), S::sll(S::and_(S::srl(h, 2), 3), 4));
      const typename S::I q3 = S::or_(S::srl(lo, 4), S::sll(S::and_(S::srl(h, 4), 3), 4));
      const typename S::I q4 = S::or_(S::srl(hi, 4), S::sll(S::srl(h, 6), 4));
      S::store(y + l, S::sub(q1, 32), d * static_cast<float>(sc[is]));
      S::store(y + l + 32, S::sub(q2, 32), d * static_cast<float>(sc[is + 2]));
      S::store(y + l + 64, S::sub(q3, 32), d * static_cast<float>(sc[is + 4]));
      S::store(y + l + 96, S::sub(q4, 32), d * static_cast<float>(sc[is + 6]));
    }
}

template <class S>
bool vector_row(DType t, const std::uint8_t* b, float* y, int n) {
  void (*block)(const std::uint8_t*, float*) = nullptr;
  switch (t) {
    case DType::kQ8_0:
      block = &q8_0<S>;
      break;
    case DType::kQ4_K:
      block = &q45_k<S, false>;
      break;
    case DType::kQ5_K:
      block = &q45_k<S, true>;
      break;
    case DType::kQ6_K:
      block = &q6_k<S>;
      break;
    default:
      return false;
  }
  const int per = dtype_block_values(t), bytes = dtype_block_bytes(t);
  for (int i = 0; i < n; i += per, b += bytes, y += per) block(b, y);
  return true;
}

}  // namespace

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

std::vector<DequantIsa> dequantize_isas() {
  std::vector<DequantIsa> isas;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  isas.push_back(DequantIsa::kAvx512);
#endif
#if defined(__AVX2__)
  isas.push_back(DequantIsa::kAvx2);
#endif
  isas.push_back(DequantIsa::kScalar);
  return isas;
}

void dequantize_row_with(DequantIsa isa, DType t, const void* src, float* dst, int n) {
  [[maybe_unused]] const auto* b = static_cast<const std::uint8_t*>(src);
  switch (isa) {
    case DequantIsa::kAvx512:
#if defined(__AVX512F__) && defined(__AVX512BW__)
      if (vector_row<Avx512>(t, b, dst, n)) return;
#endif
      break;
    case DequantIsa::kAvx2:
#if defined(__AVX2__)
      if (vector_row<Avx2>(t, b, dst, n)) return;
#endif
      break;
    case DequantIsa::kScalar:
      break;
  }
  dequantize_row(t, src, dst, n);
}

void dequantize_row_fast(DType t, const void* src, float* dst, int n) {
  static const DequantIsa best = dequantize_isas().front();
  dequantize_row_with(best, t, src, dst, n);
}

}  // namespace attnscope::cpu
