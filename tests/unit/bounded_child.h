#pragma once
// Runs a piece of code in a forked child with a time limit and (outside sanitizer builds, whose
// shadow memory needs terabytes of address space) a memory limit, so a test of hostile input can
// assert "fails cleanly, quickly, within N MB" even when the bug it guards against would hang or
// allocate gigabytes.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <thread>

namespace attnscope::testing {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMemoryLimitWorks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMemoryLimitWorks = false;
#else
constexpr bool kMemoryLimitWorks = true;
#endif
#else
constexpr bool kMemoryLimitWorks = true;
#endif

struct ChildOutcome {
  bool timed_out = false;
  bool crashed = false;  // killed by a signal other than our timeout (abort, segfault, OOM kill)
  bool threw = false;    // the code threw; `message` has what()
  std::string message;
  double seconds = 0;
};

// `memory_mb` is the whole address space the child may use (RLIMIT_AS).
inline ChildOutcome run_bounded(const std::function<void()>& code, double time_limit_s = 10,
                                long memory_mb = 1024) {
  int fds[2];
  if (::pipe(fds) != 0) return {false, true, false, "pipe failed", 0};
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (kMemoryLimitWorks) {
      rlimit limit{static_cast<rlim_t>(memory_mb) << 20, static_cast<rlim_t>(memory_mb) << 20};
      ::setrlimit(RLIMIT_AS, &limit);
    }
    std::string out = "0";
    try {
      code();
    } catch (const std::exception& e) {
      out = std::string("1") + e.what();
    } catch (...) {
      out = "1(not a std::exception)";
    }
    (void)!::write(fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildOutcome outcome;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(time_limit_s)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      outcome.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  ::close(fds[0]);
  if (!outcome.timed_out && (!WIFEXITED(status) || out.empty())) outcome.crashed = true;
  if (!out.empty()) {
    outcome.threw = out[0] == '1';
    outcome.message = out.substr(1);
  }
  return outcome;
}

}  // namespace attnscope::testing
