// Every backend op on the CPU — its default fast kernels and its float path — against the double-
// precision reference of tests/common/op_cases.h, tolerance tol + |ref|·eps, with guard values
// around every output. The same cases run on CUDA in tests/gpu/backend_equivalence_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/dtype.h"
#include "core/util/error.h"
#include "tests/common/op_cases.h"

namespace attnscope {
namespace {

// Runs every case on `be`; `amx` says that its linear layers on float weights use AMX bf16x3.
void expect_every_case_matches_double(Backend& be, bool amx) {
  int checked = 0;
  for (const test::OpCase& c : test::backend_op_cases()) {
    SCOPED_TRACE(be.description() + ": " + c.name);
    const test::MatrixD ref = c.reference();
    Matrix got;
    try {
      got = c.run(be);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
      continue;
    }
    ASSERT_EQ(got.rows(), ref.rows());
    ASSERT_EQ(got.cols(), ref.cols());
    const bool loose = amx && c.amx_tol > 0;
    const double ratio =
        test::tolerance_ratio(got, ref, loose ? c.amx_tol : c.tol, loose ? c.amx_eps : c.eps);
    EXPECT_LE(ratio, 1.0) << "worst |got - ref| / (tol + |ref|·eps) = " << ratio;
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

TEST(BackendOps, CpuDefaultKernelsMatchDoublePrecision) {
  const auto be = make_cpu_backend();
  expect_every_case_matches_double(*be, be->description().find("AMX") != std::string::npos);
}

TEST(BackendOps, CpuFloatPathMatchesDoublePrecision) {
  const auto be = make_cpu_backend(CpuPrecision::kFloat);
  expect_every_case_matches_double(*be, false);
}

// Wrong shapes and ids are errors naming the op, never a crash or a silent wrong result.
TEST(BackendOps, BadArgumentsAreErrorsNamingTheOp) {
  for (auto precision : {CpuPrecision::kFastest, CpuPrecision::kFloat}) {
    const auto be = make_cpu_backend(precision);
    auto message = [](auto&& fn) {
      try {
        fn();
      } catch (const BackendError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    const test::FileWeight w = test::file_weight(test::randn(8, 16, 1), DType::kBF16);
    const auto prepared = be->prepare_weight(w.view, true);  // 16 -> 8
    EXPECT_EQ(prepared->in, 16);
    EXPECT_EQ(prepared->out, 8);
    Tensor y = be->alloc(2, 8);
    EXPECT_NE(message([&] { be->linear(be->alloc(2, 15), *prepared, Tensor{}, y); }).find("linear"),
              std::string::npos);
    Tensor e = be->alloc(1, 16);
    EXPECT_NE(message([&] { be->embedding(w.view, {8}, e); }).find("token id 8"),
              std::string::npos);
    Tensor x = be->alloc(3, 128);
    EXPECT_NE(message([&] { be->rope(x, 2, 64, std::vector<float>(31), 0); }).find("inv_freq"),
              std::string::npos);
    EXPECT_NE(message([&] { be->rms_norm(x, be->alloc(1, 100), 1e-6f, 0.0f, x); }).find("rms_norm"),
              std::string::npos);
    Tensor q = be->alloc(3, 4 * 8), kv = be->alloc(5, 3 * 8), ctx = be->alloc(3, 4 * 8);
    EXPECT_NE(message([&] {
                be->attention_heads(q, kv, kv, 4, 3, 8, 1.0f, 0.0f, {}, ctx, nullptr);
              }).find("attention_heads"),
              std::string::npos);  // 3 KV heads do not divide 4 query heads
  }
}

// The guard frame catches a write out of bounds: a deliberately wrong op is caught.
TEST(BackendOps, GuardValuesCatchAWriteOutsideTheOutput) {
  const auto be = make_cpu_backend();
  test::GuardedOutput g = test::guarded(*be, 3, 4);
  Tensor wider = g.view.cols_view(0, 5);  // one column too many
  be->scale(wider, 1.0f);                 // leaves values as they are: no error
  EXPECT_NO_THROW(test::read_guarded(*be, g));
  be->add(wider, be->upload(Matrix::Ones(3, 5)));
  EXPECT_THROW(test::read_guarded(*be, g), std::runtime_error);
}

// A NaN result never passes a tolerance check.
TEST(BackendOps, ToleranceRatioFailsOnNaN) {
  Matrix got(1, 2);
  got << 1.0f, std::nanf("");
  test::MatrixD ref(1, 2);
  ref << 1.0, 2.0;
  EXPECT_GT(test::tolerance_ratio(got, ref, 1, 1), 1.0);
}

// The scalar conversions of core/backend/dtype.h against independent decoders and the compiler's
// own half type, over every 16-bit pattern.
TEST(DTypeConversions, EveryHalfAndBfloat16WidensExactly) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const double f16 = test::ref_f16(bits), bf16 = test::ref_bf16(bits);
    if (std::isnan(f16)) {
      EXPECT_TRUE(std::isnan(f16_to_float(bits))) << h;
    } else {
      ASSERT_EQ(static_cast<double>(f16_to_float(bits)), f16) << h;
      ASSERT_EQ(float_to_f16(f16_to_float(bits)), bits) << h;  // round trip
    }
    if (std::isnan(bf16)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(bits))) << h;
    } else {
      ASSERT_EQ(static_cast<double>(bf16_to_float(bits)), bf16) << h;
      ASSERT_EQ(float_to_bf16(bf16_to_float(bits)), bits) << h;
    }
  }
}

TEST(DTypeConversions, NarrowingRoundsToNearestEven) {
  const Matrix x = test::randn(1, 20000, 7, 100.0f);
  for (int i = 0; i < x.cols(); ++i) {
    const float v = x(0, i) * (i % 7 == 0 ? 1e-6f : 1.0f);  // half subnormals too
#if defined(__FLT16_MAX__)
    const _Float16 want = static_cast<_Float16>(v);  // the compiler's round-to-nearest-even
    std::uint16_t want_bits;
    std::memcpy(&want_bits, &want, 2);
    ASSERT_EQ(float_to_f16(v), want_bits) << v;
#endif
    // bfloat16: the nearest of the two neighbours, ties to the even one.
    const std::uint16_t b = float_to_bf16(v);
    const double got = test::ref_bf16(b), up = test::ref_bf16(b + 1), down = test::ref_bf16(b - 1);
    EXPECT_LE(std::abs(got - v), std::abs(up - v)) << v;
    EXPECT_LE(std::abs(got - v), std::abs(down - v)) << v;
  }
  EXPECT_EQ(float_to_f16(1e6f), 0x7c00);  // overflow: inf
  EXPECT_EQ(float_to_f16(-1e6f), 0xfc00);
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256), 0x3f80);  // a tie: to even (1.0)
}

}  // namespace
}  // namespace attnscope
