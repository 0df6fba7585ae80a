#pragma once
// A max-pooled pyramid of one weight matrix, for drawing it smaller than one pixel per cell.
// Level 0 is the matrix; level k halves level k-1 in each dimension by taking the maximum of each
// bin, so a single sharp peak survives every level. A view picks the first level whose texels
// are at least one screen pixel wide: nearest sampling then hits every texel, so no peak is ever
// skipped (plain nearest sampling of a 4,096-cell row drawn on 600 pixels drops six cells in
// seven). Levels are pooled on the CPU and colormapped on the GPU only when first drawn, so
// panning costs one textured quad a frame.
#include <memory>
#include <vector>

#include "app/render/gl_objects.h"
#include "app/render/heatmap_renderer.h"
#include "app/views/shown_matrix.h"
#include "core/util/matrix.h"

namespace attnscope {

class HeatmapPyramid {
 public:
  // Starts over with `matrix` (the caller keeps it alive) and the colours it is drawn with. The
  // scale is monotonic, so the maximum of a bin's colours is the colour of its maximum weight.
  void reset(const Matrix* matrix, const ColorScale& scale);
  bool empty() const { return source_ == nullptr; }
  int levels() const { return static_cast<int>(sizes_.size()); }
  int rows(int level) const { return sizes_.at(static_cast<size_t>(level)).first; }
  int cols(int level) const { return sizes_.at(static_cast<size_t>(level)).second; }
  // The first level whose texels span at least one pixel when a cell spans `cell_px` pixels.
  int level_for(double cell_px) const;
  // The level's colored cells (rendered on first use): cols(level) x rows(level) RGBA pixels.
  const GlFramebuffer& texture(int level, ColormapRenderer& renderer);

 private:
  const Matrix& values(int level);  // level 0: the source; others pooled on first use

  const Matrix* source_ = nullptr;
  ColorScale scale_;
  std::vector<std::pair<int, int>> sizes_;  // rows, cols of each level
  std::vector<Matrix> pooled_;              // pooled_[k - 1] is level k (empty: not yet)
  std::vector<std::unique_ptr<GlFramebuffer>> cells_;
  GlTexture scratch_;  // the float upload the colormap pass reads
};

}  // namespace attnscope
