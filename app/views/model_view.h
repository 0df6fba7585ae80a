#pragma once
// The model view (BertViz's "model view"): every layer × head of one sentence's trace as a grid of
// thumbnails drawn from one texture atlas (app/render/thumbnail_atlas.h), the head summaries of
// core/analysis/head_summary.h under each one, a sort key and a filter chosen from
// head_summary_keys(). Hover enlarges a thumbnail with all its summaries; a click focuses that
// layer and head in every other view; the ←/→/↑/↓ keys move the focus, which is outlined.
// Summaries are computed once per published trace (cached by the trace's pointer), never per
// frame.
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/render/thumbnail_atlas.h"
#include "app/ui/background_task.h"
#include "app/views/view_context.h"

namespace attnscope {

// The summaries of every head of one trace, [(layer * heads + head) * keys + key].
struct HeadSummaryTable {
  std::shared_ptr<const AttentionTrace> trace;
  int layers = 0, heads = 0;
  std::vector<std::string> names, labels, descriptions;  // per key
  std::vector<bool> descending;  // sort largest first (the key's higher_is_notable)
  std::vector<float> values;
  float value(int layer, int head, int key) const {
    return values[(static_cast<size_t>(layer) * heads + head) * names.size() + key];
  }
};
// Computes the table (off the draw path: called once per new trace).
HeadSummaryTable summarize_heads(const std::shared_ptr<const AttentionTrace>& trace);

struct ModelView {
  ThumbnailAtlas atlas;
  HeadSummaryTable summaries;
  BackgroundTask<HeadSummaryTable> summarizing;  // summaries of a new trace, off the UI thread
  std::shared_ptr<const AttentionTrace> summarizing_trace;
  std::string summary_error;
  // This frame's sort and filter, read from AppState's model_sort / model_filter (key names).
  int sort_key = -1;    // -1: the model's head order; else heads of a layer sorted by this key
  int filter_key = -1;  // -1: every head; else only heads with value >= filter_min are bright
  float filter_min = 0.5f;
  int last_layer = -1, last_head = -1;  // to scroll to the focused cell when it moves

  void Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size);
  // The last Draw showed "computing…" instead of the grid (headless runs wait for the grid).
  bool waiting = false;

 private:
  void DrawToolbar(ViewContext& ctx);
};

}  // namespace attnscope
