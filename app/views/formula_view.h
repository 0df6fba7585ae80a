#pragma once
// The article's equation, live:
//   Q, K → Q·Kᵀ → ÷√d_k → softmax → weights·V
// For inputs of up to kFormulaMaxTokens tokens: small matrices with numbers, the focused token's
// row highlighted in each. At any length: the selected query's row through every step, key by
// key, in a table that scrolls sideways and draws only the columns in view
// (app/views/formula_row_view.cpp).
#include <memory>

#include "app/views/view_context.h"
#include "core/trace/query_row.h"

namespace attnscope {

inline constexpr int kFormulaMaxTokens = 12;  // the full matrices fit up to here
inline constexpr int kFormulaMaxColumns = 6;  // vectors are wide (d = 300): show their start

// The row table's cache: recomputed only when the trace, head or query changes.
struct FormulaRowState {
  const AttentionTrace* trace = nullptr;
  std::shared_ptr<const AttentionTrace> pin;  // keeps `trace`'s address from being reused
  int layer = -1, head = -1, query = -1;
  // Whether the shown matrix is causal (an n² scan: once per matrix, not every frame).
  const Matrix* causal_of = nullptr;
  std::shared_ptr<const ShownMatrix> causal_pin;
  bool causal = false;
  QueryRow row;
};

struct FormulaView {
  bool show_all = false;  // every row of every step; otherwise the focused row through the steps
  bool show_row = false;  // short inputs: the row table instead of the matrices
  FormulaRowState row_state;
  void Draw(ViewContext& ctx);
};

// The selected query's row (ctx.focus; without one, a decoder's last token, else the first) as
// a table: one column per key, rows q·kⱼ, scaled, softmax; the output vector below.
void draw_query_row(ViewContext& ctx, FormulaRowState& state, int layer, int head);

}  // namespace attnscope
