// The CPU backend's work sharing: every chunk runs exactly once, from any number of callers and
// from inside a chunk; and the large matrix products that use it equal a plain double product.
#include "core/backend/cpu/work_sharing.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "tests/common/reference.h"

namespace attnscope {
namespace {

TEST(WorkSharingTest, EveryChunkRunsExactlyOnce) {
  for (int count : {0, 1, 2, 7, 100}) {
    std::vector<std::atomic<int>> runs(count);
    share_work(count, [&](int i) { runs[i]++; });
    for (int i = 0; i < count; ++i) EXPECT_EQ(runs[i].load(), 1) << count << " " << i;
  }
}

TEST(WorkSharingTest, ConcurrentAndNestedCallersNeverDeadlock) {
  std::atomic<long> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 200; ++rep)
        share_work(8, [&](int i) {
          share_work(3, [&](int j) { total += i * 3 + j + 1; });  // nested: runs inline
        });
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 4L * 200 * (24 * 25 / 2));
}

// Shapes of GPT-2 small's products (large enough to be split across threads).
TEST(WorkSharingTest, SplitMatmulEqualsDoubleProduct) {
  const auto backend = make_cpu_backend();
  const Matrix a = test::randn(37, 768, 1);
  const Matrix b = test::randn(768, 1000, 2);   // x·W
  const Matrix bt = test::randn(1001, 768, 3);  // x·Wᵀ, odd width
  const Matrix c0 = test::randn(37, 1000, 4);
  const Eigen::MatrixXd ad = a.cast<double>();
  {
    Tensor c = backend->upload(c0);
    backend->matmul(backend->upload(a), backend->upload(b), false, c, 0.5f, 2.0f);
    const Eigen::MatrixXd want = 0.5 * ad * b.cast<double>() + 2.0 * c0.cast<double>();
    EXPECT_LT((backend->download(c).cast<double>() - want).cwiseAbs().maxCoeff(), 1e-3);
  }
  {
    Tensor c = backend->alloc(37, 1001);
    backend->matmul(backend->upload(a), backend->upload(bt), true, c);
    const Eigen::MatrixXd want = ad * bt.cast<double>().transpose();
    EXPECT_LT((backend->download(c).cast<double>() - want).cwiseAbs().maxCoeff(), 1e-3);
  }
}

}  // namespace
}  // namespace attnscope
