#include "core/backend/cpu/work_sharing.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace attnscope {
namespace {

class WorkSharing {
 public:
  static WorkSharing& instance() {
    // Never destroyed: helper threads block on a condition variable until the process exits.
    static WorkSharing* pool = new WorkSharing(helper_count());
    return *pool;
  }

  int threads() const { return static_cast<int>(helpers_.size()) + 1; }

  void run(int count, const std::function<void(int)>& task) {
    std::unique_lock<std::mutex> job(job_mu_, std::try_to_lock);
    if (!job.owns_lock() || helpers_.empty() || count <= 1) {
      for (int i = 0; i < count; ++i) task(i);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      task_ = &task;
      count_ = count;
      next_.store(0);
      finished_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    const int mine = work(task, count);
    std::unique_lock<std::mutex> lock(mu_);
    finished_ += mine;
    // Every chunk done, and no helper still inside this job (so the next job's counter reset
    // cannot be seen by a helper holding this job's task).
    done_.wait(lock, [&] { return finished_ == count_ && busy_helpers_ == 0; });
    task_ = nullptr;
  }

 private:
  static int helper_count() {
    int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (const char* env = std::getenv("ATTNSCOPE_THREADS"); env && std::atoi(env) > 0)
      cores = std::atoi(env);
    return std::clamp(cores, 1, 64) - 1;
  }

  explicit WorkSharing(int helpers) {
    for (int i = 0; i < helpers; ++i) helpers_.emplace_back([this] { helper_loop(); });
    for (std::thread& t : helpers_) t.detach();
  }

  // Claims and runs chunks until none is left; returns how many it ran.
  int work(const std::function<void(int)>& task, int count) {
    int ran = 0;
    for (int i = next_.fetch_add(1); i < count; i = next_.fetch_add(1)) {
      task(i);
      ++ran;
    }
    return ran;
  }

  void helper_loop() {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* task;
      int count;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return generation_ != seen && task_ != nullptr; });
        seen = generation_;
        task = task_;
        count = count_;
        ++busy_helpers_;
      }
      const int ran = work(*task, count);
      {
        std::lock_guard<std::mutex> lock(mu_);
        finished_ += ran;
        --busy_helpers_;
      }
      done_.notify_all();
    }
  }

  std::mutex job_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* task_ = nullptr;
  int count_ = 0;
  int finished_ = 0;
  int busy_helpers_ = 0;
  std::uint64_t generation_ = 0;
  std::atomic<int> next_{0};
  std::vector<std::thread> helpers_;
};

}  // namespace

void share_work(int count, const std::function<void(int)>& task) {
  WorkSharing::instance().run(count, task);
}

int work_sharing_threads() {
  return WorkSharing::instance().threads();
}

}  // namespace attnscope
