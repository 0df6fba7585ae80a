#pragma once
// Every layer × head of a trace as thumbnails in ONE texture (the model view's grid): each head's
// matrix, with the sink options applied and max-pooled when it has more than kThumbnailTexels
// rows or columns (a single sharp peak stays visible), is placed by its own colour scale into a
// float atlas of (layers × T) rows and (heads × T) columns, which the colormap shader turns into
// RGBA once. The float atlas is prepared on a background thread (a long trace of a large model is
// gigabytes of weights to read); the GPU pass runs when it is ready or the colormap changes, and
// drawing is one quad per thumbnail sampling that texture.
#include <memory>
#include <vector>

#include <imgui.h>

#include "app/render/heatmap_renderer.h"
#include "app/ui/background_task.h"
#include "app/ui/imgui_compat.h"
#include "app/views/shown_matrix.h"

namespace attnscope {

inline constexpr int kThumbnailTexels = 64;  // at most this many texels per thumbnail side

// What the CPU prepares: colormap positions (0..1) of every head, pooled, side by side.
struct AtlasValues {
  int layers = 0, heads = 0, rows = 0, cols = 0;  // rows x cols texels per thumbnail
  int pool_rows = 1, pool_cols = 1;               // the largest pooled block
  Matrix positions;                               // [layers·rows x heads·cols]
  std::vector<ColorScale> scales;                 // [layer * heads + head]
};
AtlasValues prepare_atlas(const AttentionTrace& trace, const ShownOptions& per_head_options,
                          bool fixed_range);

class ThumbnailAtlas {
 public:
  // Starts a preparation when the trace or the options changed, uploads a finished one, redoes
  // the GPU pass when the colormap changed; cheap otherwise. Never waits.
  void update(ColormapRenderer& renderer, const std::shared_ptr<const AttentionTrace>& trace,
              const ShownOptions& options, int colormap, bool fixed_range);
  // The atlas shows the trace last passed to update (false while it is being prepared).
  bool ready() const { return ready_; }
  bool busy() const { return pending_.busy(); }        // a preparation is running
  const std::string& error() const { return error_; }  // why the last preparation failed
  ImTextureID texture() const { return imgui_compat::texture_id(target_.color().id()); }
  // Texture coordinates of (layer, head)'s thumbnail: top-left and bottom-right.
  ImVec2 uv0(int layer, int head) const;
  ImVec2 uv1(int layer, int head) const;
  int texel_rows() const { return values_.rows; }      // texels per thumbnail (queries)
  int texel_cols() const { return values_.cols; }      // (keys)
  int pool_rows() const { return values_.pool_rows; }  // matrix rows per texel, at most
  int pool_cols() const { return values_.pool_cols; }
  // The colour scale of each head (weights after the sink options).
  const ColorScale& scale(int layer, int head) const {
    return values_.scales[static_cast<size_t>(layer * values_.heads + head)];
  }
  int builds() const { return builds_; }  // GPU passes so far (tests, bench)

 private:
  GlTexture scratch_;
  GlFramebuffer target_;
  AtlasValues values_;
  BackgroundTask<AtlasValues> pending_;
  std::string error_;
  // What was asked last, and what the texture shows.
  std::shared_ptr<const AttentionTrace> asked_trace_, drawn_trace_;
  ShownOptions asked_options_;
  bool asked_fixed_ = false, ready_ = false;
  int drawn_colormap_ = -1, builds_ = 0;
};

}  // namespace attnscope
