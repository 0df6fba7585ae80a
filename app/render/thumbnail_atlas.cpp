#include "app/render/thumbnail_atlas.h"

#include <algorithm>

#include "core/analysis/view_transform.h"

namespace attnscope {

void ThumbnailAtlas::update(ColormapRenderer& renderer,
                            const std::shared_ptr<const AttentionTrace>& trace,
                            const ShownOptions& options, int colormap, bool fixed_range) {
  // The aggregate and the query selection do not change a per-head grid: leave them out of the key.
  ShownOptions per_head = options;
  per_head.aggregate.clear();
  per_head.query_sum = false;
  if (!trace || trace->layers() == 0 || trace->heads() == 0 || trace->attention[0][0].size() == 0) {
    layers_ = 0;
    trace_ = trace;
    return;
  }
  if (trace == trace_ && per_head == options_ && colormap == colormap_ && fixed_range == fixed_)
    return;
  trace_ = trace;
  options_ = per_head;
  colormap_ = colormap;
  fixed_ = fixed_range;
  layers_ = trace->layers();
  heads_ = trace->heads();
  const Matrix& first = trace->attention[0][0];
  const int n_rows = static_cast<int>(first.rows()), n_cols = static_cast<int>(first.cols());
  rows_ = std::min(n_rows, kThumbnailTexels);
  cols_ = std::min(n_cols, kThumbnailTexels);
  pool_r_ = (n_rows + rows_ - 1) / rows_;  // the largest block (core/analysis: pool_block)
  pool_c_ = (n_cols + cols_ - 1) / cols_;

  // The atlas holds colormap positions (0..1): each head has its own range, like the heatmap.
  Matrix atlas = Matrix::Zero(layers_ * rows_, heads_ * cols_);
  scales_.assign(static_cast<size_t>(layers_ * heads_), ColorScale{});
  for (int l = 0; l < layers_; ++l)
    for (int h = 0; h < heads_; ++h) {
      const Matrix w = shown_weights(*trace, l, h, per_head);
      const ColorScale scale = make_color_scale(w, colormap, fixed_range, per_head);
      scales_[static_cast<size_t>(l * heads_ + h)] = scale;
      const Matrix pooled = (rows_ < n_rows || cols_ < n_cols) ? max_pool(w, rows_, cols_) : w;
      for (int i = 0; i < pooled.rows() && i < rows_; ++i)
        for (int j = 0; j < pooled.cols() && j < cols_; ++j)
          atlas(l * rows_ + i, h * cols_ + j) = scale.position(pooled(i, j));
    }
  renderer.render(atlas, colormap, 0.0f, 1.0f, values_, target_);
  values_.reset();  // the float copy is not needed once the colours are drawn
  ++builds_;
}

ImVec2 ThumbnailAtlas::uv0(int layer, int head) const {
  return ImVec2(static_cast<float>(head) / heads_, static_cast<float>(layer) / layers_);
}

ImVec2 ThumbnailAtlas::uv1(int layer, int head) const {
  return ImVec2(static_cast<float>(head + 1) / heads_, static_cast<float>(layer + 1) / layers_);
}

}  // namespace attnscope
