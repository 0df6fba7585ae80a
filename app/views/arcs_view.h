#pragma once
// Two pictures of one head: BertViz's two columns (queries left, keys right, a line for every
// weight, opacity and width following it) and an arc diagram (curves above the sentence from the
// focused token to every other token, thickness ∝ weight). Hover focuses a token, click locks it.
// The lines can overlay several heads of the layer at once (BertViz's head view), each in its
// colour of app/ui/head_palette.h, each toggled by a click on its swatch.
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
};

inline constexpr int kMaxArcTokens = 64;  // beyond this the lines are noise; the heatmap remains

}  // namespace attnscope
