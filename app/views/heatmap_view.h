#pragma once
// Queries (rows) × keys (columns) of one head, token labels on both axes, a colorbar with values.
// The grid fills its pane; up to thousands of tokens it zooms (wheel, about the pointer) and pans
// (drag, or the minimap in the corner), and zoomed out it draws a max-pooled level of the matrix
// (app/render/heatmap_pyramid.h) so a single sharp peak stays visible. Labels are drawn at the
// UI font's size (at least kMinLabel of it); where cells are smaller, every k-th token is labelled
// and the hovered, locked and selected ones always are. Hover shows query, key and weight (and
// why a greyed token is greyed); a click locks the query token.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "app/render/heatmap_pyramid.h"
#include "app/render/heatmap_renderer.h"
#include "app/ui/layout.h"
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

// The room around the grid: labels left and above, the colorbar and its ticks right.
struct HeatmapChrome {
  float left = 0, top = 0, right = 0, bottom = 0;
  float width() const { return left + right; }
  float height() const { return top + bottom; }
};

struct HeatmapView {
  HeatmapPyramid cells;  // the matrix and its max-pooled levels, colormapped on the GPU
  GlTexture bar_values;
  GlFramebuffer bar;  // the colorbar, through the same shader
  // What the textures show now, to redo the GPU pass only when something changed.
  std::shared_ptr<const ShownMatrix> drawn_shown;  // the matrix the cells show
  std::uint64_t drawn_key = 0;
  HeatmapViewport viewport;  // the test harness (app/testing) may set it between frames
  double max_zoom = 1.0;     // of the last frame
  int rows = 0, cols = 0;    // of the last frame

  // Draws into a region of `size` at the cursor.
  void Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size);
  // The room its labels and colorbar take around the grid at the current font (the layout
  // sizes the pane from it).
  HeatmapChrome Chrome(const ViewContext& ctx);

 private:
  // Token labels of the drawn trace, computed once per trace (thousands of tokens).
  const AttentionTrace* labels_for = nullptr;
  std::vector<std::string> labels;
  std::vector<float> label_widths;                  // at the UI font size
  float labels_font = 0.0f, labels_density = 0.0f;  // measured at this size and pixel density
  float max_label_w = 0.0f;
  bool dragging = false;

  void UpdateLabels(const AttentionTrace& trace, int count);
  struct Geometry;
  void DrawLabels(ViewContext& ctx, const Geometry& g, nlohmann::json* record);
  void DrawColorbar(ViewContext& ctx, const Geometry& g, nlohmann::json* record);
  void DrawMinimap(ViewContext& ctx, ColormapRenderer& renderer, const Geometry& g,
                   nlohmann::json* record);
  void DrawCutEdges(ViewContext& ctx, const Geometry& g, nlohmann::json* record);
  void Interact(ViewContext& ctx, const Geometry& g, nlohmann::json* record);
};

}  // namespace attnscope
