// GPT-2 (on the decoder network), BERT and the lesson model on the opengl backend against the CPU
// backend: the same model code runs on both, so only the ops may differ (and, through the CPU, the
// PyTorch golden data holds). Runs in CI on llvmpipe; a missing OpenGL fails, never skips. The CPU
// keeps to float arithmetic (CpuPrecision::kFloat).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/attention/attention.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "core/model/bert/bert_network.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/lesson/lesson_model.h"
#include "tests/common/decoder_fixture.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<Backend> opengl_or_fail() {
  const OpenGlProbe gl = try_opengl_backend();
  EXPECT_TRUE(gl.backend) << "the opengl backend does not work here: " << gl.why;
  return gl.backend;
}

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols() || a.size() == 0) return a.size() ? INFINITY : 0;
  return (a - b).cwiseAbs().maxCoeff();
}

float worst_attention_diff(const AttentionTrace& a, const AttentionTrace& b) {
  EXPECT_EQ(a.layers(), b.layers());
  EXPECT_EQ(a.heads(), b.heads());
  float worst = 0;
  for (int l = 0; l < a.layers(); ++l)
    for (int h = 0; h < a.heads(); ++h)
      worst = std::max(worst, max_abs_diff(a.attention[l][h], b.attention[l][h]));
  return worst;
}

std::vector<int> sequence(int n, int vocab, int seed) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back((seed * 7919 + i * 104729) % vocab);
  return ids;
}

TEST(TransformerOpenGlEquivalence, Gpt2MatchesTheCpu) {
  const auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (const char* name : {"gpt2-tiny-f32", "gpt2-tiny-bf16"}) {
    const DecoderNetwork net = test::load_decoder_folder(fs::path(ATTNSCOPE_FIXTURES) / name);
    for (int n : {1, 7, 64}) {  // 64 = n_positions
      SCOPED_TRACE(testing::Message() << name << " n=" << n);
      const std::vector<int> ids = sequence(n, net.spec().vocab, n);
      DecoderRequest request;
      request.keep_final_hidden = true;
      KvCache a_cache, b_cache;
      const DecoderOutputs a = net.forward(ids, a_cache, *cpu, request);
      const DecoderOutputs b = net.forward(ids, b_cache, *gl, request);
      float worst = 0;
      for (std::size_t l = 0; l < a.attention.size(); ++l)
        for (std::size_t h = 0; h < a.attention[l].size(); ++h)
          worst = std::max(worst, max_abs_diff(a.attention[l][h], b.attention[l][h]));
      EXPECT_LE(worst, 1e-4f);
      EXPECT_LE(max_abs_diff(a.final_hidden, b.final_hidden), 1e-4f);
      const std::vector<Prediction> a_top = DecoderNetwork::top_predictions(a.logits, 0, 10);
      const std::vector<Prediction> b_top = DecoderNetwork::top_predictions(b.logits, 0, 10);
      EXPECT_EQ(a_top[0].id, b_top[0].id);
      EXPECT_NEAR(a_top[0].probability, b_top[0].probability, 1e-4f);
      // Rows sum to 1 and the causal part is exactly 0.
      const Matrix& w = b.attention[1][1];
      for (int i = 0; i < n; ++i) {
        EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f);
        for (int j = i + 1; j < n; ++j) EXPECT_EQ(w(i, j), 0.0f);
      }
    }
  }
}

TEST(TransformerOpenGlEquivalence, BertMatchesTheCpu) {
  const auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (const char* name : {"bert-tiny-uncased-f32", "bert-tiny-uncased-f16"}) {
    const BertNetwork net = BertNetwork::load(fs::path(ATTNSCOPE_FIXTURES) / name);
    for (int n : {2, 9, 64}) {
      SCOPED_TRACE(testing::Message() << name << " n=" << n);
      std::vector<int> ids = sequence(n, net.config().vocab, n);
      ids.front() = 101;
      ids.back() = 102;
      BertOutputs a_out, b_out;
      const AttentionTrace a = net.forward_ids(ids, *cpu, &a_out);
      const AttentionTrace b = net.forward_ids(ids, *gl, &b_out);
      EXPECT_LE(worst_attention_diff(a, b), 1e-4f);
      EXPECT_LE(max_abs_diff(a_out.last_hidden, b_out.last_hidden), 1e-4f);
    }
  }
}

// The encoders after BERT (issue 24): RoBERTa's positions after padding_idx (a padding id inside
// the text), XLM-R in BF16, DistilBERT without token types.
TEST(TransformerOpenGlEquivalence, EncoderFamiliesMatchTheCpu) {
  const auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (const char* name : {"roberta-tiny", "xlm-roberta-tiny", "distilbert-tiny"}) {
    const BertNetwork net = BertNetwork::load(fs::path(ATTNSCOPE_FIXTURES) / name);
    const bool roberta = net.config().position_padding_idx >= 0;
    for (int n : {2, 9, 64}) {
      SCOPED_TRACE(testing::Message() << name << " n=" << n);
      std::vector<int> ids = sequence(n, net.config().vocab, n);
      ids.front() = roberta ? 0 : 101;
      ids.back() = roberta ? 2 : 102;
      if (n > 4) ids[n / 2] = roberta ? 1 : 0;  // <pad> / [PAD]
      BertOutputs a_out, b_out;
      const AttentionTrace a = net.forward_ids(ids, *cpu, &a_out);
      const AttentionTrace b = net.forward_ids(ids, *gl, &b_out);
      EXPECT_EQ(b.model.kind, net.config().kind);
      float worst = 0;
      for (int l = 0; l < a.layers(); ++l)
        for (int h = 0; h < a.heads(); ++h)
          worst = std::max(worst, max_abs_diff(a.attention[l][h], b.attention[l][h]));
      EXPECT_LE(worst, 1e-4f);
      EXPECT_LE(max_abs_diff(a_out.last_hidden, b_out.last_hidden), 1e-4f);
    }
  }
}

TEST(TransformerOpenGlEquivalence, LessonModelMatchesTheCpu) {
  const auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (bool mask_self : {true, false}) {
    LessonOptions options;
    options.mask_self = mask_self;
    const auto model = make_lesson_model(options);
    const std::string text = "she sat by the bank of the river and watched the water";
    const AttentionTrace a = model->run(text, *cpu);
    const AttentionTrace b = model->run(text, *gl);
    EXPECT_EQ(b.backend, "opengl");
    EXPECT_LE(worst_attention_diff(a, b), 1e-5f) << "mask_self=" << mask_self;
  }
}

// The weights are uploaded once per backend and reused: a second run gives the same numbers, also
// after the CPU ran in between.
TEST(TransformerOpenGlEquivalence, RepeatedRunsAgree) {
  const auto gl = opengl_or_fail();
  ASSERT_TRUE(gl);
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  const DecoderNetwork net =
      test::load_decoder_folder(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32");
  const std::vector<int> ids = sequence(12, net.spec().vocab, 3);
  auto run = [&](Backend& backend) {
    KvCache cache;
    return net.forward(ids, cache, backend);
  };
  const DecoderOutputs a = run(*gl);
  const DecoderOutputs c = run(*cpu);  // switch backends in between
  const DecoderOutputs b = run(*gl);
  EXPECT_EQ(max_abs_diff(a.attention[1][1], b.attention[1][1]), 0.0f);
  EXPECT_LE(max_abs_diff(a.attention[1][1], c.attention[1][1]), 1e-4f);
}

}  // namespace
}  // namespace attnscope
