// What the views draw (app/views/shown_matrix.h), built once per change: small matrices at once,
// costly ones (a long trace's head, recomputed or copied) off the UI thread. While such a build
// runs, the cache hands back the previous matrix together with the trace it came from, so the
// views never pair one trace's tokens with another's weights, and a superseded build never
// replaces a newer choice.
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "app/views/shown_matrix.h"

namespace attnscope {
namespace {

// `n` tokens, one layer of `heads` heads: row i of head h is uniform over keys 0..i plus (h + 1)
// more on key i, renormalised, so the heads differ.
std::shared_ptr<const AttentionTrace> make_trace(int n, int heads) {
  auto t = std::make_shared<AttentionTrace>();
  t->model.name = "test";
  t->model.kind = "gpt2";
  for (int i = 0; i < n; ++i) {
    Token tok;
    tok.id = i;
    tok.text = "t" + std::to_string(i);
    t->tokens.push_back(tok);
  }
  t->attention.resize(1);
  for (int h = 0; h < heads; ++h) {
    Matrix w = Matrix::Zero(n, n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j <= i; ++j) w(i, j) = 1.0f;
      w(i, i) += static_cast<float>(h + 1);
      w.row(i) /= w.row(i).sum();
    }
    t->attention[0].push_back(std::move(w));
  }
  return t;
}

using Shown = std::shared_ptr<const ShownMatrix>;

Shown get(ShownMatrixCache& cache, const std::shared_ptr<const AttentionTrace>& t, int head) {
  return cache.get(t, 0, head, ShownOptions{}, 0, false, {});
}

// Asks again until the cache's build is done (at most ~20 s).
Shown settle(ShownMatrixCache& cache, const std::shared_ptr<const AttentionTrace>& t, int head) {
  Shown s = get(cache, t, head);
  for (int i = 0; i < 2000 && cache.pending(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    s = get(cache, t, head);
  }
  return s;
}

TEST(ShownMatrixCache, CostGrowsWithTheMatrixAndTheHeadsItReads) {
  auto small = make_trace(8, 2), large = make_trace(600, 2);
  EXPECT_LT(shown_matrix_cost(*small, {}), kShownMatrixAsyncCost);
  EXPECT_GE(shown_matrix_cost(*large, {}), kShownMatrixAsyncCost);
  ShownOptions mean;
  mean.aggregate = "mean";
  EXPECT_DOUBLE_EQ(shown_matrix_cost(*small, mean), 2 * shown_matrix_cost(*small, {}));
}

TEST(ShownMatrixCache, ASmallMatrixIsBuiltAtOnce) {
  ShownMatrixCache cache;
  auto t = make_trace(8, 2);
  Shown s = get(cache, t, 1);
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(cache.pending());
  EXPECT_EQ(s->trace, t);
  EXPECT_EQ(s->head, 1);
  EXPECT_TRUE(s->weights.isApprox(t->attention[0][1]));
  EXPECT_EQ(get(cache, t, 1), s) << "the same inputs give the same object, not a rebuild";
}

TEST(ShownMatrixCache, ALargeMatrixIsBuiltOffTheCallersThreadWhileThePreviousOneStays) {
  ShownMatrixCache cache;
  auto t = make_trace(600, 2);
  Shown first = get(cache, t, 0);
  EXPECT_EQ(first, nullptr) << "nothing was shown before, and the build runs elsewhere";
  first = settle(cache, t, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->weights.isApprox(t->attention[0][0]));

  // Another head: the first one stays on screen until the second is ready.
  Shown during = get(cache, t, 1);
  EXPECT_TRUE(cache.pending()) << "a new build is only taken on a later call";
  EXPECT_EQ(during, first);
  Shown second = settle(cache, t, 1);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->head, 1);
  EXPECT_TRUE(second->weights.isApprox(t->attention[0][1]));

  // A new trace (the user typed): the old matrix is handed back with its own trace.
  auto typed = make_trace(601, 2);
  during = get(cache, typed, 1);
  EXPECT_TRUE(cache.pending());
  ASSERT_NE(during, nullptr);
  EXPECT_EQ(during->trace, t);
  EXPECT_EQ(during->weights.rows(), static_cast<int>(during->trace->tokens.size()));
  Shown third = settle(cache, typed, 1);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->trace, typed);
  EXPECT_EQ(third->weights.rows(), 601);
}

TEST(ShownMatrixCache, ASupersededBuildNeverReplacesANewerChoice) {
  ShownMatrixCache cache;
  auto large = make_trace(700, 2), small = make_trace(6, 2);
  get(cache, large, 0);  // starts a costly build
  Shown s = get(cache, small, 1);
  ASSERT_NE(s, nullptr) << "a small matrix is built at once, even while a large one is pending";
  EXPECT_FALSE(cache.pending());
  EXPECT_EQ(s->trace, small);
  // However long the discarded build takes, asking again keeps giving the small one.
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(get(cache, small, 1), s);
  }
}

TEST(ShownMatrixCache, AHeadBeyondTheTraceGivesNothing) {
  ShownMatrixCache cache;
  auto t = make_trace(600, 2);
  EXPECT_EQ(settle(cache, t, 5), nullptr);
  EXPECT_FALSE(cache.pending());
  auto small = make_trace(5, 2);
  EXPECT_EQ(get(cache, small, 9), nullptr);
}

}  // namespace
}  // namespace attnscope
