// GPT-2 forward pass against golden data from an independent PyTorch implementation
// (tools/reference/hf_reference.py, float64) on the tiny fixture models
// (tools/make_fixture_models).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/gpt2/gpt2_model.h"
#include "core/model/gpt2/gpt2_network.h"
#include "core/util/error.h"
#include "tests/common/golden.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
constexpr float kTolerance = 1e-4f;

using test::golden;
using test::max_abs_diff;
using test::to_matrix;

class Gpt2GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Gpt2GoldenTest, MatchesPytorchReference) {
  const std::string name = GetParam();
  const Gpt2Network net = Gpt2Network::load(fs::path(ATTNSCOPE_FIXTURES) / name);
  const auto backend = make_cpu_backend();
  const nlohmann::json g = golden(name);
  ASSERT_FALSE(g["cases"].empty());
  float worst_attention = 0, worst_hidden = 0, worst_logit = 0;
  for (const auto& c : g["cases"]) {
    const std::vector<int> ids = c["ids"].get<std::vector<int>>();
    Gpt2Outputs out;
    const AttentionTrace t = net.forward_ids(ids, *backend, 10, &out);
    const int n = static_cast<int>(ids.size());
    ASSERT_EQ(t.layers(), 2);
    ASSERT_EQ(t.heads(), 4);
    for (int l = 0; l < 2; ++l) {
      for (int h = 0; h < 4; ++h) {
        const Matrix& a = t.attention[l][h];
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
      worst_logit = std::max(worst_logit,
                             std::abs(out.last_logits[logit_ids[i]] - c["logits"][i].get<float>()));
    ASSERT_EQ(t.predictions.size(), 10u);
    const auto top_ids = c["top_ids"].get<std::vector<int>>();
    for (int i = 0; i < 10; ++i) {
      EXPECT_EQ(t.predictions[i].id, top_ids[i]) << "rank " << i;
      EXPECT_NEAR(t.predictions[i].probability, c["top_probabilities"][i].get<float>(), kTolerance);
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

TEST(Gpt2NetworkTest, ReadsConfig) {
  const Gpt2Network net = Gpt2Network::load(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32");
  EXPECT_EQ(net.config().layers, 2);
  EXPECT_EQ(net.config().heads, 4);
  EXPECT_EQ(net.config().d_model, 32);
  EXPECT_EQ(net.config().d_ff, 128);  // n_inner null -> 4·d
  EXPECT_EQ(net.config().positions, 64);
  EXPECT_EQ(net.config().vocab, 50257);
}

TEST(Gpt2NetworkTest, PrefixIsOptional) {
  // gpt2-tiny-f16 is saved the GPT2LMHeadModel way ("transformer." + lm_head), f32 without.
  const auto backend = make_cpu_backend();
  const std::vector<int> ids = {1, 2, 3};
  const AttentionTrace a =
      Gpt2Network::load(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f16").forward_ids(ids, *backend);
  const AttentionTrace b =
      Gpt2Network::load(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32").forward_ids(ids, *backend);
  // Same random model, stored at another precision: close but not identical.
  const float d = max_abs_diff(a.attention[1][3], b.attention[1][3]);
  EXPECT_GT(d, 0.0f);
  EXPECT_LT(d, 0.05f);
}

TEST(Gpt2NetworkTest, EmptyInputGivesEmptyHeads) {
  const auto backend = make_cpu_backend();
  const AttentionTrace t =
      Gpt2Network::load(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32").forward_ids({}, *backend);
  ASSERT_EQ(t.layers(), 2);
  ASSERT_EQ(t.heads(), 4);
  EXPECT_EQ(t.attention[1][3].size(), 0);
  EXPECT_TRUE(t.predictions.empty());
}

// The formula view's steps (Q, K, Q·Kᵀ, scaled, weights, output) for every layer and head of a
// short input, consistent with each other and with the attention of the trace.
TEST(Gpt2NetworkTest, KeepsFormulaStepsForShortInputs) {
  const auto backend = make_cpu_backend();
  const Gpt2Network net = Gpt2Network::load(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32");
  const std::vector<int> ids = {15496, 995, 11, 340, 318};
  const AttentionTrace t = net.forward_ids(ids, *backend);
  ASSERT_EQ(t.steps.size(), static_cast<size_t>(t.layers() * t.heads()));
  for (int l = 0; l < t.layers(); ++l)
    for (int h = 0; h < t.heads(); ++h) {
      const HeadSteps& s = t.steps[l * t.heads() + h];
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
  // Longer inputs keep only q, k, v (no n x n step matrix): the formula view computes the
  // selected query's row from them (core/trace/query_row.h).
  const int n = kStepsMaxTokens + 1;
  const AttentionTrace long_trace = net.forward_ids(std::vector<int>(n, 11), *backend);
  ASSERT_EQ(long_trace.steps.size(), static_cast<size_t>(t.layers() * t.heads()));
  for (const HeadSteps& s : long_trace.steps) {
    EXPECT_EQ(s.q.rows(), n);
    EXPECT_EQ(s.k.rows(), n);
    EXPECT_EQ(s.v.rows(), n);
    EXPECT_EQ(s.scores.size(), 0);
    EXPECT_EQ(s.weights.size(), 0);
  }
}

TEST(Gpt2NetworkTest, RejectsBadIds) {
  const auto backend = make_cpu_backend();
  const Gpt2Network net = Gpt2Network::load(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32");
  EXPECT_THROW(net.forward_ids({50257}, *backend), UsageError);
  EXPECT_THROW(net.forward_ids({-1}, *backend), UsageError);
  EXPECT_THROW(net.forward_ids(std::vector<int>(65, 1), *backend), UsageError);
  EXPECT_NO_THROW(net.forward_ids(std::vector<int>(64, 1), *backend));  // exactly n_positions
}

class Gpt2BrokenFolderTest : public test::BrokenFolderTest<Gpt2Network> {
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
      load_gpt2_model(folder, [&](double f, const std::string&) { last_progress = f; });
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
  const auto model = load_gpt2_model(folder, {});
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
  const auto model = load_gpt2_model(folder, {});
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
  EXPECT_EQ(load_gpt2_model(snap, {})->info().name, "tiny-org/gpt2-tiny");
  fs::remove_all(root);
}

TEST(Gpt2ModelTest, MissingTokenizerIsAModelError) {
  const fs::path dir = fs::temp_directory_path() / ("attnscope_notok_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32" / "config.json",
                dir / "config.json");
  try {
    load_gpt2_model(dir, {});
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnscope
