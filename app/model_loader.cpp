#include "app/model_loader.h"

#include <exception>

namespace attnscope {

ModelLoader::ModelLoader() : thread_([this] { loop(); }) {}

ModelLoader::~ModelLoader() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ModelLoader::request(std::string label, ModelOpener open) {
  {
    std::lock_guard lock(mutex_);
    pending_.emplace(std::move(label), std::move(open));
  }
  wake_.notify_one();
}

LoadProgress ModelLoader::progress() const {
  std::lock_guard lock(mutex_);
  LoadProgress p = progress_;
  if (pending_ && !p.busy) {
    p.busy = true;
    p.label = pending_->first;
  }
  return p;
}

std::optional<LoadResult> ModelLoader::take_result() {
  std::lock_guard lock(mutex_);
  std::optional<LoadResult> r = std::move(done_);
  done_.reset();
  return r;
}

void ModelLoader::loop() {
  for (;;) {
    std::pair<std::string, ModelOpener> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || pending_.has_value(); });
      if (stop_) return;
      job = std::move(*pending_);
      pending_.reset();
      progress_ = {true, job.first, 0.0, "opening"};
    }
    LoadResult result;
    result.label = job.first;
    ProgressFn report = [this](double fraction, const std::string& what) {
      std::lock_guard lock(mutex_);
      progress_.fraction = fraction;
      progress_.what = what;
    };
    try {
      result.model = job.second(report);
      if (!result.model)
        result.error = "the model could not be opened";
      else
        result.info = result.model->info();
    } catch (const std::exception& e) {
      result.error = e.what();
    } catch (...) {
      result.error = "opening the model failed with an unknown error";
    }
    std::lock_guard lock(mutex_);
    done_ = std::move(result);
    progress_ = {};
  }
}

}  // namespace attnscope
