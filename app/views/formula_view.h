#pragma once
// The article's equation, live, for inputs of up to 12 tokens:
//   Q, K → Q·Kᵀ → ÷√d_k → softmax → weights·V
// as small matrices with numbers, the focused token's row highlighted in each.
#include "app/views/view_context.h"

namespace attnscope {

inline constexpr int kFormulaMaxTokens = 12;
inline constexpr int kFormulaMaxColumns = 6;  // vectors are wide (d = 300): show their start

struct FormulaView {
  bool show_all = false;  // every row of every step; otherwise the focused row through the steps
  void Draw(ViewContext& ctx);
};

}  // namespace attnscope
