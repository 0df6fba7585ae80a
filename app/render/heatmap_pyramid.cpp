#include "app/render/heatmap_pyramid.h"

#include <algorithm>
#include <cmath>

#include "core/util/error.h"

namespace attnscope {

namespace {
// Stops halving once a level fits in this many cells a side: smaller than any pane or minimap.
constexpr int kSmallestLevel = 16;

// The maximum of each of out_rows x out_cols contiguous bins (bin r covers input rows
// [r·in/out, (r+1)·in/out)). Rows are pooled first, as whole row vectors (contiguous in a
// row-major matrix, so the inner loop vectorises), then the columns of that one row.
Matrix pool_by_max(const Matrix& m, int out_rows, int out_cols) {
  const int in_rows = static_cast<int>(m.rows()), in_cols = static_cast<int>(m.cols());
  Matrix out(out_rows, out_cols);
  RowVector band(in_cols);
  for (int r = 0; r < out_rows; ++r) {
    const int r0 = static_cast<int>(static_cast<long long>(r) * in_rows / out_rows);
    const int r1 = std::max(r0 + 1, static_cast<int>((r + 1LL) * in_rows / out_rows));
    band = m.row(r0);
    for (int i = r0 + 1; i < r1; ++i) band = band.cwiseMax(m.row(i));
    for (int c = 0; c < out_cols; ++c) {
      const int c0 = static_cast<int>(static_cast<long long>(c) * in_cols / out_cols);
      const int c1 = std::max(c0 + 1, static_cast<int>((c + 1LL) * in_cols / out_cols));
      out(r, c) = band.segment(c0, c1 - c0).maxCoeff();
    }
  }
  return out;
}
}  // namespace

void HeatmapPyramid::reset(const Matrix* matrix, int colormap, float vmin, float vmax) {
  source_ = matrix;
  colormap_ = colormap, vmin_ = vmin, vmax_ = vmax;
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
    m = pool_by_max(finer, rows(level), cols(level));
  }
  return m;
}

const GlFramebuffer& HeatmapPyramid::texture(int level, ColormapRenderer& renderer) {
  if (!source_) throw Error("heatmap pyramid: no matrix");
  level = std::clamp(level, 0, levels() - 1);
  auto& slot = cells_.at(static_cast<size_t>(level));
  if (!slot || slot->width() == 0) {
    if (!slot) slot = std::make_unique<GlFramebuffer>();
    renderer.render(values(level), colormap_, vmin_, vmax_, scratch_, *slot);
  }
  return *slot;
}

}  // namespace attnscope
