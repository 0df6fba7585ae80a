// Head aggregates (core/trace/aggregate.h): rollout by hand on 3 x 3 matrices, its properties on
// random traces, and rollout, the mean over layers and the head summaries against the float64
// numpy reference of tools/reference/analysis_reference.py (tests/data/golden/analysis.json).
#include "core/trace/aggregate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/analysis/head_summary.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

Matrix to_matrix(const nlohmann::json& rows) {
  Matrix m(rows.size(), rows.empty() ? 0 : rows[0].size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < rows[i].size(); ++j) m(i, j) = rows[i][j].get<float>();
  return m;
}

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return (a - b).cwiseAbs().maxCoeff();
}

AttentionTrace trace_of(std::vector<std::vector<Matrix>> attention) {
  AttentionTrace t;
  t.attention = std::move(attention);
  t.model.layers = t.layers();
  t.model.heads = t.heads();
  return t;
}

Matrix rows(std::initializer_list<std::initializer_list<float>> r) {
  Matrix m(static_cast<Eigen::Index>(r.size()), static_cast<Eigen::Index>(r.begin()->size()));
  int i = 0;
  for (const auto& row : r) {
    int j = 0;
    for (float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

Matrix rollout(const AttentionTrace& t, int layer) {
  return head_aggregate("rollout").combine(t, layer);
}

TEST(Rollout, HandComputedThreeTokens) {
  // Layer 0: two heads whose mean is A = [[1,0,0],[.5,.5,0],[.2,.3,.5]].
  //   Â0 = 0.5·A + 0.5·I = [[1,0,0],[.25,.75,0],[.1,.15,.75]] (rows already sum to 1).
  // Layer 1: one pattern B = [[1,0,0],[0,1,0],[1,0,0]] in both heads.
  //   Â1 = [[1,0,0],[0,1,0],[.5,0,.5]].
  // Rollout at layer 1 = Â1·Â0 (the later layer on the left):
  //   row 1 = Â0's row 1                         = [.25, .75, 0]
  //   row 2 = .5·[1,0,0] + .5·[.1,.15,.75]      = [.55, .075, .375]
  // (The other order, Â0·Â1, would give row 2 = [.475, .15, .375].)
  const Matrix h1 = rows({{1, 0, 0}, {1, 0, 0}, {.4f, .6f, 0}});
  const Matrix h2 = rows({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
  const Matrix b = rows({{1, 0, 0}, {0, 1, 0}, {1, 0, 0}});
  const AttentionTrace t = trace_of({{h1, h2}, {b, b}});
  EXPECT_LT(max_abs_diff(rollout(t, 0), rows({{1, 0, 0}, {.25f, .75f, 0}, {.1f, .15f, .75f}})),
            1e-6f);
  EXPECT_LT(max_abs_diff(rollout(t, 1), rows({{1, 0, 0}, {.25f, .75f, 0}, {.55f, .075f, .375f}})),
            1e-6f);
}

TEST(Rollout, FullyMaskedRowsBecomeTheIdentityRow) {
  // The lesson model with mask_self on a lone token, say: a row of zeros. 0.5·0 + 0.5·I gives 0.5
  // on the diagonal only, renormalised to 1.
  const AttentionTrace t = trace_of({{rows({{0, 0}, {.5f, .5f}})}});
  EXPECT_LT(max_abs_diff(rollout(t, 0), rows({{1, 0}, {.25f, .75f}})), 1e-6f);
}

TEST(Rollout, RowsSumToOneAndCausalStaysCausal) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int n = 20, layers = 8, heads = 3;
  std::vector<std::vector<Matrix>> attention(layers);
  for (auto& layer : attention)
    for (int h = 0; h < heads; ++h) {
      Matrix m = Matrix::Zero(n, n);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j <= i; ++j) m(i, j) = u(rng);
        m.row(i) /= m.row(i).sum();
      }
      layer.push_back(m);
    }
  const AttentionTrace t = trace_of(attention);
  for (int l = 0; l < layers; ++l) {
    const Matrix r = rollout(t, l);
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(r.row(i).cast<double>().sum(), 1.0, 1e-5) << "layer " << l << " row " << i;
      EXPECT_GE(r.row(i).minCoeff(), 0.0f);
      if (i + 1 < n) {
        EXPECT_EQ(r.row(i).tail(n - i - 1).cwiseAbs().maxCoeff(), 0.0f);
      }
    }
  }
  EXPECT_THROW(rollout(t, layers), UsageError);
  EXPECT_THROW(rollout(t, -1), UsageError);
}

TEST(Rollout, NonSquareAttentionIsAnError) {
  const AttentionTrace t = trace_of({{rows({{.5f, .5f, 0}, {0, .5f, .5f}})}});
  EXPECT_THROW(rollout(t, 0), Error);
}

TEST(Aggregates, TitlesSayWhatIsShown) {
  const Matrix a = Matrix::Identity(2, 2);
  const AttentionTrace t = trace_of({{a, a, a}, {a, a, a}});
  EXPECT_EQ(head_aggregate("mean").title(t, 1), "layer 1 \xC2\xB7 mean of 3 heads");
  EXPECT_EQ(head_aggregate("layers-mean").title(t, 1), "mean of all 2 layers");
  EXPECT_EQ(head_aggregate("rollout").title(t, 1),
            "rollout of layers 0\xE2\x80\x93"
            "1");
  for (const HeadAggregate& g : head_aggregates()) {
    EXPECT_FALSE(g.description.empty()) << g.name;
    EXPECT_TRUE(g.title) << g.name;
  }
  EXPECT_THROW(head_aggregate("sum"), UsageError);
}

// ---- The float64 numpy reference ----------------------------------------------------------------

struct GoldenCase {
  std::string name;
  AttentionTrace trace;
  nlohmann::json doc;
};

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  std::ifstream in(std::filesystem::path(ATTNSCOPE_TEST_DATA) / "golden" / "analysis.json");
  EXPECT_TRUE(in) << "missing tests/data/golden/analysis.json";
  if (!in) return cases;
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const nlohmann::json& c : doc.at("cases")) {
    std::vector<std::vector<Matrix>> attention;
    for (const auto& layer : c["attention"]) {
      attention.emplace_back();
      for (const auto& head : layer) attention.back().push_back(to_matrix(head));
    }
    cases.push_back({c["name"], trace_of(attention), c});
    for (int id : c.at("token_ids")) cases.back().trace.tokens.push_back(Token{id, "", -1, -1});
  }
  return cases;
}

TEST(AnalysisGolden, RolloutMatchesNumpy) {
  const auto cases = golden_cases();
  ASSERT_GE(cases.size(), 5u);
  for (const GoldenCase& c : cases) {
    for (int l = 0; l < c.trace.layers(); ++l) {
      EXPECT_LT(max_abs_diff(rollout(c.trace, l), to_matrix(c.doc["rollout"][l])), 1e-5f)
          << c.name << ", layer " << l;
    }
  }
}

TEST(AnalysisGolden, LayersMeanMatchesNumpy) {
  for (const GoldenCase& c : golden_cases()) {
    const Matrix expected = to_matrix(c.doc["layers_mean"]);
    for (int l : {0, c.trace.layers() - 1})  // the same matrix whatever the layer
      EXPECT_LT(max_abs_diff(head_aggregate("layers-mean").combine(c.trace, l), expected), 1e-6f)
          << c.name;
  }
}

TEST(AnalysisGolden, HeadSummariesMatchNumpy) {
  for (const GoldenCase& c : golden_cases()) {
    const auto summaries = summarize_trace(c.trace);
    for (int l = 0; l < c.trace.layers(); ++l)
      for (int h = 0; h < c.trace.heads(); ++h)
        for (const HeadSummaryKey& key : head_summary_keys()) {
          const double expected = c.doc["summaries"][l][h].at(key.name).get<double>();
          EXPECT_NEAR(key.value(summaries[l][h]), expected, 1e-5 * (1 + std::abs(expected)))
              << c.name << ", layer " << l << " head " << h << ", " << key.name;
        }
  }
}

}  // namespace
}  // namespace attnscope
