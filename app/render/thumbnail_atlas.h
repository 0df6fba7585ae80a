#pragma once
// Every layer × head of a trace as thumbnails in ONE texture (the model view's grid): each head's
// matrix, with the sink options applied and max-pooled when it has more than kThumbnailTexels
// rows or columns (a single sharp peak stays visible), is placed by its own colour scale into a
// float atlas of (layers × T) rows and (heads × T) columns, which the colormap shader turns into
// RGBA once. Rebuilt only when the trace, the options or the colormap change; drawing is one quad
// per thumbnail sampling that texture.
#include <memory>
#include <vector>

#include <imgui.h>

#include "app/render/heatmap_renderer.h"
#include "app/views/shown_matrix.h"

namespace attnscope {

inline constexpr int kThumbnailTexels = 64;  // at most this many texels per thumbnail side

class ThumbnailAtlas {
 public:
  // Rebuilds when anything that changes the pixels changed; cheap otherwise.
  void update(ColormapRenderer& renderer, const std::shared_ptr<const AttentionTrace>& trace,
              const ShownOptions& options, int colormap, bool fixed_range);
  bool ready() const { return layers_ > 0 && target_.id() != 0; }
  ImTextureID texture() const {
    return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(target_.color().id()));
  }
  // Texture coordinates of (layer, head)'s thumbnail: top-left and bottom-right.
  ImVec2 uv0(int layer, int head) const;
  ImVec2 uv1(int layer, int head) const;
  int texel_rows() const { return rows_; }   // texels per thumbnail (queries)
  int texel_cols() const { return cols_; }   // (keys)
  int pool_rows() const { return pool_r_; }  // matrix rows per texel (1: no pooling)
  int pool_cols() const { return pool_c_; }
  // The colour scale of each head, [layer * heads + head] (weights after the sink options).
  const ColorScale& scale(int layer, int head) const {
    return scales_[static_cast<size_t>(layer * heads_ + head)];
  }
  int builds() const { return builds_; }  // how often the atlas was rebuilt (tests, bench)

 private:
  GlTexture values_;
  GlFramebuffer target_;
  std::vector<ColorScale> scales_;
  std::shared_ptr<const AttentionTrace> trace_;
  ShownOptions options_;
  int colormap_ = -1;
  bool fixed_ = false;
  int layers_ = 0, heads_ = 0, rows_ = 0, cols_ = 0, pool_r_ = 1, pool_c_ = 1, builds_ = 0;
};

}  // namespace attnscope
