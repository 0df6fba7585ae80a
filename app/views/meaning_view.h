#pragma once
// The article's claim made visible (lesson model): the nearest words of the focused token's own
// vector next to those of its context-enriched output (weights·V). "bank" beside "river" drifts
// towards shore and water; beside "money", towards deposits and loans.
#include "app/views/view_context.h"
#include "core/model/lesson/lesson_model.h"

namespace attnscope {

// It only reads: the worker publishes every token's shift with the trace (ComputeResult).
struct MeaningView {
  void Draw(ViewContext& ctx);
};

}  // namespace attnscope
