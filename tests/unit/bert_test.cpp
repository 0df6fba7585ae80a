// BERT forward pass against golden data from an independent PyTorch implementation
// (tools/reference/hf_reference.py, float64) on the tiny fixture models
// (tools/make_fixture_models).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/analysis/value_weighting.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/model/bert/bert_model.h"
#include "core/model/bert/bert_network.h"
#include "core/util/error.h"
#include "tests/common/golden.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
constexpr float kTolerance = 1e-4f;

using test::golden;
using test::max_abs_diff;
using test::to_matrix;

class BertGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BertGoldenTest, MatchesPytorchReference) {
  const std::string name = GetParam();
  const BertNetwork net = BertNetwork::load(fs::path(ATTNSCOPE_FIXTURES) / name);
  const auto backend = make_cpu_backend();
  const nlohmann::json g = golden(name);
  ASSERT_FALSE(g["cases"].empty());
  float worst_attention = 0, worst_hidden = 0;
  for (const auto& c : g["cases"]) {
    const std::vector<int> ids = c["ids"].get<std::vector<int>>();
    std::vector<int> types(ids.size(), 0);  // a sentence pair's case gives them
    if (c.contains("token_types")) types = c["token_types"].get<std::vector<int>>();
    BertOutputs out;
    const AttentionTrace t = net.forward_ids(ids, *backend, &out, &types);
    const int n = static_cast<int>(ids.size());
    ASSERT_EQ(t.layers(), 2);
    ASSERT_EQ(t.heads(), 4);
    for (int l = 0; l < 2; ++l) {
      for (int h = 0; h < 4; ++h) {
        const Matrix& a = t.attention[l][h];
        worst_attention =
            std::max(worst_attention, max_abs_diff(a, to_matrix(c["attention"][l][h])));
        for (int i = 0; i < n; ++i) EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5f);
        if (n > 1) {
          EXPECT_GT(a(0, n - 1), 0.0f) << "BERT attends in both directions";
        }
      }
    }
    worst_hidden =
        std::max(worst_hidden, max_abs_diff(out.last_hidden, to_matrix(c["last_hidden"])));
    EXPECT_TRUE(t.predictions.empty());
  }
  EXPECT_LE(worst_attention, kTolerance);
  EXPECT_LE(worst_hidden, kTolerance);
  std::cout << name << ": max |diff| vs PyTorch: attention " << worst_attention
            << ", last hidden state " << worst_hidden << "\n";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BertGoldenTest,
                         ::testing::Values("bert-tiny-uncased-f32", "bert-tiny-uncased-f16",
                                           "bert-tiny-uncased-bf16"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

TEST(BertNetworkTest, ReadsConfig) {
  const BertNetwork net = BertNetwork::load(fs::path(ATTNSCOPE_FIXTURES) / "bert-tiny-uncased-f32");
  EXPECT_EQ(net.config().layers, 2);
  EXPECT_EQ(net.config().heads, 4);
  EXPECT_EQ(net.config().d_model, 32);
  EXPECT_EQ(net.config().d_ff, 64);
  EXPECT_EQ(net.config().positions, 64);
  EXPECT_EQ(net.config().type_vocab, 2);
  EXPECT_EQ(net.config().vocab, 30522);
  EXPECT_FLOAT_EQ(net.config().ln_eps, 1e-12f);
  EXPECT_EQ(net.config().gelu, Gelu::kErf);
}

TEST(BertNetworkTest, RejectsBadIds) {
  const auto backend = make_cpu_backend();
  const BertNetwork net = BertNetwork::load(fs::path(ATTNSCOPE_FIXTURES) / "bert-tiny-uncased-f32");
  EXPECT_THROW(net.forward_ids({101, 30522, 102}, *backend), UsageError);
  EXPECT_THROW(net.forward_ids(std::vector<int>(65, 1000), *backend), UsageError);
  EXPECT_NO_THROW(net.forward_ids(std::vector<int>(64, 1000), *backend));
  const std::vector<int> ids = {101, 1996, 102};
  const std::vector<int> bad_type = {0, 2, 0}, short_types = {0, 1};
  EXPECT_THROW(net.forward_ids(ids, *backend, nullptr, &bad_type), UsageError);
  EXPECT_THROW(net.forward_ids(ids, *backend, nullptr, &short_types), UsageError);
}

class BertBrokenFolderTest : public test::BrokenFolderTest<BertNetwork> {
 protected:
  BertBrokenFolderTest() : BrokenFolderTest("bert-tiny-uncased-bf16", "bert") {}
  nlohmann::json config() const {
    return {{"num_hidden_layers", 2},
            {"num_attention_heads", 4},
            {"hidden_size", 32},
            {"intermediate_size", 64},
            {"max_position_embeddings", 64}};
  }
};

TEST_F(BertBrokenFolderTest, GoodConfigLoads) {
  EXPECT_EQ(load_error(config()), "(no error)");
}

TEST_F(BertBrokenFolderTest, MissingTensorIsNamed) {
  nlohmann::json c = config();
  c["num_hidden_layers"] = 3;
  EXPECT_NE(load_error(c).find("'encoder.layer.2.attention.self.query.weight' is missing"),
            std::string::npos)
      << load_error(c);
}

TEST_F(BertBrokenFolderTest, WrongShapeIsNamed) {
  nlohmann::json c = config();
  c["intermediate_size"] = 128;
  EXPECT_NE(load_error(c).find("'bert.encoder.layer.0.intermediate.dense.weight' has shape [64 x "
                               "32], expected [128 x 32]"),
            std::string::npos)
      << load_error(c);
}

TEST_F(BertBrokenFolderTest, UnsupportedActivationIsNamed) {
  nlohmann::json c = config();
  c["hidden_act"] = "relu";
  EXPECT_NE(load_error(c).find("hidden_act 'relu'"), std::string::npos) << load_error(c);
}

// Issue 27: every key's ‖v_j·W_O,h‖ (value bias included, output bias excluded) and the
// value-norm-weighted attention against the float64 reference, which multiplies v_j by W_O,h
// directly (tools/reference/make_value_norm_golden.py); attnscope goes through each head's Gram
// matrix. Norms within 1e-4 relative, weights within kTolerance.
TEST(BertValueNormsTest, MatchFloat64Reference) {
  const BertNetwork net = BertNetwork::load(fs::path(ATTNSCOPE_FIXTURES) / "bert-tiny-uncased-f32");
  const auto backend = make_cpu_backend();
  const nlohmann::json g = golden("value-norms-bert-tiny-uncased-f32");
  ASSERT_EQ(g["cases"].size(), 3u);
  double worst_norm = 0;
  float worst_weight = 0;
  for (const auto& c : g["cases"]) {
    const std::vector<int> ids = c["ids"].get<std::vector<int>>();
    std::vector<int> types(ids.size(), 0);
    if (c.contains("token_types")) types = c["token_types"].get<std::vector<int>>();
    AttentionTrace t = net.forward_ids(ids, *backend, nullptr, &types);
    ASSERT_EQ(t.value_norms.size(), 2u);
    for (int l = 0; l < 2; ++l) {
      ASSERT_EQ(t.value_norms[l].size(), 4u);
      for (int h = 0; h < 4; ++h) {
        const RowVector& n = t.value_norms[l][h];
        ASSERT_EQ(n.size(), static_cast<Eigen::Index>(ids.size()));
        for (Eigen::Index j = 0; j < n.size(); ++j) {
          const double ref = c["value_norms"][l][h][j].get<double>();
          worst_norm = std::max(worst_norm, std::abs(n[j] - ref) / std::max(1.0, std::abs(ref)));
        }
      }
    }
    apply_weighting(t, "value-norm");
    EXPECT_EQ(t.weighting, "value-norm");
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 4; ++h)
        worst_weight = std::max(
            worst_weight,
            max_abs_diff(t.attention[l][h], to_matrix(c["value_weighted_attention"][l][h])));
  }
  EXPECT_LE(worst_norm, 1e-4);
  EXPECT_LE(worst_weight, kTolerance);
  std::cout << "BERT value norms: max relative |diff| vs float64 " << worst_norm
            << ", value-weighted attention max |diff| " << worst_weight << "\n";
}

// ---- the whole model: tokenizer + forward (needs scripts/fetch_test_data.sh's vocabulary) ----

fs::path model_folder(const std::string& name) {
  const fs::path f = fs::path(ATTNSCOPE_FIXTURES) / name;
  return fs::exists(f / "vocab.txt") ? f : fs::path();
}
#define REQUIRE_VOCAB(folder) \
  if ((folder).empty())       \
  GTEST_SKIP() << "BERT vocabulary missing: run scripts/fetch_test_data.sh, then rebuild"

TEST(BertModelTest, TextToTraceMatchesPytorchReference) {
  const fs::path folder = model_folder("bert-tiny-uncased-f32");
  REQUIRE_VOCAB(folder);
  const auto model = load_bert_model(folder, {});
  EXPECT_EQ(model->info().kind, "bert");
  EXPECT_EQ(model->info().layers, 2);
  EXPECT_EQ(model->info().heads, 4);
  const auto backend = make_cpu_backend();
  const std::string text = "The cat sat on the MAT.";
  const AttentionTrace t = model->run(text, *backend);
  const nlohmann::json c = golden("bert-tiny-uncased-f32")["cases"][0];  // this sentence's ids
  ASSERT_EQ(t.tokens.size(), c["ids"].size());
  for (std::size_t i = 0; i < t.tokens.size(); ++i)
    EXPECT_EQ(t.tokens[i].id, c["ids"][i].get<int>());
  EXPECT_TRUE(t.tokens.front().special);
  EXPECT_EQ(t.tokens.front().text, "[CLS]");
  EXPECT_EQ(t.tokens.front().start, -1);
  EXPECT_TRUE(t.tokens.back().special);
  EXPECT_EQ(t.tokens.back().text, "[SEP]");
  EXPECT_FALSE(t.tokens[1].special);
  EXPECT_EQ(t.tokens[6].start, 19);  // "MAT" lowercased, offsets into the original text
  EXPECT_EQ(t.tokens[6].end, 22);
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h)
      EXPECT_LE(max_abs_diff(t.attention[l][h], to_matrix(c["attention"][l][h])), kTolerance);
  EXPECT_EQ(model->tokenize(text).size(), t.tokens.size());
}

// A [SEP] typed between two sentences: the second gets token type 1, as tokenizer(a, b) gives.
TEST(BertModelTest, SepBetweenSentencesMakesASentencePair) {
  const fs::path folder = model_folder("bert-tiny-uncased-f32");
  REQUIRE_VOCAB(folder);
  const auto model = load_bert_model(folder, {});
  const auto backend = make_cpu_backend();
  const AttentionTrace t = model->run("The cat sat [SEP] it was tired.", *backend);
  const nlohmann::json c = golden("bert-tiny-uncased-f32")["cases"][2];  // the pair's ids, types
  ASSERT_TRUE(c.contains("token_types"));
  ASSERT_EQ(t.tokens.size(), c["ids"].size());
  for (std::size_t i = 0; i < t.tokens.size(); ++i)
    EXPECT_EQ(t.tokens[i].id, c["ids"][i].get<int>());
  EXPECT_EQ(t.tokens[4].text, "[SEP]");
  EXPECT_EQ(t.tokens[4].start, 12);  // typed: offsets into the text
  float worst = 0;
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h)
      worst = std::max(worst, max_abs_diff(t.attention[l][h], to_matrix(c["attention"][l][h])));
  EXPECT_LE(worst, kTolerance);
  // The types matter: the same ids as one sentence give other weights.
  const BertNetwork net = BertNetwork::load(folder);
  const AttentionTrace one = net.forward_ids(c["ids"].get<std::vector<int>>(), *backend);
  EXPECT_GT(max_abs_diff(one.attention[0][0], t.attention[0][0]), 1e-3f);
}

TEST(BertModelTest, LongTextIsTruncatedToPositions) {
  const fs::path folder = model_folder("bert-tiny-uncased-f32");
  REQUIRE_VOCAB(folder);
  const auto model = load_bert_model(folder, {});
  const auto backend = make_cpu_backend();
  std::string text;
  for (int i = 0; i < 100; ++i) text += "a ";
  const AttentionTrace t = model->run(text, *backend);
  ASSERT_EQ(t.tokens.size(), 64u);  // [CLS] + 62 words + [SEP]
  EXPECT_EQ(t.tokens.back().text, "[SEP]");
  EXPECT_EQ(t.truncated_at_byte, 2 * 62);  // where the 63rd "a" starts
  const AttentionTrace empty = model->run("", *backend);
  EXPECT_EQ(empty.tokens.size(), 2u);  // [CLS] [SEP]
  EXPECT_EQ(empty.attention[0][0].rows(), 2);
}

// Without tokenizer_config.json, the folder's name decides: "...-cased" keeps case.
// Casing comes from tokenizer_config.json (do_lower_case, default true as in BertTokenizer), never
// from the folder's name.
TEST(BertModelTest, CasingFollowsTheConfigNotTheName) {
  const fs::path folder = model_folder("bert-tiny-uncased-f32");
  REQUIRE_VOCAB(folder);
  const fs::path root = fs::temp_directory_path() / ("attnscope_case_" + std::to_string(getpid()));
  auto make = [&](const std::string& name, const char* config) {
    const fs::path d = root / name;
    fs::create_directories(d);
    for (const char* f : {"config.json", "model.safetensors", "vocab.txt"})
      fs::create_symlink(folder / f, d / f);
    if (config) std::ofstream(d / "tokenizer_config.json") << config;
    return load_bert_model(d, {});
  };
  // "The" is not in the uncased vocabulary: kept as is it is unknown ([UNK] = 100).
  EXPECT_EQ(make("tiny-cased", nullptr)->tokenize("The")[1].id, 1996);
  EXPECT_EQ(make("tiny-uncased", R"({"do_lower_case": false})")->tokenize("The")[1].id, 100);
  EXPECT_EQ(make("other-cased", R"({"do_lower_case": true})")->tokenize("The")[1].id, 1996);
  fs::remove_all(root);
}

}  // namespace
}  // namespace attnscope
