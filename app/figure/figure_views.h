#pragma once
// The views a figure can show (`render --view NAME`): each is one file *_figure.cpp with a
// builder, listed in figure_views.cpp. They draw what the app's views draw: the same colormaps,
// token labels, weight ranges and colours, laid out for a page instead of a window.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/figure/figure.h"
#include "app/views/shown_matrix.h"
#include "core/trace/trace.h"

namespace attnscope {

struct FigureRequest {
  const AttentionTrace* trace = nullptr;
  int layer = 0, head = 0;   // 0-based, as in the trace's arrays
  std::string aggregate;     // non-empty: combine the layer's heads (core/trace/aggregate.h)
  int colormap = 0;          // index into colormaps()
  bool light = true;         // light (paper) or dark theme
  float width = 0;           // figure width in px; 0: the view's natural width
  int focus = -1;            // a token to single out (lines, arcs, formula); -1: none
  bool fixed_range = false;  // colours span 0..1 instead of 0..max
  bool title = true;         // a one-line title (model, layer, head)
  // Lines and arcs draw each query's k strongest keys, as the window does (AppState::top_k;
  // shown_top_k clamps it to the keys there are).
  int top_k = 5;
  // The window's selected queries (two or more: the views show their combined row, the title
  // says so; fewer are ignored, as make_shown_matrix does).
  std::vector<int> queries;
  // Sinks hidden, log colours (its `aggregate` is ignored: the field above is the one), stated in
  // the title as the app's views state them.
  ShownOptions options;
};

struct FigureView {
  std::string name;                                   // "heatmap"
  std::string description;                            // for --help
  std::function<Figure(const FigureRequest&)> build;  // throws UsageError/Error with a reason
};

const std::vector<FigureView>& figure_views();
const FigureView& figure_view(const std::string& name);  // throws UsageError
Figure build_figure(const std::string& view, const FigureRequest& request);

// Registered builders.
FigureView make_heatmap_figure();
FigureView make_lines_figure();
FigureView make_arcs_figure();
FigureView make_grid_figure();
FigureView make_formula_figure();
FigureView make_cross_figure();  // encoder–decoders' cross-attention

}  // namespace attnscope
