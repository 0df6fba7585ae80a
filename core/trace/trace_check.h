#pragma once
// The trace contract (shared/DESIGN.md): every attention row is finite and sums to 1. A model with
// absurd weights (1e30 is finite, but its products are not) or a broken config turns rows into NaN
// or zeros; such a trace must never reach a view or an exporter, so every caller of Model::run
// passes the trace through here.
#include "core/trace/trace.h"

namespace attnscope {

// Throws ModelError naming the first layer, head and query whose attention row is not finite, has
// an entry outside [0, 1], or does not sum to 1 (within 1e-3): "layer 2 (head 0, query 3): the
// attention weights are NaN or infinite: the activations overflowed …". A row of zeros is accepted
// only from the lesson model, whose self mask can leave a query nothing to attend to.
void check_attention_rows(const AttentionTrace& trace);
// The same check where a fully masked (all-zero) row is allowed or not: stored traces may hold
// them (the trace readers accept them, as attention_forward writes them).
void check_attention_rows(const AttentionTrace& trace, bool zero_rows_allowed);

}  // namespace attnscope
