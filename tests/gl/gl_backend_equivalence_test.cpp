// Every backend op on the opengl backend (tests/common/op_cases.h: today's ops and the modern-LLM
// ones, the harness CUDA runs too) against the double-precision reference and against the CPU's
// float path, tolerance tol + |ref|·eps, with guard values around every output. These run in CI on
// Mesa's llvmpipe: the OpenGL module must load and make a context there, so a failure to do so
// fails, never skips.
#include <gtest/gtest.h>

#include <thread>

#include "core/attention/attention.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "tests/common/op_cases.h"

namespace attnscope {
namespace {

std::shared_ptr<Backend> opengl_or_fail() {
  const OpenGlProbe gl = try_opengl_backend();
  EXPECT_TRUE(gl.backend) << "the opengl backend does not work here: " << gl.why;
  return gl.backend;
}

// A backend of its own whose storage blocks hold at most `bytes`: the ops must cut larger tensors
// into pieces (GPT-2 small's 154 MB token embedding exceeds llvmpipe's 128 MiB blocks).
std::shared_ptr<Backend> opengl_with_small_blocks(long long bytes) {
  GlModuleRequest request;
  request.max_block_bytes = bytes;
  GlModuleReport report;
  auto backend = create_opengl_backend(request, report);
  EXPECT_TRUE(backend) << report.error;
  return backend;
}

void expect_every_op_matches(Backend& gl, const std::vector<test::OpCase>& cases, int at_least) {
  auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  int checked = 0;
  for (const test::OpCase& c : cases) {
    SCOPED_TRACE(gl.description() + ": " + c.name);
    Matrix got, cpu_got;
    try {
      got = c.run(gl);
      cpu_got = c.run(*cpu);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
      continue;
    }
    const test::MatrixD ref = c.reference();
    ASSERT_EQ(got.rows(), ref.rows());
    ASSERT_EQ(got.cols(), ref.cols());
    const double vs_double = test::tolerance_ratio(got, ref, c.tol, c.eps);
    EXPECT_LE(vs_double, 1.0) << "against double: worst |got - ref| / (tol + |ref|·eps) = "
                              << vs_double;
    // Both within tolerance of the double result: within twice that of each other.
    const double vs_cpu = test::tolerance_ratio(got, cpu_got, 2 * c.tol, 2 * c.eps);
    EXPECT_LE(vs_cpu, 1.0) << "against the CPU: worst ratio " << vs_cpu;
    ++checked;
  }
  EXPECT_GT(checked, at_least);
}

TEST(OpenGlEquivalence, EveryOpMatchesDoublePrecisionAndTheCpu) {
  auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  EXPECT_EQ(gl->name(), "opengl");
  expect_every_op_matches(*gl, test::backend_op_cases(), 60);
}

TEST(OpenGlEquivalence, EveryOpMatchesWhenTensorsExceedOneStorageBlock) {
  // 4 KiB blocks: every case above 1,000 values runs in row or column pieces (attention falls
  // back to its head-by-head form, whose ops split). Today's ops only: the modern-LLM cases at
  // this size take minutes of dispatches on llvmpipe.
  auto gl = opengl_with_small_blocks(4096);
  ASSERT_TRUE(gl);
  expect_every_op_matches(*gl, test::gpt2_bert_op_cases(), 20);
}

TEST(OpenGlEquivalence, AttentionForwardMatchesTheCpu) {
  auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  for (int n : {1, 5, 64, 300}) {
    const Matrix q = test::randn(n, 64, n), k = test::randn(n, 64, n + 1),
                 v = test::randn(n, 64, n + 2);
    for (bool causal : {false, true}) {
      AttentionOptions o;
      o.causal = causal;
      o.mask_self = n == 5;
      const AttentionResult a = attention_forward(q, k, v, o);
      const AttentionResult b = attention_forward(*gl, q, k, v, o);
      EXPECT_LE(test::tolerance_ratio(b.weights, a.weights, 1e-6, 1e-4), 1.0) << n;
      EXPECT_LE(test::tolerance_ratio(b.output, a.output, 1e-5, 1e-4), 1.0) << n;
    }
  }
}

// Heads whose dimension is not a multiple of the shader's 128 invocations, key padding, a row
// with every key masked (zeros, not NaN), and weights not asked for.
TEST(OpenGlEquivalence, SelfAttentionHeadsEdgeCases) {
  auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  struct Case {
    int n, heads, dh;
    bool causal, self, pad;
  };
  for (Case c : {Case{7, 3, 5, false, true, true}, Case{33, 2, 160, true, false, false},
                 Case{1, 1, 1, false, true, false}, Case{130, 4, 64, true, true, true}}) {
    SCOPED_TRACE(testing::Message() << "n=" << c.n << " heads=" << c.heads << " dh=" << c.dh);
    const int d = c.heads * c.dh;
    const Matrix qkv = test::randn(c.n, 3 * d, c.n * 31 + c.dh, 2.0f);
    AttentionMask mask;
    mask.causal = c.causal;
    mask.mask_self = c.self;
    if (c.pad) {
      mask.key_padding.assign(c.n, 0);
      mask.key_padding[c.n / 2] = 1;
    }
    auto run = [&](Backend& be, bool want_weights, std::vector<Matrix>& w) {
      Tensor context = be.alloc(c.n, d);
      be.self_attention_heads(be.upload(qkv), c.heads, 0.3f, mask, context,
                              want_weights ? &w : nullptr);
      return be.download(context);
    };
    std::vector<Matrix> wa, wb, unused;
    const Matrix a = run(*cpu, true, wa), b = run(*gl, true, wb), b2 = run(*gl, false, unused);
    EXPECT_LE(test::tolerance_ratio(b, a, 1e-5, 1e-4), 1.0);
    EXPECT_EQ(b2, b);
    ASSERT_EQ(wb.size(), wa.size());
    for (std::size_t h = 0; h < wa.size(); ++h) {
      EXPECT_TRUE(wb[h].allFinite());
      EXPECT_LE(test::tolerance_ratio(wb[h], wa[h], 1e-6, 1e-4), 1.0) << "head " << h;
    }
  }
}

// Tensors are freed from any thread, and the backend is used from several threads in turn (the
// app's worker computes while the window thread frees the previous model's weights).
TEST(OpenGlEquivalence, WorksFromSeveralThreads) {
  auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  const Matrix m = test::randn(20, 30, 5);
  std::vector<std::thread> threads;
  std::vector<Matrix> out(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Tensor x = gl->upload(m);
      gl->scale(x, float(t + 1));
      out[t] = gl->download(x);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(out[t], m * float(t + 1));
}

}  // namespace
}  // namespace attnscope
