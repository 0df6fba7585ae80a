// Interventions, the logit lens, head effects, direct logit attribution and value norms of every
// decoder family against golden data from an independent float64 PyTorch reference
// (tools/reference/intervention_reference.py, written by make_intervention_golden.py) on the
// fixtures, the built-in tiny model and the built-in real stories260K (assets/stories260K, model
// spec `stories`). Then what the golden files cannot say: the resumed pass equals the full one,
// knocked-out edges are 0 in rows that sum to 1, and bad input is a UsageError naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/decoder/decoder_probe.h"
#include "core/model/intervention.h"
#include "core/util/error.h"
#include "tests/common/decoder_fixture.h"
#include "tests/common/decoder_fixture_table.h"
#include "tests/common/golden.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::golden;

// Log-probabilities are compared in nats; the models' float32 against the reference's float64.
constexpr double kTolerance = 2e-4;

fs::path folder_of(const std::string& name) {
  if (name == "tiny-model") return fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "tiny_model";
  if (name == "stories260K") return fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "stories260K";
  return fs::path(ATTNSCOPE_FIXTURES) / name;
}

Tokens tokens_of(const std::vector<int>& ids) {
  Tokens t;
  for (int id : ids) {
    Token tok;
    tok.id = id;
    t.push_back(tok);
  }
  return t;
}

Interventions interventions_of(const nlohmann::json& run) {
  Interventions iv;
  for (const auto& a : run["ablate"]) iv.ablate.push_back({a[0].get<int>(), a[1].get<int>()});
  iv.ablate_mode = run["ablate_mode"] == "mean" ? AblationMode::kMean : AblationMode::kZero;
  for (const auto& k : run["knockout"])
    iv.knockout.push_back(
        {k[0].get<int>(), k[1].is_null() ? -1 : k[1].get<int>(), k[2].get<int>(), k[3].get<int>()});
  return iv;
}

struct Loaded {
  nlohmann::json g;
  DecoderNetwork net;
  std::shared_ptr<Backend> backend;
  std::unique_ptr<Probe> probe;
};

class InterventionGolden : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Loaded> load() {
    // Every folder is in the repository or built with it: a missing one is a failure, not a skip.
    const fs::path folder = folder_of(GetParam());
    nlohmann::json g = golden("interventions/" + GetParam());
    auto l = std::unique_ptr<Loaded>(new Loaded{
        g, test::load_decoder_folder(folder), std::shared_ptr<Backend>(make_cpu_backend()), {}});
    l->probe = make_decoder_probe(l->net, tokens_of(g["ids"].get<std::vector<int>>()), *l->backend,
                                  nullptr);
    return l;
  }
};

TEST_P(InterventionGolden, PredictionsUnderAblationAndKnockoutMatchTheReference) {
  const std::unique_ptr<Loaded> l = load();
  const auto checked = l->g["checked_ids"].get<std::vector<int>>();
  double worst = 0;
  for (const auto& run : l->g["runs"]) {
    const std::vector<double> lp = log_softmax(l->probe->logits(interventions_of(run), run["at"]));
    for (std::size_t i = 0; i < checked.size(); ++i) {
      const double d =
          std::abs(lp[static_cast<std::size_t>(checked[i])] - run["logprobs"][i].get<double>());
      worst = std::max(worst, d);
      EXPECT_LT(d, kTolerance) << run.dump() << " id " << checked[i];
    }
  }
  std::cout << GetParam() << ": worst log-probability difference " << worst << "\n";
}

TEST_P(InterventionGolden, LogitLensMatchesTheReferenceAndEndsOnThePrediction) {
  const std::unique_ptr<Loaded> l = load();
  const auto checked = l->g["checked_ids"].get<std::vector<int>>();
  for (const auto& lens : l->g["lens"]) {
    const int at = lens["at"];
    const Matrix rows = l->probe->lens(at);
    ASSERT_EQ(rows.rows(), l->g["layers"].get<int>() + 1);
    for (Eigen::Index b = 0; b < rows.rows(); ++b) {
      ASSERT_EQ(lens["layers"][b]["after_block"].get<int>(), b - 1);
      const std::vector<double> lp = log_softmax(rows.row(b));
      for (std::size_t i = 0; i < checked.size(); ++i)
        EXPECT_NEAR(lp[static_cast<std::size_t>(checked[i])],
                    lens["layers"][b]["logprobs"][i].get<double>(), kTolerance)
            << "at " << at << " after block " << b - 1;
    }
    // The last block's lens is the prediction itself.
    const RowVector clean = l->probe->logits({}, at);
    EXPECT_LT((rows.row(rows.rows() - 1) - clean).cwiseAbs().maxCoeff(), 1e-4f);
  }
}

TEST_P(InterventionGolden, HeadEffectsMatchTheReference) {
  const std::unique_ptr<Loaded> l = load();
  const auto& e = l->g["effect"];
  double last_progress = 0;
  const Matrix effect = l->probe->head_effects(e["target"], [&](double f) { last_progress = f; });
  EXPECT_DOUBLE_EQ(last_progress, 1.0);
  for (int layer = 0; layer < effect.rows(); ++layer)
    for (int h = 0; h < effect.cols(); ++h)
      EXPECT_NEAR(effect(layer, h), e["effect"][layer][h].get<double>(), kTolerance)
          << "layer " << layer << " head " << h;
}

TEST_P(InterventionGolden, DirectLogitAttributionMatchesTheReferenceAndAddsUpToTheLogit) {
  const std::unique_ptr<Loaded> l = load();
  const auto& d = l->g["dla"];
  const Matrix dla = l->probe->direct_logit_attribution(d["target"]);
  const double scale = std::max(1.0, std::abs(d["logit"].get<double>()));
  for (int layer = 0; layer < dla.rows(); ++layer)
    for (int h = 0; h < dla.cols(); ++h)
      EXPECT_NEAR(dla(layer, h), d["dla"][layer][h].get<double>(), 1e-4 * scale)
          << "layer " << layer << " head " << h;
  if (d["components"].is_null()) return;  // post-attention norms: no exact sum
  // The heads, with the reference's other components, give the target's logit as the network
  // computes it (these fixtures have no final softcap).
  const auto& c = d["components"];
  double sum =
      dla.cast<double>().sum() + c["embedding"].get<double>() + c["final_norm_bias"].get<double>();
  for (const auto& v : c["attention_bias"]) sum += v.get<double>();
  for (const auto& v : c["mlp"]) sum += v.get<double>();
  const int last = static_cast<int>(l->probe->tokens().size()) - 1;
  const double logit = l->probe->logits({}, last)[d["target"].get<int>()];
  EXPECT_NEAR(sum, logit, 1e-4 * scale);
}

TEST_P(InterventionGolden, ValueNormsMatchTheReference) {
  const std::unique_ptr<Loaded> l = load();
  KvCache cache;
  DecoderRequest request;
  request.keep_value_norms = true;
  const DecoderOutputs out =
      l->net.forward(l->g["ids"].get<std::vector<int>>(), cache, *l->backend, request);
  const auto& ref = l->g["value_norms"];
  ASSERT_EQ(out.value_norms.size(), ref.size());
  for (std::size_t layer = 0; layer < ref.size(); ++layer) {
    ASSERT_EQ(out.value_norms[layer].size(), ref[layer].size());
    for (std::size_t h = 0; h < ref[layer].size(); ++h)
      for (std::size_t j = 0; j < ref[layer][h].size(); ++j) {
        const double want = ref[layer][h][j].get<double>();
        EXPECT_NEAR(out.value_norms[layer][h][static_cast<Eigen::Index>(j)], want,
                    1e-4 * std::max(1.0, want))
            << "layer " << layer << " head " << h << " key " << j;
      }
  }
}

// The resumed pass (from the first layer touched) equals a full pass with the same interventions.
TEST_P(InterventionGolden, ResumingAtTheFirstTouchedLayerEqualsAFullPass) {
  const std::unique_ptr<Loaded> l = load();
  const int layers = l->probe->layers(), last = static_cast<int>(l->probe->tokens().size()) - 1;
  Interventions iv;
  iv.ablate = {{layers - 1, 0}};
  iv.knockout = {{layers - 1, 1, last, 0}};
  std::vector<std::vector<Matrix>> attention;
  const RowVector resumed = l->probe->logits(iv, last);
  const RowVector full = l->probe->logits(iv, last, &attention);
  EXPECT_LT((resumed - full).cwiseAbs().maxCoeff(), 1e-4f);
  // The cut edge has weight 0 and its row sums to 1 again (unless a window hides key 0 anyway).
  const Matrix& a = attention[static_cast<std::size_t>(layers - 1)][1];
  EXPECT_EQ(a(last, 0), 0.0f);
  EXPECT_NEAR(a.row(last).sum(), 1.0f, 1e-5f);
}

std::vector<std::string> all_models() {
  // Every family's fixture (tests/common/decoder_fixture_table.h), GPT-2 and the built-in models.
  return test::plus(test::family_fixtures(), {"gpt2-tiny-f32", "tiny-model", "stories260K"});
}

INSTANTIATE_TEST_SUITE_P(Decoders, InterventionGolden, ::testing::ValuesIn(all_models()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(Interventions, ParseHeadsAndKnockouts) {
  const auto heads = parse_head_list("3.2, 1.0");
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0], (HeadRef{3, 2}));
  EXPECT_EQ(heads[1], (HeadRef{1, 0}));
  const auto k = parse_knockouts("2:5>1,2.3:5>1");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].layer, 2);
  EXPECT_EQ(k[0].head, -1);
  EXPECT_EQ(k[0].query, 5);
  EXPECT_EQ(k[0].key, 1);
  EXPECT_EQ(k[1].head, 3);
  for (const char* bad : {"3", "3.", ".2", "-1.0", "1.2.3", "a.b", "1.0,", "99999999999.0"})
    EXPECT_THROW(parse_head_list(bad), UsageError) << bad;
  for (const char* bad : {"2:5", "2>5:1", "2:5>", "2:x>1", "2.-1:5>1", ""})
    EXPECT_THROW(parse_knockouts(bad), UsageError) << bad;
}

TEST(Interventions, OutOfRangeAndEmptyRowsAreUsageErrorsThatNameThem) {
  const DecoderNetwork net = test::load_decoder_folder(fs::path(ATTNSCOPE_FIXTURES) / "llama-tiny");
  const auto backend = make_cpu_backend();
  auto probe = make_decoder_probe(net, tokens_of({1, 20, 30, 40}), *backend, nullptr);
  auto message = [&](const Interventions& iv, int at) {
    try {
      probe->logits(iv, at);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const int layers = probe->layers(), heads = probe->heads();
  EXPECT_NE(
      message({{{layers, 0}}, AblationMode::kZero, {}}, 3).find("layer " + std::to_string(layers)),
      std::string::npos);
  EXPECT_NE(message({{{0, heads}}, AblationMode::kZero, {}}, 3).find("head"), std::string::npos);
  EXPECT_NE(message({{}, AblationMode::kZero, {{0, -1, 4, 0}}}, 3).find("query 4"),
            std::string::npos);
  EXPECT_NE(message({}, 4).find("position 4"), std::string::npos);
  // Query 0 sees only key 0: cutting it leaves the row empty.
  EXPECT_NE(message({{}, AblationMode::kZero, {{0, 1, 0, 0}}}, 3).find("without a key"),
            std::string::npos);
  // A key the query cannot see anyway (k > q) is a no-op.
  const RowVector clean = probe->logits({}, 3);
  const RowVector same = probe->logits({{}, AblationMode::kZero, {{0, -1, 1, 3}}}, 3);
  EXPECT_LT((clean - same).cwiseAbs().maxCoeff(), 1e-5f);
  EXPECT_THROW(probe->head_effects(net.spec().vocab), UsageError);
  EXPECT_THROW(probe->direct_logit_attribution(-1), UsageError);
}

}  // namespace
}  // namespace attnscope
