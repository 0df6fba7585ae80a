// GPT-2 on the decoder seam (core/model/decoder: the gpt2 family's DecoderSpec, GPT-2's tensor
// names) against golden data from an independent PyTorch implementation
// (tools/reference/hf_reference.py, float64) on the tiny fixture models
// (tools/make_fixture_models); then the whole model (tokenizer + network), its JSON trace, and
// generation with the KV cache against one full forward pass.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_model.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/trace/json_writer.h"
#include "core/util/error.h"
#include "tests/common/decoder_fixture.h"
#include "tests/common/golden.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
constexpr float kTolerance = 1e-4f;

using test::golden;
using test::max_abs_diff;
using test::to_matrix;

// Through the family registry, as the app opens it (config.json's model_type "gpt2").
DecoderNetwork load_network(const std::string& name) {
  return test::load_decoder_folder(fs::path(ATTNSCOPE_FIXTURES) / name);
}

DecoderOutputs forward(const DecoderNetwork& net, const std::vector<int>& ids, Backend& backend,
                       DecoderRequest request = {}) {
  KvCache cache;
  return net.forward(ids, cache, backend, request);
}

class Gpt2GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Gpt2GoldenTest, MatchesPytorchReference) {
  const std::string name = GetParam();
  const DecoderNetwork net = load_network(name);
  const auto backend = make_cpu_backend();
  const nlohmann::json g = golden(name);
  ASSERT_FALSE(g["cases"].empty());
  float worst_attention = 0, worst_hidden = 0, worst_logit = 0;
  for (const auto& c : g["cases"]) {
    const std::vector<int> ids = c["ids"].get<std::vector<int>>();
    DecoderRequest request;
    request.all_logits = true;  // every row of the final hidden state, as the reference keeps
    request.keep_final_hidden = true;
    const DecoderOutputs out = forward(net, ids, *backend, request);
    const int n = static_cast<int>(ids.size());
    ASSERT_EQ(out.attention.size(), 2u);
    ASSERT_EQ(out.attention[0].size(), 4u);
    for (int l = 0; l < 2; ++l) {
      for (int h = 0; h < 4; ++h) {
        const Matrix& a = out.attention[l][h];
        worst_attention =
            std::max(worst_attention, max_abs_diff(a, to_matrix(c["attention"][l][h])));
        for (int i = 0; i < n; ++i) {
          EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5f);
          for (int j = i + 1; j < n; ++j) EXPECT_EQ(a(i, j), 0.0f) << "causal mask leaks";
        }
      }
    }
    worst_hidden =
        std::max(worst_hidden, max_abs_diff(out.final_hidden, to_matrix(c["final_hidden"])));
    const auto logit_ids = c["logit_ids"].get<std::vector<int>>();
    for (std::size_t i = 0; i < logit_ids.size(); ++i)
      worst_logit = std::max(
          worst_logit, std::abs(out.logits(n - 1, logit_ids[i]) - c["logits"][i].get<float>()));
    const std::vector<Prediction> top = DecoderNetwork::top_predictions(out.logits, n - 1, 10);
    ASSERT_EQ(top.size(), 10u);
    const auto top_ids = c["top_ids"].get<std::vector<int>>();
    for (int i = 0; i < 10; ++i) {
      EXPECT_EQ(top[i].id, top_ids[i]) << "rank " << i;
      EXPECT_NEAR(top[i].probability, c["top_probabilities"][i].get<float>(), kTolerance);
    }
  }
  EXPECT_LE(worst_attention, kTolerance);
  EXPECT_LE(worst_hidden, kTolerance);
  EXPECT_LE(worst_logit, kTolerance);
  std::cout << name << ": max |diff| vs PyTorch: attention " << worst_attention << ", ln_f hidden "
            << worst_hidden << ", logits " << worst_logit << "\n";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Gpt2GoldenTest,
                         ::testing::Values("gpt2-tiny-f32", "gpt2-tiny-f16", "gpt2-tiny-bf16"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

TEST(Gpt2SpecTest, ReadsConfig) {
  const DecoderSpec s = load_network("gpt2-tiny-f32").spec();
  EXPECT_EQ(s.kind, "gpt2");
  EXPECT_EQ(s.layers, 2);
  EXPECT_EQ(s.heads, 4);
  EXPECT_EQ(s.kv_heads, 4);
  EXPECT_EQ(s.hidden, 32);
  EXPECT_EQ(s.ff, 128);  // n_inner null -> 4·d
  EXPECT_EQ(s.max_positions, 64);
  EXPECT_EQ(s.vocab, 50257);
  EXPECT_EQ(s.norm, NormKind::kLayer);
  EXPECT_EQ(s.positions, PositionKind::kLearned);
  EXPECT_FALSE(s.gated_mlp);
  EXPECT_EQ(s.activation, MlpActivation::kGeluTanh);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_FLOAT_EQ(s.attention_scale, 1.0f / std::sqrt(8.0f));
}

TEST(Gpt2SpecTest, OldConfigsAreFoundByArchitecture) {
  // Configs older than model_type name only the class; the kind is still "gpt2".
  const nlohmann::json config = {{"architectures", {"GPT2LMHeadModel"}},
                                 {"n_layer", 1},
                                 {"n_head", 2},
                                 {"n_embd", 8},
                                 {"vocab_size", 10}};
  const DecoderSpec s = decoder_spec_of(config, "old/config.json");
  EXPECT_EQ(s.kind, "gpt2");
  EXPECT_EQ(s.max_positions, 1024);  // n_positions, n_ctx absent: GPT-2's 1024
  nlohmann::json silu = config;
  silu["activation_function"] = "silu";
  EXPECT_THROW(decoder_spec_of(silu, "old/config.json"), ModelError);
  nlohmann::json by_layer = config;
  by_layer["scale_attn_by_inverse_layer_idx"] = true;
  EXPECT_THROW(decoder_spec_of(by_layer, "old/config.json"), ModelError);
}

TEST(Gpt2NetworkTest, PrefixIsOptional) {
  // gpt2-tiny-f16 is saved the GPT2LMHeadModel way ("transformer." + lm_head), f32 without.
  const auto backend = make_cpu_backend();
  const std::vector<int> ids = {1, 2, 3};
  const DecoderOutputs a = forward(load_network("gpt2-tiny-f16"), ids, *backend);
  const DecoderOutputs b = forward(load_network("gpt2-tiny-f32"), ids, *backend);
  // Same random model, stored at another precision: close but not identical.
  const float d = max_abs_diff(a.attention[1][3], b.attention[1][3]);
  EXPECT_GT(d, 0.0f);
  EXPECT_LT(d, 0.05f);
}

TEST(Gpt2NetworkTest, EmptyInputGivesEmptyHeads) {
  const auto backend = make_cpu_backend();
  const DecoderOutputs out = forward(load_network("gpt2-tiny-f32"), {}, *backend);
  ASSERT_EQ(out.attention.size(), 2u);
  ASSERT_EQ(out.attention[1].size(), 4u);
  EXPECT_EQ(out.attention[1][3].size(), 0);
  EXPECT_EQ(out.logits.size(), 0);
}

// The formula view's steps (Q, K, Q·Kᵀ, scaled, weights, output) for every layer and head of a
// short input, consistent with each other and with the attention.
TEST(Gpt2NetworkTest, KeepsFormulaStepsForShortInputs) {
  const auto backend = make_cpu_backend();
  const DecoderNetwork net = load_network("gpt2-tiny-f32");
  const std::vector<int> ids = {15496, 995, 11, 340, 318};
  DecoderRequest request;
  request.keep_steps = true;
  const DecoderOutputs t = forward(net, ids, *backend, request);
  const int layers = 2, heads = 4;
  ASSERT_EQ(t.steps.size(), static_cast<size_t>(layers * heads));
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) {
      const HeadSteps& s = t.steps[l * heads + h];
      const int n = static_cast<int>(ids.size()), dh = static_cast<int>(s.q.cols());
      ASSERT_EQ(s.q.rows(), n);
      const Matrix scores = s.q * s.k.transpose();
      EXPECT_LT(max_abs_diff(s.scores, scores), 1e-5f);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          if (j > i) {
            EXPECT_TRUE(std::isinf(s.scaled(i, j)) && s.scaled(i, j) < 0);  // causal mask
          } else {
            EXPECT_NEAR(s.scaled(i, j), scores(i, j) / std::sqrt(float(dh)), 1e-5f);
          }
        }
      EXPECT_LT(max_abs_diff(s.weights, t.attention[l][h]), 1e-7f);
      EXPECT_LT(max_abs_diff(s.output, s.weights * s.v), 1e-5f);
    }
}

TEST(Gpt2NetworkTest, RejectsBadIds) {
  const auto backend = make_cpu_backend();
  const DecoderNetwork net = load_network("gpt2-tiny-f32");
  EXPECT_THROW(forward(net, {50257}, *backend), UsageError);
  EXPECT_THROW(forward(net, {-1}, *backend), UsageError);
  EXPECT_THROW(forward(net, std::vector<int>(65, 1), *backend), UsageError);
  EXPECT_NO_THROW(forward(net, std::vector<int>(64, 1), *backend));  // exactly n_positions
}

// The gpt2 family's loader for test::BrokenFolderTest (the configs there carry no model_type).
struct Gpt2Loader {
  static DecoderNetwork load(const fs::path& dir) {
    return DecoderNetwork::load(dir, gpt2_spec(read_model_config(dir), dir / "config.json"));
  }
};

class Gpt2BrokenFolderTest : public test::BrokenFolderTest<Gpt2Loader> {
 protected:
  Gpt2BrokenFolderTest() : BrokenFolderTest("gpt2-tiny-f32", "gpt2") {}
  nlohmann::json config() const {
    return {{"n_layer", 2}, {"n_head", 4}, {"n_embd", 32}, {"n_positions", 64}};
  }
};

TEST_F(Gpt2BrokenFolderTest, GoodConfigLoads) {
  EXPECT_EQ(load_error(config()), "(no error)");
}

TEST_F(Gpt2BrokenFolderTest, MissingTensorIsNamed) {
  nlohmann::json c = config();
  c["n_layer"] = 3;
  EXPECT_NE(load_error(c).find("'h.2.ln_1.weight' is missing"), std::string::npos) << load_error(c);
}

TEST_F(Gpt2BrokenFolderTest, WrongShapeIsNamed) {
  nlohmann::json c = config();
  c["n_embd"] = 64;
  c["n_head"] = 8;
  EXPECT_NE(load_error(c).find("'wte.weight' has shape [50257 x 32], expected [50257 x 64]"),
            std::string::npos)
      << load_error(c);
}

TEST_F(Gpt2BrokenFolderTest, MissingConfigKeyIsNamed) {
  nlohmann::json c = config();
  c.erase("n_head");
  EXPECT_NE(load_error(c).find("'n_head'"), std::string::npos) << load_error(c);
}

TEST_F(Gpt2BrokenFolderTest, MissingWeightsFile) {
  fs::remove(dir_ / "model.safetensors");
  EXPECT_NE(load_error(config()).find("model.safetensors"), std::string::npos);
}

// ---- the whole model: tokenizer + forward (needs scripts/fetch_test_data.sh's vocabulary) ----

fs::path model_folder(const std::string& name) {
  const fs::path f = fs::path(ATTNSCOPE_FIXTURES) / name;
  return fs::exists(f / "vocab.json") ? f : fs::path();
}
#define REQUIRE_VOCAB(folder) \
  if ((folder).empty())       \
  GTEST_SKIP() << "GPT-2 vocabulary missing: run scripts/fetch_test_data.sh, then rebuild"

TEST(Gpt2ModelTest, TextToTraceMatchesPytorchReference) {
  const fs::path folder = model_folder("gpt2-tiny-f32");
  REQUIRE_VOCAB(folder);
  double last_progress = -1;
  const auto model =
      open_model(folder.string(), [&](double f, const std::string&) { last_progress = f; });
  EXPECT_EQ(last_progress, 1.0);
  EXPECT_EQ(model->info().name, "gpt2-tiny-f32");
  EXPECT_EQ(model->info().kind, "gpt2");
  EXPECT_EQ(model->info().layers, 2);
  EXPECT_EQ(model->info().heads, 4);

  const auto backend = make_cpu_backend();
  const std::string text = "The cat sat on the mat.";
  const AttentionTrace t = model->run(text, *backend);
  const nlohmann::json c = golden("gpt2-tiny-f32")["cases"][0];  // the ids of this very sentence
  ASSERT_EQ(t.tokens.size(), c["ids"].size());
  for (std::size_t i = 0; i < t.tokens.size(); ++i) {
    EXPECT_EQ(t.tokens[i].id, c["ids"][i].get<int>());
    EXPECT_FALSE(t.tokens[i].special);
  }
  EXPECT_EQ(t.tokens[1].start, 3);  // " cat"
  EXPECT_EQ(t.tokens[1].end, 7);
  EXPECT_EQ(t.text, text);
  EXPECT_EQ(t.backend, "cpu");
  EXPECT_EQ(t.model.name, "gpt2-tiny-f32");
  EXPECT_EQ(t.truncated_at_byte, -1);
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h)
      EXPECT_LE(max_abs_diff(t.attention[l][h], to_matrix(c["attention"][l][h])), kTolerance);
  ASSERT_EQ(t.predictions.size(), 10u);
  EXPECT_EQ(t.predictions[0].id, c["top_ids"][0].get<int>());
  for (const Prediction& p : t.predictions) EXPECT_FALSE(p.text.empty()) << p.id;
  // Token 13 is "." and 198 is a newline: decode gives the bytes, not the byte-level alphabet.
  EXPECT_EQ(model->tokenize(" .")[0].text, "\xc4\xa0.");  // "Ġ." as Hugging Face shows it
}

TEST(Gpt2ModelTest, LongTextIsTruncatedToPositions) {
  const fs::path folder = model_folder("gpt2-tiny-f32");
  REQUIRE_VOCAB(folder);
  const auto model = open_model(folder.string());
  const auto backend = make_cpu_backend();
  std::string text;
  for (int i = 0; i < 100; ++i) text += " a";  // 100 tokens " a"
  const AttentionTrace t = model->run(text, *backend);
  ASSERT_EQ(t.tokens.size(), 64u);
  EXPECT_EQ(t.truncated_at_byte, 128);  // where the 65th " a" starts
  EXPECT_EQ(t.attention[1][0].rows(), 64);
}

TEST(Gpt2ModelTest, OddTextNeverThrows) {
  const fs::path folder = model_folder("gpt2-tiny-f32");
  REQUIRE_VOCAB(folder);
  const auto model = open_model(folder.string());
  const auto backend = make_cpu_backend();
  const AttentionTrace empty = model->run("", *backend);
  EXPECT_TRUE(empty.tokens.empty());
  EXPECT_EQ(empty.layers(), 2);
  const AttentionTrace bad = model->run(std::string("ok \xff\xfe \xf0\x9f\x98"), *backend);
  EXPECT_FALSE(bad.tokens.empty());
  for (const Prediction& p : bad.predictions) EXPECT_FALSE(p.text.empty());
}

TEST(Gpt2ModelTest, HubCacheFolderIsNamedByRepo) {
  const fs::path folder = model_folder("gpt2-tiny-f32");
  REQUIRE_VOCAB(folder);
  const fs::path root = fs::temp_directory_path() / ("attnscope_hub_" + std::to_string(getpid()));
  const fs::path snap = root / "models--tiny-org--gpt2-tiny" / "snapshots" / "0123abc";
  fs::create_directories(snap);
  for (const char* f : {"config.json", "model.safetensors", "vocab.json", "merges.txt"})
    fs::create_symlink(folder / f, snap / f);
  EXPECT_EQ(open_model(snap.string())->info().name, "tiny-org/gpt2-tiny");
  fs::remove_all(root);
}

TEST(Gpt2ModelTest, MissingTokenizerIsAModelError) {
  const fs::path dir = fs::temp_directory_path() / ("attnscope_notok_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32" / "config.json",
                dir / "config.json");
  try {
    load_decoder_model(dir, gpt2_spec(read_model_config(dir), dir / "config.json"), {});
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// The JSON trace keeps GPT-2's keys: no kv_heads (plain multi-head attention), kind "gpt2".
TEST(Gpt2ModelTest, JsonTraceKeepsItsModelKeys) {
  const fs::path folder = model_folder("gpt2-tiny-f32");
  REQUIRE_VOCAB(folder);
  const auto model = open_model(folder.string());
  const auto backend = make_cpu_backend();
  std::ostringstream out;
  write_trace_json(model->run("The cat sat on the mat.", *backend), out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(
      doc["model"],
      nlohmann::json({{"name", "gpt2-tiny-f32"}, {"kind", "gpt2"}, {"layers", 2}, {"heads", 4}}));
  EXPECT_EQ(doc["format"], "attnscope-trace/1");
  EXPECT_EQ(doc["predictions"].size(), 10u);
}

// Longer inputs keep only q, k, v (no n x n step matrix): the formula view computes the selected
// query's row from them (core/trace/query_row.h).
TEST(Gpt2ModelTest, LongInputsKeepOnlyVectorSteps) {
  const fs::path folder = model_folder("gpt2-tiny-f32");
  REQUIRE_VOCAB(folder);
  const auto model = open_model(folder.string());
  const auto backend = make_cpu_backend();
  std::string text;
  for (int i = 0; i <= kStepsMaxTokens; ++i) text += " a";
  const AttentionTrace t = model->run(text, *backend);
  const int n = kStepsMaxTokens + 1;
  ASSERT_EQ(static_cast<int>(t.tokens.size()), n);
  ASSERT_EQ(t.steps.size(), static_cast<size_t>(t.layers() * t.heads()));
  for (const HeadSteps& s : t.steps) {
    EXPECT_EQ(s.q.rows(), n);
    EXPECT_EQ(s.k.rows(), n);
    EXPECT_EQ(s.v.rows(), n);
    EXPECT_EQ(s.scores.size(), 0);
    EXPECT_EQ(s.weights.size(), 0);
  }
}

// GPT-2 generates through the KV cache: each step's attention row and next-token predictions
// equal those of one full forward pass over the same ids.
TEST(Gpt2ModelTest, GenerationWithTheCacheEqualsAFullForward) {
  const fs::path folder = model_folder("gpt2-tiny-f32");
  REQUIRE_VOCAB(folder);
  const auto model = open_model(folder.string());
  ASSERT_TRUE(model->info().capabilities.generation);
  const auto backend = make_cpu_backend();
  GenerationOptions o;
  o.max_new_tokens = 8;
  auto gen = model->start_generation("The cat sat on the mat.", *backend, o);
  const int prompt = static_cast<int>(gen->trace().tokens.size());
  std::vector<GenerationStep> steps;
  while (!gen->done()) steps.push_back(gen->step());
  ASSERT_EQ(steps.size(), 8u);
  const AttentionTrace& t = gen->trace();
  ASSERT_EQ(static_cast<int>(t.tokens.size()), prompt + 8);
  const DecoderNetwork net = load_network("gpt2-tiny-f32");
  DecoderRequest all;
  all.all_logits = true;
  const DecoderOutputs full = forward(net, token_ids(t.tokens), *backend, all);
  float worst_attention = 0, worst_probability = 0;
  for (int l = 0; l < t.layers(); ++l)
    for (int h = 0; h < t.heads(); ++h)
      worst_attention =
          std::max(worst_attention, max_abs_diff(t.attention[l][h], full.attention[l][h]));
  for (int i = 0; i < 8; ++i) {
    // Step i chose token prompt + i from the logits of position prompt + i - 1.
    const std::vector<Prediction> want =
        DecoderNetwork::top_predictions(full.logits, prompt + i - 1, 10);
    ASSERT_EQ(steps[i].predictions.size(), want.size());
    EXPECT_EQ(steps[i].token.id, want[0].id) << "greedy step " << i;
    EXPECT_TRUE(t.tokens[prompt + i].generated);
    for (std::size_t r = 0; r < want.size(); ++r)
      worst_probability = std::max(
          worst_probability, std::abs(steps[i].predictions[r].probability - want[r].probability));
  }
  EXPECT_LE(worst_attention, 1e-5f);
  EXPECT_LE(worst_probability, 1e-5f);
}

}  // namespace
}  // namespace attnscope
