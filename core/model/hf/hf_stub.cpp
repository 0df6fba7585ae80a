// Placeholder until Hugging Face folders land (issue 5). Delete this file when they do.
#include "core/model/hf/hf_model.h"
#include "core/util/error.h"

namespace attnscope {
std::shared_ptr<const Model> open_hf_model(const std::string& spec, const ProgressFn&) {
  throw UsageError("unknown model '" + spec + "' (only 'lesson' is available in this build)");
}
std::vector<ModelListing> list_hf_models() { return {}; }
}  // namespace attnscope
