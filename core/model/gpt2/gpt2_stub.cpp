// Placeholder until the GPT-2 loader lands (branch `models`). The lead deletes this file at merge.
#include "core/model/gpt2/gpt2_model.h"
#include "core/util/error.h"

namespace attnscope {
std::shared_ptr<const Model> load_gpt2_model(const std::filesystem::path& folder,
                                             const ProgressFn&) {
  throw ModelError("the GPT-2 loader is not built yet (cannot open " + folder.string() + ")");
}
}  // namespace attnscope
