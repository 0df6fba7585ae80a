#pragma once
// Queries (rows) × keys (columns) of one head, token labels on both axes, a colorbar with values.
// The grid fills its pane; up to thousands of tokens it zooms (wheel, about the pointer) and pans
// (drag, or the minimap in the corner), and zoomed out it draws a max-pooled level of the matrix
// (app/render/heatmap_pyramid.h) so a single sharp peak stays visible. Labels show wherever they
// fit at the current zoom. Hover shows query, key and weight; a click locks the query token.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/render/heatmap_pyramid.h"
#include "app/render/heatmap_renderer.h"
#include "app/views/draw_util.h"
#include "app/views/view_context.h"

namespace attnscope {

// Which part of the matrix the grid shows: zoom 1 fits the whole matrix; zoom z makes cells z
// times larger, showing rows / z of them from row0 (fractional cells).
struct HeatmapViewport {
  double zoom = 1.0;
  double row0 = 0.0, col0 = 0.0;
  // Keeps the window inside the matrix and the zoom within [1, max_zoom].
  void clamp(int rows, int cols, double max_zoom);
  // Zooms by `factor` keeping the cell (anchor_row, anchor_col) where it is on screen.
  void zoom_about(double factor, double anchor_row, double anchor_col, int rows, int cols,
                  double max_zoom);
};

// A testing/benchmark aid (hidden --heatmap-view Z,ROW,COL[,DROW,DCOL]): the view of sentence 1's
// heatmap once its trace is shown, and how many cells it pans every frame (bouncing at the edges).
struct HeatmapScript {
  double zoom = 1.0, row = 0.0, col = 0.0, pan_rows = 0.0, pan_cols = 0.0;
};
// Parses "Z,ROW,COL[,DROW,DCOL]"; returns false when it is not that.
bool parse_heatmap_script(const std::string& text, HeatmapScript& out);

struct HeatmapView {
  HeatmapPyramid cells;  // the matrix and its max-pooled levels, colormapped on the GPU
  GlTexture bar_values;
  GlFramebuffer bar;  // the colorbar, through the same shader
  // What the textures show now, to redo the GPU pass only when something changed.
  std::shared_ptr<const ShownMatrix> drawn_shown;  // the matrix the cells show
  std::uint64_t drawn_key = 0;
  HeatmapViewport viewport;
  std::unique_ptr<HeatmapScript> script;  // applied once a trace is shown, then kept panning
  bool script_applied = false;

  // Draws into a region of `size` at the cursor.
  void Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size);

 private:
  // Token labels of the drawn trace, computed once per trace (thousands of tokens).
  const AttentionTrace* labels_for = nullptr;
  std::vector<std::string> labels;
  std::vector<float> label_widths;  // at the UI font size
  float labels_font = 0.0f, labels_density = 0.0f;  // measured at this size and pixel density
  float max_label_w = 0.0f;
  bool dragging = false;

  void UpdateLabels(const AttentionTrace& trace, int count);
};

}  // namespace attnscope
