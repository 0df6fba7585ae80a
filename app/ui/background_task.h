#pragma once
// A value computed off the UI thread (the model view's head summaries and thumbnail atlas): start()
// asks for a new one, take() hands it over once it is ready, and the UI thread never waits. A
// request superseded while it runs finishes on its own and is dropped (std::async's future would
// block in its destructor, so it is parked until it is done).
#include <chrono>
#include <exception>
#include <future>
#include <string>
#include <utility>
#include <vector>

namespace attnscope {

template <class T>
class BackgroundTask {
 public:
  template <class Fn>
  void start(Fn fn) {
    if (pending_.valid()) retired_.push_back(std::move(pending_));
    pending_ = std::async(std::launch::async, std::move(fn));
  }
  // True (and `out` set, or `error` when it threw) once the newest request finished.
  bool take(T& out, std::string& error) {
    std::erase_if(retired_, [](std::future<T>& f) { return done(f); });
    if (!pending_.valid() || !done(pending_)) return false;
    try {
      out = pending_.get();
      error.clear();
    } catch (const std::exception& e) {
      error = e.what();
    }
    return true;
  }
  // Forgets the newest request: it finishes on its own and take() never hands it over.
  void discard() {
    if (pending_.valid()) retired_.push_back(std::move(pending_));
  }
  // The newest request is still running (a finished one waiting for take() is not busy).
  bool busy() const { return pending_.valid() && !done(pending_); }

 private:
  static bool done(const std::future<T>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }
  std::future<T> pending_;
  std::vector<std::future<T>> retired_;
};

}  // namespace attnscope
