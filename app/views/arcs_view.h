#pragma once
// Two pictures of one head: BertViz's two columns (queries left, keys right, a line for every
// weight, opacity and width following it) and an arc diagram (curves above the sentence from the
// focused token to every other token, thickness ∝ weight). Hover focuses a token, click locks it.
#include <imgui.h>

#include "app/views/view_context.h"

namespace attnscope {

struct ArcsView {
  int top_k = 5;  // lines and arcs: each query's k strongest keys (the threshold is shown)
  void DrawColumns(ViewContext& ctx, ImVec2 size);
  void DrawArcDiagram(ViewContext& ctx, ImVec2 size);

 private:
  // The arc diagram's token labels and the curves of query `f` (or, with f = -1, the strongest
  // key of every query); every label placed avoids the ones placed before it.
  void DrawArcs(ViewContext& ctx, ImVec2 origin, ImVec2 size, int f, nlohmann::json* labels_json);
};

// The k-th largest weight of row `row` (the smallest weight a top-k view keeps; ties kept too).
float top_k_threshold(const Matrix& weights, int row, int k);
// Decoders mask the future: no query gives weight to a later key.
bool is_causal(const Matrix& weights);

inline constexpr int kMaxArcTokens = 64;  // beyond this the lines are noise; the heatmap remains

}  // namespace attnscope
