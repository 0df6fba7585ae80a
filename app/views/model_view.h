#pragma once
// The model view (BertViz's "model view"): every layer × head of one sentence's trace as a grid of
// thumbnails drawn from one texture atlas (app/render/thumbnail_atlas.h), the head summaries of
// core/analysis/head_summary.h under each one (their names written out), a sort key and a filter
// chosen from head_summary_keys(). The grid fills the pane's width: layers sit side by side when
// that makes the thumbnails larger, a layer's heads wrap onto more rows when they are too many.
// Hover enlarges a thumbnail with its token axes and all its summaries (in a popup kept clear of
// the status bar); a click focuses that layer and head in every other view; the ←/→/↑/↓ keys move
// the focus, which is outlined.
// Summaries are computed once per published trace (cached by the trace's pointer), never per
// frame.
#include <functional>
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
  std::vector<std::string> names, descriptions;  // per key
  std::vector<bool> descending;                  // sort largest first (the key's higher_is_notable)
  std::vector<float> values;
  float value(int layer, int head, int key) const {
    return values[(static_cast<size_t>(layer) * heads + head) * names.size() + key];
  }
};
// Computes the table (off the draw path: called once per new trace).
HeadSummaryTable summarize_heads(const std::shared_ptr<const AttentionTrace>& trace);

// What the grid's layout depends on besides the pane: a layer label's width, the gap between
// thumbnails, the smallest readable thumbnail, a summary line's height, and how many summary lines
// a thumbnail of a given width carries.
struct ModelGridMetrics {
  float label_w = 0, gap = 0, min_thumb = 0, line_h = 0;
  std::function<int(float thumb)> lines_for;
};
struct ModelGridShape {
  int blocks = 1;     // layers side by side on a row of the grid
  int columns = 1;    // head columns of a layer (fewer than the heads: its heads wrap)
  int head_rows = 1;  // rows of one layer's heads
  float thumb = 0;    // thumbnail side
  int lines = 0;      // summary lines under each
  float cell_h = 0, height = 0;
};
// The shape of the grid in a pane `width` × `height`: thumbnails as large as fit the height with
// the rows spanning the width; when nothing fits, one layer a row (the pane scrolls).
ModelGridShape model_grid_shape(float width, float height, int layers, int heads,
                                const ModelGridMetrics& metrics);

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
  // Effect and dla (model_view_effects.cpp): the marks menu, the target and the map's progress;
  // the values of "effect" or "dla" when the worker has them (null otherwise); a thumbnail's
  // strip of them and, for a head switched off, its cross.
  void DrawEffectsBar(ViewContext& ctx);
  const Matrix* EffectValues(const ViewContext& ctx, const std::string& which) const;
  void DrawHeadMarks(ViewContext& ctx, ImDrawList* dl, int layer, int head, ImVec2 a, ImVec2 b,
                     const Matrix* marks, float marks_max);
  // The enlarged thumbnail of (layer, head) with its token axes and every summary, beside the
  // pointer and between `top` and `bottom` (the status bar's top): never over the status bar.
  // Records the map, its axis labels and the popup's box in `json`.
  void DrawHoverPopup(ViewContext& ctx, int layer, int head, float thumb, float top, float bottom,
                      nlohmann::json& json);
  ImVec2 popup_size_{0, 0};  // the popup's size last frame (it is placed before it is drawn)
};

}  // namespace attnscope
