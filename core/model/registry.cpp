#include "core/model/registry.h"

#include "core/model/gguf/gguf_model.h"
#include "core/model/hf/hf_model.h"
#include "core/model/lesson/lesson_model.h"
#include "core/model/stories/stories_model.h"
#include "core/model/tiny/tiny_model.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// Where a model that was not found could also have been: the GGUF places, named in the message.
constexpr const char* kGgufPlaces =
    " A GGUF model is a .gguf file, a folder holding one, an Ollama name such as llama3.2:1b "
    "(under $OLLAMA_MODELS or ~/.ollama/models) or an LM Studio model such as publisher/repo "
    "(under ~/.lmstudio/models or ~/.cache/lm-studio/models).";

}  // namespace

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
  // A GGUF file, a folder holding one, an Ollama or LM Studio name (llama.cpp's models).
  if (const std::optional<std::filesystem::path> gguf = resolve_gguf_spec(spec))
    return open_gguf_model(*gguf, progress);
  try {
    return open_hf_model(spec, progress);
  } catch (const UsageError& e) {
    // Not found as a Hugging Face model either: say where GGUF models are looked for too.
    const std::string what = e.what();
    if (what.rfind("no model '", 0) == 0 ||
        what.find("is neither a folder nor a repo id") != std::string::npos)
      throw UsageError(what + (what.empty() || what.back() == '.' ? "" : ".") + kGgufPlaces);
    throw;
  }
}

std::vector<ModelListing> list_models() {
  std::vector<ModelListing> all = {
      {"lesson", "lesson", "built-in", "word vectors + plain attention", ""},
      tiny_model_listing(),
      stories_model_listing()};
  for (ModelListing& m : list_hf_models()) all.push_back(std::move(m));
  for (ModelListing& m : list_gguf_models()) all.push_back(std::move(m));
  return all;
}

}  // namespace attnscope
