// The encoder–decoder fixtures (bart-tiny, marian-tiny, t5-tiny, flan-t5-tiny; issue 24) on the
// opengl backend against the CPU: the encoder's, decoder's and cross-attention of every layer and
// head and the logits, for a whole target and then step by step through each backend's KV cache.
// The same network code runs on both (core/model/seq2seq), so only the ops may differ; the CPU's
// own tests hold it to the float64 goldens. T5's relative position bias runs through matmul with
// beta = 1 over a copied bias, Marian's silu through gated_activation: both checked here. Runs in
// CI on llvmpipe; a missing OpenGL fails, never skips (a fixture not yet built is skipped).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/seq2seq/seq2seq_network.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return a.size() ? (a - b).cwiseAbs().maxCoeff() : 0.0f;
}

float worst(const std::vector<std::vector<Matrix>>& a, const std::vector<std::vector<Matrix>>& b) {
  EXPECT_EQ(a.size(), b.size());
  float w = 0;
  for (std::size_t l = 0; l < a.size() && l < b.size(); ++l) {
    EXPECT_EQ(a[l].size(), b[l].size());
    for (std::size_t h = 0; h < a[l].size() && h < b[l].size(); ++h)
      w = std::max(w, max_abs_diff(a[l][h], b[l][h]));
  }
  return w;
}

class Seq2SeqOpenGlEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(Seq2SeqOpenGlEquivalence, AttentionAndLogitsMatchTheCpu) {
  const fs::path folder = fs::path(ATTNSCOPE_FIXTURES) / GetParam();
  if (!fs::exists(folder / "model.safetensors")) GTEST_SKIP() << "not built yet: " << folder;
  const OpenGlProbe probe = try_opengl_backend();
  ASSERT_TRUE(probe.backend) << "the opengl backend does not work here: " << probe.why;
  Backend& gl = *probe.backend;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  const nlohmann::json config = read_model_config(folder);
  const HfFamily* family = find_hf_family(config);
  ASSERT_TRUE(family && family->seq2seq_spec);
  const Seq2SeqNetwork net =
      Seq2SeqNetwork::load(folder, family->seq2seq_spec(config, folder / "config.json"));
  const Seq2SeqSpec& s = net.spec();
  // 19 source tokens (T5's logarithmic buckets beyond 8 apart), 12 target tokens.
  std::vector<int> src, tgt{s.decoder_start_id};
  for (int i = 0; i < 19; ++i) src.push_back((i * 7919 + 29) % s.vocab);
  for (int i = 0; i < 11; ++i) tgt.push_back((i * 104729 + 13) % s.decoder_vocab);
  Seq2SeqState cs, gs;
  const Seq2SeqEncoderOutputs ec = net.encode(src, cs, *cpu), eg = net.encode(src, gs, gl);
  EXPECT_LE(worst(ec.attention, eg.attention), 1e-4f) << "encoder";
  Seq2SeqState cs_step = cs, gs_step = gs;
  const Seq2SeqDecoderOutputs dc = net.decode(tgt, cs, *cpu, true, true),
                              dg = net.decode(tgt, gs, gl, true, true);
  EXPECT_LE(worst(dc.attention, dg.attention), 1e-4f) << "decoder";
  EXPECT_LE(worst(dc.cross_attention, dg.cross_attention), 1e-4f) << "cross";
  EXPECT_LE(max_abs_diff(dg.logits, dc.logits), 1e-4f * (1 + dc.logits.cwiseAbs().maxCoeff()));
  for (std::size_t t = 0; t < 4; ++t) {
    SCOPED_TRACE(testing::Message() << "cached step " << t);
    const Seq2SeqDecoderOutputs c = net.decode({tgt[t]}, cs_step, *cpu, true, false);
    const Seq2SeqDecoderOutputs g = net.decode({tgt[t]}, gs_step, gl, true, false);
    EXPECT_LE(worst(c.attention, g.attention), 1e-4f);
    EXPECT_LE(worst(c.cross_attention, g.cross_attention), 1e-4f);
    EXPECT_LE(max_abs_diff(g.logits, c.logits), 1e-4f * (1 + c.logits.cwiseAbs().maxCoeff()));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Seq2SeqOpenGlEquivalence,
                         ::testing::Values("bart-tiny", "marian-tiny", "t5-tiny", "flan-t5-tiny"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace attnscope
