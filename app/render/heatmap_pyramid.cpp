#include "app/render/heatmap_pyramid.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/view_transform.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
// Stops halving once a level fits in this many cells a side: smaller than any pane or minimap.
constexpr int kSmallestLevel = 16;

}  // namespace

void HeatmapPyramid::reset(const Matrix* matrix, const ColorScale& scale) {
  source_ = matrix;
  scale_ = scale;
  sizes_.clear();
  pooled_.clear();
  for (auto& c : cells_)
    if (c) c->reset();
  cells_.clear();
  if (!matrix || matrix->size() == 0) {
    source_ = nullptr;
    return;
  }
  int r = static_cast<int>(matrix->rows()), c = static_cast<int>(matrix->cols());
  sizes_.emplace_back(r, c);
  while (std::max(r, c) > kSmallestLevel) {
    r = (r + 1) / 2, c = (c + 1) / 2;
    sizes_.emplace_back(r, c);
  }
  pooled_.resize(sizes_.size() - 1);
  cells_.resize(sizes_.size());
}

int HeatmapPyramid::level_for(double cell_px) const {
  if (sizes_.empty() || cell_px <= 0) return 0;
  for (int k = 0; k < levels(); ++k) {
    // A texel of level k covers rows(0)/rows(k) cells down and cols(0)/cols(k) across.
    const double down = cell_px * rows(0) / rows(k), across = cell_px * cols(0) / cols(k);
    if ((down >= 1.0 || rows(k) == 1) && (across >= 1.0 || cols(k) == 1)) return k;
  }
  return levels() - 1;
}

const Matrix& HeatmapPyramid::values(int level) {
  if (level == 0) return *source_;
  Matrix& m = pooled_.at(static_cast<size_t>(level - 1));
  if (m.size() == 0) {
    const Matrix& finer = values(level - 1);
    m = max_pool(finer, rows(level), cols(level));  // core/analysis: a hot cell survives
  }
  return m;
}

const GlFramebuffer& HeatmapPyramid::texture(int level, ColormapRenderer& renderer) {
  if (!source_) throw Error("heatmap pyramid: no matrix");
  level = std::clamp(level, 0, levels() - 1);
  auto& slot = cells_.at(static_cast<size_t>(level));
  if (!slot || slot->width() == 0) {
    if (!slot) slot = std::make_unique<GlFramebuffer>();
    const Matrix& v = values(level);
    if (scale_.log)  // the GPU pass maps linearly: upload each weight's colormap position
      renderer.render(Matrix(v.unaryExpr([&](float w) { return scale_.position(w); })),
                      scale_.colormap, 0.0f, 1.0f, scratch_, *slot);
    else
      renderer.render(v, scale_.colormap, scale_.vmin, scale_.vmax, scratch_, *slot);
  }
  return *slot;
}

}  // namespace attnscope
