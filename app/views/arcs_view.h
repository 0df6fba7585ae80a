#pragma once
// Two pictures of one head: BertViz's two columns (queries left, keys right, a line for every
// weight, opacity and width following it) and an arc diagram (curves above the sentence from the
// focused token to every other token, thickness ∝ weight). Hover focuses a token, click locks it.
// The lines can overlay several heads of the layer at once (BertViz's head view), each in its
// colour of app/ui/head_palette.h, each toggled by a click on its swatch.
#include <algorithm>
#include <memory>
#include <vector>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/views/view_context.h"

namespace attnscope {

struct ArcsView {
  void DrawColumns(ViewContext& ctx, ImVec2 size);
  void DrawArcDiagram(ViewContext& ctx, ImVec2 size);

 private:
  // The arc diagram's token labels and curves: from query `f` (or from the selected queries'
  // combined `row`), or with neither the strongest key of every query. Every label placed keeps
  // clear of those placed before it.
  void DrawArcs(ViewContext& ctx, ImVec2 origin, ImVec2 size, int f, const float* row,
                nlohmann::json* labels_json);
  // The overlay's checkbox and swatches; returns the height they took.
  float DrawOverlayControls(ViewContext& ctx, float width);
  void DrawColumnLines(ViewContext& ctx, ImVec2 size);  // below the controls
  void DrawOverlayLines(ViewContext& ctx, ImVec2 left, ImVec2 right, float row_h,
                        nlohmann::json& drawn);
  // The overlaid heads' matrices (sink options applied), rebuilt when trace/layer/options change.
  const std::vector<Matrix>& OverlayWeights(const ViewContext& ctx);
  std::shared_ptr<const AttentionTrace> overlay_trace_;
  int overlay_layer_ = -1;
  ShownOptions overlay_options_;
  std::vector<Matrix> overlay_weights_;
  int arcs_scrolled_to_ = -1;  // the token the arc diagram last scrolled into view
  float focus_x_ = 0;          // where DrawArcs put the shown query (content coordinates)
};

// One arc of the arc diagram (window and figure alike).
struct Arc {
  int from, to;  // from -1: the middle of the selected queries
  float weight;
};
// The arcs the diagram draws: from `row` (query `from`'s, or the selection's combined row with
// from = -1) its `top_k` strongest keys at or above 0.5% of `vmax`; with no row, every query's
// strongest key. Strongest first (ties in key order).
std::vector<Arc> choose_arcs(const Matrix& weights, const float* row, int from, int top_k,
                             float vmax);

// The k-th largest weight of row `row` (the smallest weight a top-k view keeps; ties kept too).
float top_k_threshold(const Matrix& weights, int row, int k);
float top_k_threshold(const float* row, int n, int k);
// Decoders mask the future: no query gives weight to a later key.
bool is_causal(const Matrix& weights);

inline constexpr int kMaxTopK = 20;  // the top-k slider's range
// The k that lines and arcs use for a row of `keys` keys: the chosen k, at most `keys`, at least 1.
inline int shown_top_k(int chosen, int keys) {
  return std::max(1, std::min(chosen, keys));
}

// Up to this many tokens the lines (scrolling vertically) and arcs (sideways) are drawn; beyond,
// the heatmap (which zooms) remains.
inline constexpr int kMaxArcTokens = 512;

}  // namespace attnscope
