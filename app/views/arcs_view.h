#pragma once
// Two pictures of one head: BertViz's two columns (queries left, keys right, a line for every
// weight, opacity and width following it) and an arc diagram (curves above the sentence from the
// focused token to every other token, thickness ∝ weight). Hover focuses a token, click locks it.
#include <imgui.h>

#include "app/views/view_context.h"

namespace attnscope {

struct ArcsView {
  void DrawColumns(ViewContext& ctx, ImVec2 size);
  void DrawArcDiagram(ViewContext& ctx, ImVec2 size);
};

inline constexpr int kMaxArcTokens = 64;  // beyond this the lines are noise; the heatmap remains

}  // namespace attnscope
