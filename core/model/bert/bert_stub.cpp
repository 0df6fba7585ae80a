// Placeholder until the BERT loader lands (branch `models`). The lead deletes this file at merge.
#include "core/model/bert/bert_model.h"
#include "core/util/error.h"

namespace attnscope {
std::shared_ptr<const Model> load_bert_model(const std::filesystem::path& folder,
                                             const ProgressFn&) {
  throw ModelError("the BERT loader is not built yet (cannot open " + folder.string() + ")");
}
}  // namespace attnscope
