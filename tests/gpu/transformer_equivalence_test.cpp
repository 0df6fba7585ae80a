// GPT-2 (on the decoder network) and BERT on the CUDA backend against the CPU backend (and, through
// the CPU, the PyTorch golden data): the same model code runs on both, so only the ops may differ.
// Skipped (never passed) where no CUDA device exists. The CPU keeps to float arithmetic
// (CpuPrecision::kFloat): on an AMX host its default bf16x3 kernel would differ from float by about
// as much as 1e-4.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "core/model/bert/bert_network.h"
#include "core/model/decoder/decoder_network.h"
#include "tests/common/decoder_fixture.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols() || a.size() == 0) return a.size() ? INFINITY : 0;
  return (a - b).cwiseAbs().maxCoeff();
}

std::vector<int> sequence(int n, int vocab, int seed) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back((seed * 7919 + i * 104729) % vocab);
  return ids;
}

TEST(TransformerCudaEquivalence, Gpt2MatchesTheCpu) {
  std::string why;
  const auto cuda = try_cuda_backend(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (const char* name : {"gpt2-tiny-f32", "gpt2-tiny-bf16"}) {
    const DecoderNetwork net = test::load_decoder_folder(fs::path(ATTNSCOPE_FIXTURES) / name);
    for (int n : {1, 7, 64}) {  // 64 = n_positions
      const std::vector<int> ids = sequence(n, net.spec().vocab, n);
      DecoderRequest request;
      request.keep_final_hidden = true;
      KvCache a_cache, b_cache;
      const DecoderOutputs a = net.forward(ids, a_cache, *cpu, request);
      const DecoderOutputs b = net.forward(ids, b_cache, *cuda, request);
      float worst = 0;
      for (std::size_t l = 0; l < a.attention.size(); ++l)
        for (std::size_t h = 0; h < a.attention[l].size(); ++h)
          worst = std::max(worst, max_abs_diff(a.attention[l][h], b.attention[l][h]));
      EXPECT_LE(worst, 1e-4f) << name << " n=" << n;
      EXPECT_LE(max_abs_diff(a.final_hidden, b.final_hidden), 1e-4f) << name << " n=" << n;
      const std::vector<Prediction> a_top = DecoderNetwork::top_predictions(a.logits, 0, 10);
      const std::vector<Prediction> b_top = DecoderNetwork::top_predictions(b.logits, 0, 10);
      EXPECT_EQ(a_top[0].id, b_top[0].id) << name << " n=" << n;
      EXPECT_NEAR(a_top[0].probability, b_top[0].probability, 1e-4f);
      // Rows of the CUDA weights sum to 1 and the causal part is exactly 0.
      const Matrix& w = b.attention[1][2];
      for (int i = 0; i < n; ++i) {
        EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f);
        for (int j = i + 1; j < n; ++j) EXPECT_EQ(w(i, j), 0.0f);
      }
    }
  }
}

TEST(TransformerCudaEquivalence, BertMatchesTheCpu) {
  std::string why;
  const auto cuda = try_cuda_backend(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (const char* name : {"bert-tiny-uncased-f32", "bert-tiny-uncased-f16"}) {
    const BertNetwork net = BertNetwork::load(fs::path(ATTNSCOPE_FIXTURES) / name);
    for (int n : {2, 9, 64}) {
      std::vector<int> ids = sequence(n, net.config().vocab, n);
      ids.front() = 101;
      ids.back() = 102;
      BertOutputs a_out, b_out;
      const AttentionTrace a = net.forward_ids(ids, *cpu, &a_out);
      const AttentionTrace b = net.forward_ids(ids, *cuda, &b_out);
      float worst = 0;
      for (int l = 0; l < a.layers(); ++l)
        for (int h = 0; h < a.heads(); ++h)
          worst = std::max(worst, max_abs_diff(a.attention[l][h], b.attention[l][h]));
      EXPECT_LE(worst, 1e-4f) << name << " n=" << n;
      EXPECT_LE(max_abs_diff(a_out.last_hidden, b_out.last_hidden), 1e-4f) << name << " n=" << n;
    }
  }
}

// The encoders after BERT (issue 24): RoBERTa's positions after padding_idx (a padding id inside
// the text), XLM-R in BF16, DistilBERT without token types.
TEST(TransformerCudaEquivalence, EncoderFamiliesMatchTheCpu) {
  std::string why;
  const auto cuda = try_cuda_backend(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (const char* name : {"roberta-tiny", "xlm-roberta-tiny", "distilbert-tiny"}) {
    const BertNetwork net = BertNetwork::load(fs::path(ATTNSCOPE_FIXTURES) / name);
    const bool roberta = net.config().position_padding_idx >= 0;
    for (int n : {2, 9, 64}) {
      SCOPED_TRACE(::testing::Message() << name << " n=" << n);
      std::vector<int> ids = sequence(n, net.config().vocab, n);
      ids.front() = roberta ? 0 : 101;
      ids.back() = roberta ? 2 : 102;
      if (n > 4) ids[n / 2] = roberta ? 1 : 0;  // <pad> / [PAD]
      BertOutputs a_out, b_out;
      const AttentionTrace a = net.forward_ids(ids, *cpu, &a_out);
      const AttentionTrace b = net.forward_ids(ids, *cuda, &b_out);
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

// The weights are uploaded once per backend and reused: a second run gives the same numbers.
TEST(TransformerCudaEquivalence, RepeatedRunsAgree) {
  std::string why;
  const auto cuda = try_cuda_backend(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  const DecoderNetwork net =
      test::load_decoder_folder(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32");
  const std::vector<int> ids = sequence(12, net.spec().vocab, 3);
  auto run = [&](Backend& backend) {
    KvCache cache;
    return net.forward(ids, cache, backend);
  };
  const DecoderOutputs a = run(*cuda);
  const DecoderOutputs c = run(*cpu);  // switch backends in between
  const DecoderOutputs b = run(*cuda);
  EXPECT_EQ(max_abs_diff(a.attention[1][1], b.attention[1][1]), 0.0f);
  EXPECT_LE(max_abs_diff(a.attention[1][1], c.attention[1][1]), 1e-4f);
}

}  // namespace
}  // namespace attnscope
