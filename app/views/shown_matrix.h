#pragma once
// What the views draw of a trace, as one object per matrix (like Polyscope's quantities): the
// weights after the aggregate ("one head", mean/max of a layer, rollout …) and the sink options
// (first / special tokens hidden, rows renormalised), its colour scale (range, colormap, log), the
// combined row of several selected queries, and the one-line title that states all of it. Built
// once per change (ShownMatrixCache), never per frame; the heatmap, arcs and sentence views, the
// model view's thumbnails and the figures (File → Export view, `render`) all read it.
// No GL or ImGui here.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/ui/background_task.h"
#include "core/analysis/view_transform.h"
#include "core/trace/trace.h"

namespace attnscope {

// How the views turn a trace into what they draw (AppState::shown; saved in sessions).
struct ShownOptions {
  std::string aggregate;    // "": one head; else a head_aggregates() name (core/trace/aggregate.h)
  bool hide_first = false;  // hide the first token as a key, renormalise the rows
  bool hide_special = false;  // hide special tokens ([CLS], <|endoftext|> …) likewise
  bool log_scale = false;     // colours follow log10(weight), clamped below at log_floor
  float log_floor = 1e-3f;
  bool query_sum = false;  // several selected queries: the sum of their rows (false: the mean)
  // Show → weighted by ‖value‖: the worker publishes value-weighted traces (`--weighting
  // value-norm`, core/analysis/value_weighting.h) when the model gives its values' sizes.
  bool value_weighted = false;
  bool operator==(const ShownOptions&) const = default;
};

// One colour range and colormap per matrix: where a weight falls on the colormap.
struct ColorScale {
  int colormap = 0;
  float vmin = 0.0f, vmax = 1.0f;  // the weights at the two ends (log: vmin is the floor)
  bool log = false;
  // 0..1 position of weight w (clamped).
  float position(float w) const;
  // The weight at position t (colorbar ticks).
  float weight_at(float t) const;
};
// A colorbar tick: a round weight (core/util/round_ticks.h), where it sits on the scale (0: vmin,
// the bottom of the bar; 1: vmax, the top) and its label.
struct ColorTick {
  float value = 0, position = 0;
  std::string label;
};
// The ticks of every colorbar, the window's heatmap and the figures alike: at most `max_ticks`,
// at round weights (steps of 1, 2, 2.5, 5 × 10^n; a log scale's at 1, 2, 5 × 10^n).
std::vector<ColorTick> colorbar_ticks(const ColorScale& scale, int max_ticks);

// 0..1 when `fixed_range`, else 0..max(w) (1 when all zero); log: floor..max.
ColorScale make_color_scale(const Matrix& w, int colormap, bool fixed_range,
                            const ShownOptions& options);

struct ShownMatrix {
  // The trace it was made from (set by ShownMatrixCache; null from make_shown_matrix): the views
  // draw its tokens with these weights, so the pair stays consistent while a newer one is built.
  std::shared_ptr<const AttentionTrace> trace;
  int layer = 0, head = 0;
  ShownOptions options;
  Matrix weights;                // [queries x keys] as drawn
  std::vector<char> hidden_key;  // 1 where the sink options hid that key
  std::vector<int> queries;      // the selected queries combined below (≥ 2), sorted
  std::vector<float> combined;   // their sum or mean row (empty when fewer than 2 are selected)
  ColorScale scale;
  std::string title;  // "layer 3 · head 2 · first token hidden, rows renormalised · log colours"

  // The row the views single out: the combined row when several queries are selected, else row
  // `focus`; null when neither.
  const float* focus_row(int focus) const;
};

// The matrix of `options` at (layer, head) with the sink options applied; `hidden_key` (nullable)
// receives which keys were hidden. Throws UsageError for an unknown aggregate or a layer/head out
// of range. A pass over every head passes cache_head = false (AttentionTrace::head_weights).
Matrix shown_weights(const AttentionTrace& trace, int layer, int head, const ShownOptions& options,
                     std::vector<char>* hidden_key = nullptr, bool cache_head = true);
// "layer 3 · head 2", "layer 3 · mean of 12 heads", "rollout through layer 3", then the options:
// " · first token hidden (rows renormalised) · log colours (floor 0.001)". Layers and heads
// count from 0, as everywhere.
std::string shown_title(const AttentionTrace& trace, int layer, int head,
                        const ShownOptions& options);
// The lines of a title at most `width` wide (as `measure` says), broken only after its " · "
// separators; a part too wide alone breaks at its spaces. Never inside a number ("0.001") or a
// word; a single word wider than `width` overflows its line. The lines joined by " " give the
// title back.
std::vector<std::string> wrap_title(const std::string& title, float width,
                                    const std::function<float(const std::string&)>& measure);
// The options' part of the title alone (empty when none is on).
std::string shown_options_note(const ShownOptions& options);
SinkOptions sink_options(const ShownOptions& options);  // rows always renormalised

ShownMatrix make_shown_matrix(const AttentionTrace& trace, int layer, int head,
                              const ShownOptions& options, int colormap, bool fixed_range,
                              const std::vector<int>& selected_queries);

// Roughly how many multiply-adds building the matrix takes: a head of a long trace held compactly
// is recomputed from Q and K, an aggregate reads every head of a layer (or of all layers).
double shown_matrix_cost(const AttentionTrace& trace, const ShownOptions& options);
// From this cost on ShownMatrixCache builds off the UI thread (a 512 x 512 matrix held in full:
// about a millisecond of copying; a 4,096-token head recomputed: ~60 ms).
constexpr double kShownMatrixAsyncCost = 512.0 * 512.0;

// Keeps the last ShownMatrix of one slot and rebuilds it only when its inputs change: small ones
// at once, costly ones (shown_matrix_cost) off the UI thread, so switching the head of a
// 4,096-token trace or typing into it never stalls a frame. Until such a build is done, get()
// returns the previous matrix (with its own trace: the views draw that consistent pair, and the
// `pending()` note says a newer one is coming), or null when there was none.
class ShownMatrixCache {
 public:
  // Null when the trace is null or (layer, head) is outside it.
  std::shared_ptr<const ShownMatrix> get(const std::shared_ptr<const AttentionTrace>& trace,
                                         int layer, int head, const ShownOptions& options,
                                         int colormap, bool fixed_range,
                                         const std::vector<int>& selected_queries);
  // A build for the inputs of the last get() is running: what get() returned is older.
  bool pending() const { return building_; }

 private:
  struct Request {
    std::shared_ptr<const AttentionTrace> trace;
    int layer = -1, head = -1, colormap = -1;
    bool fixed_range = false;
    ShownOptions options;
    std::vector<int> queries;
    bool operator==(const Request&) const = default;
  };
  Request requested_;
  bool has_request_ = false;
  bool building_ = false;
  std::shared_ptr<const ShownMatrix> shown_;
  BackgroundTask<std::shared_ptr<const ShownMatrix>> task_;
};

}  // namespace attnscope
