#pragma once
// Queries (rows) × keys (columns) of one head, token labels on both axes, a colorbar with values.
// Hover shows query, key and weight; click locks the query token. Cells come from the GPU
// colormap pass (app/render/heatmap_renderer.h).
#include <cstdint>

#include <imgui.h>

#include "app/render/heatmap_renderer.h"
#include "app/views/view_context.h"

namespace attnscope {

struct HeatmapView {
  GlTexture values;     // float weights
  GlFramebuffer cells;  // one RGBA pixel per weight
  GlTexture bar_values;
  GlFramebuffer bar;  // the colorbar, through the same shader
  // What the textures show now, to redo the GPU pass only when something changed.
  std::shared_ptr<const ShownMatrix> drawn_shown;  // the matrix the cells show
  std::uint64_t drawn_key = 0;

  // Draws into a region of `size` at the cursor.
  void Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size);
};

}  // namespace attnscope
