// View transforms (core/analysis/view_transform.h): hiding sinks with renormalisation, combining
// several query rows, max-pooling that keeps a single hot cell visible, the log colour scale.
// References are naive double loops written here.
#include "core/analysis/view_transform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/util/error.h"

namespace attnscope {
namespace {

Matrix random_stochastic(std::mt19937& rng, int rows, int cols, bool causal) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Matrix m = Matrix::Zero(rows, cols);
  for (int i = 0; i < rows; ++i) {
    const int last = causal ? std::min(i, cols - 1) : cols - 1;
    double total = 0;
    for (int j = 0; j <= last; ++j) total += m(i, j) = u(rng) * u(rng);
    for (int j = 0; j <= last; ++j) m(i, j) = static_cast<float>(m(i, j) / total);
  }
  return m;
}

Tokens tokens_with_specials(int n, std::vector<int> special) {
  Tokens t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    t[i].text = std::to_string(i);  // ("t" + to_string trips GCC 12's -Wrestrict)
  for (int s : special) t[s].special = true;
  return t;
}

TEST(HideKeys, HiddenColumnsAreZeroAndRowsSumToOneAgain) {
  std::mt19937 rng(5);
  for (bool causal : {true, false}) {
    const Matrix w = random_stochastic(rng, 9, 9, causal);
    std::vector<bool> hidden(9, false);
    hidden[0] = hidden[4] = true;
    const Matrix out = hide_keys(w, hidden, true);
    for (int i = 0; i < 9; ++i) {
      EXPECT_EQ(out(i, 0), 0.0f);
      EXPECT_EQ(out(i, 4), 0.0f);
      // Reference: the remaining weights divided by their sum, in double.
      double left = 0;
      for (int j = 0; j < 9; ++j)
        if (!hidden[j]) left += w(i, j);
      if (left == 0) {  // causal row 0 only sees the hidden first token: stays all 0
        EXPECT_EQ(out.row(i).cwiseAbs().sum(), 0.0f) << i;
        continue;
      }
      EXPECT_NEAR(out.row(i).cast<double>().sum(), 1.0, 1e-6) << i;
      for (int j = 0; j < 9; ++j)
        if (!hidden[j]) {
          EXPECT_NEAR(out(i, j), w(i, j) / left, 1e-6) << i << "," << j;
        }
    }
    EXPECT_TRUE(out.allFinite());
  }
}

TEST(HideKeys, WithoutRenormalisingTheOtherWeightsStay) {
  std::mt19937 rng(6);
  const Matrix w = random_stochastic(rng, 1, 12, false);  // one generation step's row
  std::vector<bool> hidden(12, false);
  hidden[11] = true;
  const Matrix out = hide_keys(w, hidden, false);
  EXPECT_EQ(out(0, 11), 0.0f);
  EXPECT_EQ(out.leftCols(11), w.leftCols(11));
  EXPECT_THROW(hide_keys(w, std::vector<bool>(11, false), true), Error);
  // Nothing hidden: renormalising a stochastic matrix changes nothing (beyond rounding).
  EXPECT_LT((hide_keys(w, std::vector<bool>(12, false), true) - w).cwiseAbs().maxCoeff(), 1e-6f);
}

TEST(SinkKeys, FirstAndSpecialTokens) {
  const Tokens bert = tokens_with_specials(5, {0, 4});  // [CLS] a b c [SEP]
  EXPECT_EQ(sink_keys(bert, true, false), (std::vector<bool>{1, 0, 0, 0, 0}));
  EXPECT_EQ(sink_keys(bert, false, true), (std::vector<bool>{1, 0, 0, 0, 1}));
  EXPECT_EQ(sink_keys(bert, true, true), (std::vector<bool>{1, 0, 0, 0, 1}));
  EXPECT_EQ(sink_keys(bert, false, false), (std::vector<bool>(5, false)));
  EXPECT_TRUE(sink_keys({}, true, true).empty());

  SinkOptions o;
  EXPECT_EQ(sink_options_title(o), "");
  const Matrix w = Matrix::Constant(5, 5, 0.2f);
  EXPECT_EQ(apply_sink_options(w, bert, o), w);
  o.hide_special = true;
  EXPECT_EQ(sink_options_title(o), "special tokens hidden, rows renormalised");
  const Matrix out = apply_sink_options(w, bert, o);
  EXPECT_NEAR(out(2, 1), 1.0f / 3, 1e-6);
  EXPECT_EQ(out(2, 4), 0.0f);
  o.hide_first = true;
  o.renormalise = false;
  EXPECT_EQ(sink_options_title(o), "first and special tokens hidden");
  EXPECT_FLOAT_EQ(apply_sink_options(w, bert, o)(2, 1), 0.2f);
}

TEST(CombineRows, SumAndMeanOfTheSelectedQueries) {
  std::mt19937 rng(9);
  const Matrix w = random_stochastic(rng, 7, 7, true);
  const std::vector<int> rows = {6, 2, 3};
  const RowVector sum = combine_rows(w, rows, RowCombine::sum);
  const RowVector mean = combine_rows(w, rows, RowCombine::mean);
  for (int j = 0; j < 7; ++j) {
    double ref = 0;
    for (int r : rows) ref += w(r, j);
    EXPECT_NEAR(sum[j], ref, 1e-6);
    EXPECT_NEAR(mean[j], ref / 3, 1e-6);
  }
  EXPECT_NEAR(mean.sum(), 1.0f, 1e-5);  // a mean of distributions is one
  EXPECT_EQ(combine_rows(w, {2, 2, 3}, RowCombine::sum), combine_rows(w, {3, 2}, RowCombine::sum));
  EXPECT_EQ(combine_rows(w, {}, RowCombine::mean), RowVector::Zero(7));
  EXPECT_EQ(combine_rows(w, {4}, RowCombine::mean), RowVector(w.row(4)));
  EXPECT_THROW(combine_rows(w, {7}, RowCombine::sum), Error);
  EXPECT_THROW(combine_rows(w, {-1}, RowCombine::sum), Error);
}

TEST(MaxPool, BlocksPartitionTheInput) {
  for (int in = 1; in <= 70; ++in) {
    for (int out = 1; out <= in; ++out) {
      int next = 0;
      for (int k = 0; k < out; ++k) {
        const PoolBlock b = pool_block(k, in, out);
        ASSERT_EQ(b.begin, next) << in << " -> " << out << " block " << k;
        ASSERT_GT(b.end, b.begin) << in << " -> " << out << " block " << k;
        next = b.end;
      }
      ASSERT_EQ(next, in) << in << " -> " << out;
    }
  }
  EXPECT_EQ(pool_block(4095, 4096, 4096).end, 4096);
  EXPECT_EQ(pool_block(1, 1 << 30, 4).begin, 1 << 28);  // no overflow for huge sizes
}

TEST(MaxPool, ASingleHotCellSurvivesEveryReduction) {
  for (int rows : {1, 7, 33, 64}) {
    for (int cols : {1, 5, 33, 64}) {
      for (int hot_r : {0, rows / 2, rows - 1}) {
        for (int hot_c : {0, cols / 3, cols - 1}) {
          Matrix w = Matrix::Constant(rows, cols, 1e-4f);
          w(hot_r, hot_c) = 0.9f;
          for (int out_r = 1; out_r <= rows; ++out_r) {
            // Every row reduction, with the same factor on the columns, and both extremes.
            for (int out_c : {1, std::max(1, out_r * cols / rows), cols}) {
              const Matrix p = max_pool(w, out_r, out_c);
              ASSERT_EQ(p.rows(), out_r);
              ASSERT_EQ(p.cols(), out_c);
              int hot = 0;
              for (int r = 0; r < out_r; ++r)
                for (int c = 0; c < out_c; ++c) {
                  const PoolBlock br = pool_block(r, rows, out_r), bc = pool_block(c, cols, out_c);
                  const bool holds =
                      br.begin <= hot_r && hot_r < br.end && bc.begin <= hot_c && hot_c < bc.end;
                  hot += p(r, c) == 0.9f;
                  ASSERT_EQ(p(r, c), holds ? 0.9f : 1e-4f)
                      << rows << "x" << cols << " -> " << out_r << "x" << out_c;
                }
              ASSERT_EQ(hot, 1);
            }
          }
        }
      }
    }
  }
}

TEST(MaxPool, MatchesANaiveReferenceAndNeverEnlarges) {
  std::mt19937 rng(12);
  const Matrix w = random_stochastic(rng, 50, 37, true);
  const Matrix p = max_pool(w, 9, 11);
  for (int r = 0; r < 9; ++r)
    for (int c = 0; c < 11; ++c) {
      // Reference: cell i is in block r when floor(r·in/out) <= i < floor((r+1)·in/out), that is
      // r = ceil((i+1)·out/in) - 1 = floor(((i+1)·out - 1)/in).
      double m = -1;
      for (int i = 0; i < 50; ++i)
        for (int j = 0; j < 37; ++j)
          if (((i + 1) * 9 - 1) / 50 == r && ((j + 1) * 11 - 1) / 37 == c)
            m = std::max(m, static_cast<double>(w(i, j)));
      EXPECT_EQ(p(r, c), static_cast<float>(m)) << r << "," << c;
    }
  EXPECT_EQ(max_pool(w, 500, 500), w);
  EXPECT_EQ(max_pool(w, 50, 20).rows(), 50);
  EXPECT_THROW(max_pool(w, 0, 3), Error);
}

TEST(LogScale, MapsFloorToOneOntoZeroToOne) {
  EXPECT_EQ(log_scale(0.0f), 0.0f);
  EXPECT_EQ(log_scale(kLogScaleFloor / 2), 0.0f);
  EXPECT_FLOAT_EQ(log_scale(kLogScaleFloor), 0.0f);
  EXPECT_FLOAT_EQ(log_scale(1.0f), 1.0f);
  EXPECT_FLOAT_EQ(log_scale(2.0f), 1.0f);
  EXPECT_NEAR(log_scale(std::sqrt(kLogScaleFloor)), 0.5f, 1e-6);  // a decade per third
  EXPECT_NEAR(log_scale(0.01f), 1.0f / 3, 1e-6);
  EXPECT_EQ(log_scale(std::nanf("")), 0.0f);
  float previous = 0;
  for (float w = 1e-4f; w <= 1.0f; w *= 1.1f) {
    const float t = log_scale(w);
    EXPECT_GE(t, previous);
    previous = t;
    if (w >= kLogScaleFloor) {
      EXPECT_NEAR(log_scale_inverse(t), w, 1e-5f * (1 + w));
    }
  }
  EXPECT_NEAR(log_scale(0.05f, 0.01f, 0.5f), std::log(5.0) / std::log(50.0), 1e-6);
  EXPECT_FLOAT_EQ(log_scale_inverse(1.0f, 0.01f, 0.5f), 0.5f);
}

}  // namespace
}  // namespace attnscope
