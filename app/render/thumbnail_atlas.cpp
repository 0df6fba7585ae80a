#include "app/render/thumbnail_atlas.h"

#include <algorithm>

#include "core/analysis/view_transform.h"

namespace attnscope {

AtlasValues prepare_atlas(const AttentionTrace& trace, const ShownOptions& per_head,
                          bool fixed_range) {
  AtlasValues v;
  v.layers = trace.layers();
  v.heads = trace.heads();
  const int n_rows = trace.queries(), n_cols = trace.keys();
  v.rows = std::min(n_rows, kThumbnailTexels);
  v.cols = std::min(n_cols, kThumbnailTexels);
  v.pool_rows = (n_rows + v.rows - 1) / v.rows;  // the largest block (core/analysis: pool_block)
  v.pool_cols = (n_cols + v.cols - 1) / v.cols;
  // Colormap positions (0..1): each head has its own range, like the heatmap. One head at a time:
  // a long trace's heads may be recomputed on demand (AttentionTrace::recomputed), never all held.
  v.positions = Matrix::Zero(v.layers * v.rows, v.heads * v.cols);
  v.scales.assign(static_cast<size_t>(v.layers * v.heads), ColorScale{});
  for (int l = 0; l < v.layers; ++l)
    for (int h = 0; h < v.heads; ++h) {
      const Matrix w = shown_weights(trace, l, h, per_head, nullptr, /*cache_head=*/false);
      const ColorScale scale = make_color_scale(w, 0, fixed_range, per_head);
      v.scales[static_cast<size_t>(l * v.heads + h)] = scale;
      const Matrix pooled = (v.rows < n_rows || v.cols < n_cols) ? max_pool(w, v.rows, v.cols) : w;
      for (int i = 0; i < pooled.rows() && i < v.rows; ++i)
        for (int j = 0; j < pooled.cols() && j < v.cols; ++j)
          v.positions(l * v.rows + i, h * v.cols + j) = scale.position(pooled(i, j));
    }
  return v;
}

void ThumbnailAtlas::update(ColormapRenderer& renderer,
                            const std::shared_ptr<const AttentionTrace>& trace,
                            const ShownOptions& options, int colormap, bool fixed_range) {
  // The aggregate and the query selection do not change a per-head grid: leave them out.
  ShownOptions per_head = options;
  per_head.aggregate.clear();
  per_head.query_sum = false;
  if (!trace || trace->layers() == 0 || trace->heads() == 0 || trace->queries() == 0 ||
      trace->keys() == 0) {
    ready_ = false;
    asked_trace_ = trace;
    return;
  }
  if (trace != asked_trace_ || !(per_head == asked_options_) || fixed_range != asked_fixed_) {
    asked_trace_ = trace;
    asked_options_ = per_head;
    asked_fixed_ = fixed_range;
    ready_ = false;
    pending_.start(
        [trace, per_head, fixed_range] { return prepare_atlas(*trace, per_head, fixed_range); });
  }
  AtlasValues done;
  if (pending_.take(done, error_)) {
    if (error_.empty()) values_ = std::move(done);
    drawn_trace_ = asked_trace_;
    drawn_colormap_ = -1;  // upload below
  }
  if (drawn_trace_ != asked_trace_ || values_.layers == 0 || !error_.empty()) return;
  if (drawn_colormap_ != colormap) {
    renderer.render(values_.positions, colormap, 0.0f, 1.0f, scratch_, target_);
    scratch_.reset();  // the float copy is not needed once the colours are drawn
    for (ColorScale& s : values_.scales) s.colormap = colormap;
    drawn_colormap_ = colormap;
    ++builds_;
  }
  ready_ = true;
}

ImVec2 ThumbnailAtlas::uv0(int layer, int head) const {
  return ImVec2(static_cast<float>(head) / values_.heads,
                static_cast<float>(layer) / values_.layers);
}

ImVec2 ThumbnailAtlas::uv1(int layer, int head) const {
  return ImVec2(static_cast<float>(head + 1) / values_.heads,
                static_cast<float>(layer + 1) / values_.layers);
}

}  // namespace attnscope
