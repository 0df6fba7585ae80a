#pragma once
// Opens models off the UI thread (a Hugging Face model can take seconds) and reports progress.
// The UI keeps drawing with the previous model; a failed load leaves it in place and says why.
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/model/model.h"

namespace attnscope {

using ModelOpener = std::function<std::shared_ptr<const Model>(const ProgressFn&)>;

struct LoadResult {
  std::string label;                   // what was asked for ("gpt2", "lesson (β=5, …)")
  std::shared_ptr<const Model> model;  // null when it failed
  // model->info(), asked once here on the loader thread: the UI reads this copy every frame
  // instead of calling into the model (the lesson model builds its options JSON in info()).
  ModelInfo info;
  std::string error;
};

struct LoadProgress {
  bool busy = false;
  std::string label;
  double fraction = 0.0;
  std::string what;
};

class ModelLoader {
 public:
  ModelLoader();
  ~ModelLoader();
  ModelLoader(const ModelLoader&) = delete;
  ModelLoader& operator=(const ModelLoader&) = delete;

  // Queues a load; a newer request replaces one that has not started.
  void request(std::string label, ModelOpener open);
  LoadProgress progress() const;
  // The finished load, once (null when nothing finished since the last call).
  std::optional<LoadResult> take_result();

 private:
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<std::pair<std::string, ModelOpener>> pending_;
  std::optional<LoadResult> done_;
  LoadProgress progress_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace attnscope
