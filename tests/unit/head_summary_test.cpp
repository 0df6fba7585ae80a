// Head summaries (core/analysis/head_summary.h) against a naive double-precision reference written
// here, hand-computed patterns (identity, previous-token, sink, uniform) and edge cases: fully
// masked rows, a generation step's 1 x n row, queries that do not fit among the keys.
#include "core/analysis/head_summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/lesson/lesson_model.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// The reference: plain loops over a copy in double, the query position passed explicitly, the row
// normalised before anything else, log via the natural log.
struct Reference {
  double entropy = 0, distance = 0, first = 0, previous = 0, diagonal = 0, induction = 0;
};

Reference reference_summary(const Matrix& m, int first_position, std::vector<int> ids = {}) {
  std::vector<double> entropy, distance, first, previous, diagonal, induction;
  for (int i = 0; i < m.rows(); ++i) {
    std::vector<double> p(static_cast<size_t>(m.cols()));
    double total = 0;
    for (int j = 0; j < m.cols(); ++j) total += static_cast<double>(m(i, j));
    if (total <= 0) continue;
    for (int j = 0; j < m.cols(); ++j) p[j] = m(i, j) / total;
    const int q = first_position + i;
    double h = 0, d = 0;
    for (int j = 0; j < m.cols(); ++j) {
      if (p[j] > 0) h += -p[j] * std::log(p[j]) / std::log(2.0);
      d += p[j] * (q > j ? q - j : j - q);
    }
    entropy.push_back(h);
    distance.push_back(d);
    first.push_back(p[0]);
    if (q > 0) previous.push_back(p[q - 1]);
    diagonal.push_back(p[q]);
    bool repeats = false;
    double mass = 0;
    for (int j = 0; j < q && !ids.empty(); ++j)
      if (ids[j] >= 0 && ids[j] == ids[q]) {
        repeats = true;
        mass += p[j + 1];
      }
    if (repeats) induction.push_back(mass);
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / v.size();
  };
  return {mean(entropy),  mean(distance), mean(first),
          mean(previous), mean(diagonal), mean(induction)};
}

// Random attention: softmax of random logits, keys after the query's position masked when causal;
// the rows in `masked` all zero.
Matrix random_weights(std::mt19937& rng, int rows, int cols, int first_position, bool causal,
                      std::set<int> masked = {}, float sharpness = 2.0f) {
  std::normal_distribution<float> normal(0.0f, sharpness);
  Matrix m = Matrix::Zero(rows, cols);
  for (int i = 0; i < rows; ++i) {
    if (masked.count(i)) continue;
    const int last = causal ? first_position + i : cols - 1;
    double total = 0;
    for (int j = 0; j <= last; ++j) total += m(i, j) = std::exp(normal(rng));
    for (int j = 0; j <= last; ++j) m(i, j) = static_cast<float>(m(i, j) / total);
  }
  return m;
}

void expect_matches_reference(const Matrix& m, int first_position, int explicit_offset,
                              const std::vector<int>& ids = {}) {
  const HeadSummary s = summarize_head(m, explicit_offset, ids);
  const Reference r = reference_summary(m, first_position, ids);
  SCOPED_TRACE(::testing::Message()
               << m.rows() << " x " << m.cols() << ", first query at " << first_position);
  EXPECT_NEAR(s.entropy, r.entropy, 1e-5 * (1 + r.entropy));
  EXPECT_NEAR(s.mean_distance, r.distance, 1e-5 * (1 + r.distance));
  EXPECT_NEAR(s.first_token_mass, r.first, 1e-6);
  EXPECT_NEAR(s.previous_token, r.previous, 1e-6);
  EXPECT_NEAR(s.diagonal, r.diagonal, 1e-6);
  EXPECT_NEAR(s.induction, r.induction, 1e-6);
}

// Token ids from a vocabulary of `vocab` (so they repeat), with some -1 (unknown words).
std::vector<int> random_ids(std::mt19937& rng, int n, int vocab) {
  std::uniform_int_distribution<int> id(-1, vocab - 1);
  std::vector<int> ids(static_cast<size_t>(n));
  for (int& i : ids) i = id(rng);
  return ids;
}

TEST(HeadSummary, MatchesTheDoubleReferenceOnRandomHeads) {
  std::mt19937 rng(7);
  for (int n : {1, 2, 3, 8, 31, 100}) {
    for (bool causal : {true, false}) {
      expect_matches_reference(random_weights(rng, n, n, 0, causal), 0, -1);
      expect_matches_reference(random_weights(rng, n, n, 0, causal, {}, 0.3f), 0, -1);
      expect_matches_reference(random_weights(rng, n, n, 0, causal), 0, -1, random_ids(rng, n, 4));
    }
  }
}

TEST(HeadSummary, GenerationStepRowsAreTheLastQueries) {
  std::mt19937 rng(11);
  for (int n : {1, 2, 9, 40}) {
    // One step: a 1 x n row, its query the newest token (position n-1), by default.
    expect_matches_reference(random_weights(rng, 1, n, n - 1, true), n - 1, -1);
    expect_matches_reference(random_weights(rng, 1, n, n - 1, true), n - 1, -1,
                             random_ids(rng, n, 3));
    // Several rows starting at an explicit position, keys beyond the queries (bidirectional).
    if (n >= 4) expect_matches_reference(random_weights(rng, 3, n, 1, false), 1, 1);
  }
}

TEST(HeadSummary, FullyMaskedRowsAreSkipped) {
  std::mt19937 rng(3);
  const Matrix m = random_weights(rng, 6, 6, 0, false, {0, 4});
  expect_matches_reference(m, 0, -1);
  // The summary is the mean of the live rows' own one-row summaries (each at its position).
  const HeadSummary all = summarize_head(m);
  double entropy = 0, distance = 0;
  for (int i : {1, 2, 3, 5}) {
    const HeadSummary row = summarize_head(m.row(i), i);
    entropy += row.entropy / 4;
    distance += row.mean_distance / 4;
  }
  EXPECT_NEAR(all.entropy, entropy, 1e-5);
  EXPECT_NEAR(all.mean_distance, distance, 1e-5);
  const HeadSummary zero = summarize_head(Matrix::Zero(5, 5));
  for (const HeadSummaryKey& key : head_summary_keys()) {
    EXPECT_EQ(key.value(zero), 0.0f) << key.name;
    EXPECT_FALSE(std::isnan(key.value(all))) << key.name;
  }
}

TEST(HeadSummary, UniformRowsHaveEntropyLog2N) {
  for (int n = 1; n <= 64; ++n) {
    const Matrix uniform = Matrix::Constant(n, n, 1.0f / n);
    EXPECT_NEAR(summarize_head(uniform).entropy, std::log2(static_cast<double>(n)), 1e-5) << n;
    // Causal uniform: row i spreads over i+1 keys, so the mean is mean_i log2(i+1).
    Matrix causal = Matrix::Zero(n, n);
    double expected = 0;
    for (int i = 0; i < n; ++i) {
      causal.row(i).head(i + 1).setConstant(1.0f / (i + 1));
      expected += std::log2(i + 1.0) / n;
    }
    EXPECT_NEAR(summarize_head(causal).entropy, expected, 1e-5) << n;
  }
}

TEST(HeadSummary, HandComputedPatterns) {
  const int n = 6;
  const HeadSummary self = summarize_head(Matrix::Identity(n, n));
  EXPECT_FLOAT_EQ(self.entropy, 0.0f);
  EXPECT_FLOAT_EQ(self.diagonal, 1.0f);
  EXPECT_FLOAT_EQ(self.previous_token, 0.0f);
  EXPECT_FLOAT_EQ(self.mean_distance, 0.0f);
  EXPECT_FLOAT_EQ(self.first_token_mass, 1.0f / n);  // only row 0's self is the first token

  Matrix previous = Matrix::Zero(n, n);  // row 0 has no previous token: it keeps itself
  previous(0, 0) = 1;
  for (int i = 1; i < n; ++i) previous(i, i - 1) = 1;
  const HeadSummary prev = summarize_head(previous);
  EXPECT_FLOAT_EQ(prev.previous_token, 1.0f);  // every row with a previous token uses it
  EXPECT_FLOAT_EQ(prev.diagonal, 1.0f / n);
  EXPECT_FLOAT_EQ(prev.mean_distance, (n - 1.0f) / n);
  EXPECT_FLOAT_EQ(prev.first_token_mass, 2.0f / n);

  Matrix sink = Matrix::Zero(n, n);
  sink.col(0).setOnes();
  const HeadSummary s = summarize_head(sink);
  EXPECT_FLOAT_EQ(s.first_token_mass, 1.0f);
  EXPECT_FLOAT_EQ(s.mean_distance, (n - 1.0f) / 2.0f);
  EXPECT_FLOAT_EQ(s.entropy, 0.0f);
  EXPECT_FLOAT_EQ(s.previous_token, 1.0f / (n - 1));  // only row 1's previous token is the first

  // Rows not summing to 1 (hidden keys without renormalising) are read as distributions.
  EXPECT_FLOAT_EQ(summarize_head(0.25f * Matrix::Identity(n, n)).diagonal, 1.0f);
}

TEST(HeadSummary, QueriesThatDoNotFitAreAnError) {
  EXPECT_THROW(summarize_head(Matrix::Identity(3, 2)), Error);  // more queries than keys
  EXPECT_THROW(summarize_head(Matrix::Identity(2, 4), 3), Error);
  EXPECT_NO_THROW(summarize_head(Matrix::Identity(2, 4), 2));
  EXPECT_THROW(induction_score(Matrix::Identity(4, 4), 0), Error);
}

TEST(HeadSummary, InductionScoreOfARepeatedBlock) {
  const int period = 5, n = 3 * period;
  Matrix induction = Matrix::Zero(n, n);
  for (int i = 0; i < n; ++i) induction(i, i >= period ? i - period + 1 : 0) = 1;
  EXPECT_FLOAT_EQ(induction_score(induction, period), 1.0f);
  // A previous-token head scores 0 (period > 2), the identity too.
  Matrix previous = Matrix::Zero(n, n);
  previous(0, 0) = 1;
  for (int i = 1; i < n; ++i) previous(i, i - 1) = 1;
  EXPECT_FLOAT_EQ(induction_score(previous, period), 0.0f);
  EXPECT_FLOAT_EQ(induction_score(Matrix::Identity(n, n), period), 0.0f);
  // Causal uniform: query i gives 1/(i+1) to every earlier key; mean over i ≥ period.
  Matrix uniform = Matrix::Zero(n, n);
  double expected = 0;
  for (int i = 0; i < n; ++i) uniform.row(i).head(i + 1).setConstant(1.0f / (i + 1));
  for (int i = period; i < n; ++i) expected += 1.0 / (i + 1) / (n - period);
  EXPECT_NEAR(induction_score(uniform, period), expected, 1e-6);
  // One generation step in the second repeat: its row alone.
  Matrix step = Matrix::Zero(1, 8);
  step(0, 8 - 1 - period + 1) = 0.75f;
  step(0, 0) = 0.25f;
  EXPECT_FLOAT_EQ(induction_score(step, period), 0.75f);
  // No query in a repeat: 0, not NaN.
  EXPECT_FLOAT_EQ(induction_score(Matrix::Identity(3, 3), period), 0.0f);

  // The token-based score of HeadSummary: a BOS, then a random block of distinct ids repeated
  // three times. The perfect induction head (shifted by the BOS) scores 1 in both.
  std::vector<int> ids = {50};
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < period; ++k) ids.push_back(7 * k + 3);
  const int m = static_cast<int>(ids.size());
  Matrix with_bos = Matrix::Zero(m, m);
  for (int i = 0; i < m; ++i) with_bos(i, i > period ? i - period + 1 : 0) = 1;
  EXPECT_FLOAT_EQ(summarize_head(with_bos, -1, ids).induction, 1.0f);
  // Only the most recent occurrence's successor: the third repeat also has the first repeat's.
  Matrix recent = Matrix::Zero(m, m);
  for (int i = 0; i < m; ++i) {
    if (i <= period) {
      recent(i, 0) = 1;
    } else if (i <= 2 * period) {
      recent(i, i - period + 1) = 1;
    } else {  // half on each earlier successor
      recent(i, i - period + 1) = 0.5f;
      recent(i, i - 2 * period + 1) = 0.5f;
    }
  }
  EXPECT_FLOAT_EQ(summarize_head(recent, -1, ids).induction, 1.0f);
  EXPECT_FLOAT_EQ(summarize_head(recent, -1, {}).induction, 0.0f);  // no ids: no score
  EXPECT_THROW(summarize_head(recent, -1, {1, 2}), Error);
}

TEST(HeadSummary, KeyRegistryReadsEachField) {
  HeadSummary s;
  s.entropy = 1;
  s.mean_distance = 2;
  s.first_token_mass = 3;
  s.previous_token = 4;
  s.diagonal = 5;
  s.induction = 6;
  std::set<std::string> names;
  std::multiset<float> values;
  for (const HeadSummaryKey& key : head_summary_keys()) {
    EXPECT_FALSE(key.label.empty());
    EXPECT_FALSE(key.description.empty());
    EXPECT_TRUE(names.insert(key.name).second) << "duplicate " << key.name;
    values.insert(key.value(s));
    EXPECT_EQ(&head_summary_key(key.name), &key);
  }
  EXPECT_EQ(values, (std::multiset<float>{1, 2, 3, 4, 5, 6}));  // every field, each once
  EXPECT_FALSE(head_summary_key("entropy").higher_is_notable);  // low entropy = a focused head
  try {
    head_summary_key("nope");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("previous"), std::string::npos);
  }
}

TEST(HeadSummary, SummarizeTraceCoversEveryHead) {
  LessonOptions o;
  o.heads = 4;
  auto backend = make_cpu_backend();
  const AttentionTrace t =
      make_lesson_model(o)->run("she sat on the bank of the river and the bank", *backend);
  const auto all = summarize_trace(t);
  ASSERT_EQ(all.size(), static_cast<size_t>(t.layers()));
  for (int l = 0; l < t.layers(); ++l) {
    ASSERT_EQ(all[l].size(), static_cast<size_t>(t.heads()));
    for (int h = 0; h < t.heads(); ++h) expect_matches_reference(t.attention[l][h], 0, -1);
  }
}

}  // namespace
}  // namespace attnscope
