// The decoder families (tests/common/decoder_fixture_table.h) against golden data
// from an independent float64 PyTorch reference (tools/reference/hf_decoder_reference.py) on the
// tiny fixtures (tools/make_fixture_models/decoder_fixtures.cpp): attention of every query head,
// the rotated q and k the formula view shows, logits and predictions. Then the KV cache:
// generating step by step equals one forward pass over the whole sequence (GPT-2 too, whose
// golden tests are gpt2_test.cpp's).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/error.h"
#include "tests/common/decoder_fixture.h"
#include "tests/common/decoder_fixture_table.h"
#include "tests/common/golden.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
constexpr float kTolerance = 1e-4f;
using test::golden;
using test::max_abs_diff;
using test::to_matrix;

const std::vector<std::string> kFixtures = test::family_fixtures();

DecoderSpec spec_of(const fs::path& folder) {
  return test::decoder_spec_of_folder(folder);
}

DecoderNetwork load_network(const std::string& name) {
  const fs::path folder = fs::path(ATTNSCOPE_FIXTURES) / name;
  return DecoderNetwork::load(folder, spec_of(folder));
}

class DecoderGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderGoldenTest, MatchesFloat64Reference) {
  const std::string name = GetParam();
  const DecoderNetwork net = load_network(name);
  const DecoderSpec& s = net.spec();
  const auto backend = make_cpu_backend();
  const nlohmann::json g = golden(name);
  ASSERT_FALSE(g["cases"].empty());
  float worst_attention = 0, worst_logit = 0, worst_qk = 0;
  for (const auto& c : g["cases"]) {
    const std::vector<int> ids = c["ids"].get<std::vector<int>>();
    const int n = static_cast<int>(ids.size());
    KvCache cache;
    DecoderRequest request;
    request.all_logits = true;
    request.keep_steps = true;
    const DecoderOutputs out = net.forward(ids, cache, *backend, request);
    ASSERT_EQ(static_cast<int>(out.attention.size()), s.layers);
    ASSERT_EQ(static_cast<int>(out.steps.size()), s.layers * s.heads);
    for (int l = 0; l < s.layers; ++l) {
      for (int h = 0; h < s.heads; ++h) {
        const Matrix& a = out.attention[l][h];
        worst_attention =
            std::max(worst_attention, max_abs_diff(a, to_matrix(c["attention"][l][h])));
        for (int i = 0; i < n; ++i) EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5f);
        // The formula steps: the rotated q of this head and k of the KV head it shares.
        const HeadSteps& st = out.steps[l * s.heads + h];
        EXPECT_EQ(st.kv_head, h / (s.heads / s.kv_heads));
        EXPECT_FLOAT_EQ(st.scale, s.attention_scale);
        worst_qk = std::max(worst_qk, max_abs_diff(st.q, to_matrix(c["q"][l][h])));
        worst_qk = std::max(worst_qk, max_abs_diff(st.k, to_matrix(c["k"][l][st.kv_head])));
        EXPECT_LT(max_abs_diff(st.weights, a), 1e-6f);
      }
    }
    const auto logit_ids = c["logit_ids"].get<std::vector<int>>();
    ASSERT_EQ(out.logits.rows(), n);
    for (int i = 0; i < n; ++i)
      for (std::size_t j = 0; j < logit_ids.size(); ++j)
        worst_logit = std::max(
            worst_logit, std::abs(out.logits(i, logit_ids[j]) - c["logits"][i][j].get<float>()));
    const std::vector<Prediction> top = DecoderNetwork::top_predictions(out.logits, n - 1, 10);
    const auto top_ids = c["top_ids"].get<std::vector<int>>();
    for (int i = 0; i < 10; ++i) {
      EXPECT_NEAR(top[i].probability, c["top_probabilities"][i].get<float>(), kTolerance);
      // Ranks may swap only between near-equal probabilities.
      if (top[i].id != top_ids[i]) {
        EXPECT_NEAR(top[i].probability, c["top_probabilities"][i].get<float>(), 1e-6f);
      }
    }
  }
  EXPECT_LE(worst_attention, kTolerance);
  EXPECT_LE(worst_logit, kTolerance);
  EXPECT_LE(worst_qk, kTolerance);
  std::cout << name << ": max |diff| vs float64 PyTorch: attention " << worst_attention
            << ", logits " << worst_logit << ", rotated q/k " << worst_qk << "\n";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecoderGoldenTest, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

// Running the sequence in pieces through the KV cache (a prompt, then one token at a time) gives
// the same attention rows and logits as one forward pass over all of it.
class DecoderCacheTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderCacheTest, StepByStepEqualsFullForward) {
  const DecoderNetwork net = load_network(GetParam());
  const DecoderSpec& s = net.spec();
  const auto backend = make_cpu_backend();
  std::vector<int> ids;
  for (int i = 0; i < 13; ++i) ids.push_back((i * 7919 + 13) % 32000);
  KvCache full_cache;
  DecoderRequest all;
  all.all_logits = true;
  const DecoderOutputs full = net.forward(ids, full_cache, *backend, all);
  KvCache cache;
  const int prompt = 5;
  const DecoderOutputs first =
      net.forward(std::vector<int>(ids.begin(), ids.begin() + prompt), cache, *backend);
  float worst_logit = std::abs(first.logits(0, 7) - full.logits(prompt - 1, 7));
  float worst_row = 0;
  for (int i = prompt; i < static_cast<int>(ids.size()); ++i) {
    const DecoderOutputs step = net.forward({ids[i]}, cache, *backend);
    ASSERT_EQ(cache.length(), i + 1);
    for (int l = 0; l < s.layers; ++l)
      for (int h = 0; h < s.heads; ++h) {
        const Matrix& row = step.attention[l][h];
        ASSERT_EQ(row.rows(), 1);
        ASSERT_EQ(row.cols(), i + 1);
        const Matrix expected = full.attention[l][h].block(i, 0, 1, i + 1);
        worst_row = std::max(worst_row, max_abs_diff(row, expected));
      }
    worst_logit =
        std::max(worst_logit, (step.logits.row(0) - full.logits.row(i)).cwiseAbs().maxCoeff());
  }
  EXPECT_LE(worst_row, 1e-5f);
  // Float rounding relative to the logits' size (the tied fixtures' logits reach tens).
  EXPECT_LE(worst_logit, 1e-5f * (1 + full.logits.cwiseAbs().maxCoeff()));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecoderCacheTest, ::testing::ValuesIn(test::decoder_fixtures()),
                         test::FixtureTestName());

TEST(DecoderSpecTest, FamiliesReadTheirConfig) {
  const DecoderSpec gemma2 = spec_of(fs::path(ATTNSCOPE_FIXTURES) / "gemma2-tiny");
  EXPECT_EQ(gemma2.layer[0].window, 4);  // sliding, global, sliding
  EXPECT_EQ(gemma2.layer[1].window, 0);
  EXPECT_EQ(gemma2.layer[2].window, 4);
  EXPECT_FLOAT_EQ(gemma2.attention_scale, 1.0f / std::sqrt(12.0f));
  EXPECT_FLOAT_EQ(gemma2.attention_softcap, 2.0f);
  EXPECT_TRUE(gemma2.tied_embeddings);
  const DecoderSpec gemma3 = spec_of(fs::path(ATTNSCOPE_FIXTURES) / "gemma3-tiny");
  EXPECT_TRUE(gemma3.layer[0].local_rope);
  EXPECT_FALSE(gemma3.layer[1].local_rope);
  EXPECT_EQ(gemma3.eos_ids, (std::vector<int>{1, 106}));
  // Global layers: 1e6 base with linear factor 8; local: 1e4, unscaled.
  EXPECT_NEAR(gemma3.rope.inv_freq[0], 1.0f / 8, 1e-7f);
  EXPECT_NEAR(gemma3.rope_local.inv_freq[1], std::pow(10000.0, -2.0 / 16), 1e-7);
  const DecoderSpec qwen3 = spec_of(fs::path(ATTNSCOPE_FIXTURES) / "qwen3-tiny");
  EXPECT_EQ(qwen3.head_dim, 16);
  EXPECT_TRUE(qwen3.qk_norm);
}

TEST(DecoderSpecTest, UnsupportedRopeScalingIsNamed) {
  nlohmann::json config = {{"model_type", "llama"},
                           {"num_hidden_layers", 1},
                           {"hidden_size", 8},
                           {"num_attention_heads", 2},
                           {"intermediate_size", 8},
                           {"vocab_size", 10},
                           {"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}}};
  try {
    llama_spec(config, "x/config.json");
    FAIL() << "yarn accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("x/config.json: rope_scaling type 'yarn'"),
              std::string::npos)
        << e.what();
  }
  config.erase("rope_scaling");
  config["num_key_value_heads"] = 3;
  EXPECT_THROW(llama_spec(config, "x/config.json"), ModelError);  // 2 heads, 3 KV heads
}

TEST(DecoderNetworkTest, ShardedCheckpointFindsEveryTensor) {
  const Checkpoint c = Checkpoint::open(fs::path(ATTNSCOPE_FIXTURES) / "mistral-tiny");
  EXPECT_TRUE(c.has("model.embed_tokens.weight"));
  EXPECT_TRUE(c.has("lm_head.weight"));
  EXPECT_NE(c.file_of("model.embed_tokens.weight"), c.file_of("model.norm.weight"));
}

TEST(DecoderNetworkTest, IdOutsideVocabularyIsAUsageError) {
  const DecoderNetwork net = load_network("llama-tiny");
  const auto backend = make_cpu_backend();
  KvCache cache;
  EXPECT_THROW(net.forward({1, 128256}, cache, *backend), UsageError);
  EXPECT_EQ(cache.length(), 0);
}

// The decoder families come from one registry: a model_type outside it is named in the error.
TEST(DecoderSpecOf, FindsTheFamilyByModelTypeAndNamesAnUnknownOne) {
  const fs::path llama = fs::path(ATTNSCOPE_FIXTURES) / "llama-tiny";
  const DecoderSpec spec = decoder_spec_of(read_model_config(llama), llama / "config.json");
  EXPECT_EQ(spec.layers, read_model_config(llama)["num_hidden_layers"].get<int>());
  const fs::path gpt2 = fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32";
  EXPECT_EQ(decoder_spec_of(read_model_config(gpt2), gpt2 / "config.json").kind, "gpt2");
  for (const char* type : {"bert", "mamba"}) {
    try {
      decoder_spec_of({{"model_type", type}}, "m/config.json");
      ADD_FAILURE() << type << " accepted as a decoder family";
    } catch (const ModelError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("m/config.json"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string("\"") + type + "\""), std::string::npos) << what;
      EXPECT_NE(what.find("qwen3"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace attnscope
