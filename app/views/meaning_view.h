#pragma once
// The article's claim made visible (lesson model): the nearest words of the focused token's own
// vector next to those of its context-enriched output (weights·V). "bank" beside "river" drifts
// towards shore and water; beside "money", towards deposits and loans.
#include <cstdint>
#include <memory>

#include "app/views/view_context.h"
#include "core/model/lesson/lesson_model.h"

namespace attnscope {

struct MeaningView {
  // Cache: lesson_meaning_shift scans the vocabulary, so compute it only when the input changes.
  std::shared_ptr<const AttentionTrace> cached_trace;
  int cached_token = -2;
  MeaningShift shift;
  std::string error;

  void Draw(ViewContext& ctx);
};

}  // namespace attnscope
