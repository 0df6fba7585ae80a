// Placeholder until the lesson model lands (issue 3). Delete this file when it does.
#include "core/model/lesson/lesson_model.h"
#include "core/util/error.h"

namespace attnscope {
std::shared_ptr<const Model> make_lesson_model(const LessonOptions&) {
  throw ModelError("the lesson model is not built yet");
}
MeaningShift lesson_meaning_shift(const AttentionTrace&, int, int) { return {}; }
std::vector<PresetPair> lesson_presets() { return {}; }
}  // namespace attnscope
