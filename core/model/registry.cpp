#include "core/model/registry.h"

#include "core/model/hf/hf_model.h"
#include "core/model/lesson/lesson_model.h"
#include "core/model/stories/stories_model.h"
#include "core/model/tiny/tiny_model.h"
#include "core/util/error.h"

namespace attnscope {

std::shared_ptr<const Model> open_model(const std::string& spec, const ProgressFn& progress) {
  // An empty spec is a mistake (an unset shell variable in `--model "$M"`), not a request for the
  // default: opening the lesson model silently would hide it.
  if (spec.empty())
    throw UsageError(
        "empty model spec: give lesson, tiny, stories, a model folder or a repo id such as gpt2");
  if (spec == "lesson") return make_lesson_model();
  // The built-in trained decoder; a folder called "tiny" is still reachable as ./tiny.
  if (spec == kTinyModelSpec) return open_tiny_model(progress);
  // The built-in real trained Llama (TinyStories); a folder called "stories" is ./stories.
  if (spec == kStoriesModelSpec) return open_stories_model(progress);
  return open_hf_model(spec, progress);
}

std::vector<ModelListing> list_models() {
  std::vector<ModelListing> all = {
      {"lesson", "lesson", "built-in", "word vectors + plain attention", ""},
      tiny_model_listing(),
      stories_model_listing()};
  for (ModelListing& m : list_hf_models()) all.push_back(std::move(m));
  return all;
}

}  // namespace attnscope
