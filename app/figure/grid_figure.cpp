// Every layer x head as a thumbnail heatmap (layers as rows, heads as columns) over one shared
// colour range, so heads can be compared at a glance; one colorbar for all.
#include <algorithm>
#include <cmath>
#include <vector>

#include "app/figure/figure_style.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
// Thumbnails hold at most this many cells a side: above it, each cell is the largest weight of its
// block of tokens (peaks stay visible), so a GPT-2 grid at 1024 tokens stays a small file.
constexpr int kThumbCells = 128;

Matrix block_max(const Matrix& w, int k) {
  const int n = static_cast<int>(w.rows());
  Matrix out = Matrix::Zero(k, k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float& cell = out(static_cast<Eigen::Index>(i) * k / n, static_cast<Eigen::Index>(j) * k / n);
      cell = std::max(cell, w(i, j));
    }
  return out;
}

Figure build(const FigureRequest& r) {
  const FigurePalette pal = figure_palette(r.light);
  const AttentionTrace& t = *r.trace;
  const int layers = t.layers(), heads = t.heads(), n = static_cast<int>(t.tokens.size());
  // Every head with the request's sink options (the aggregate does not apply to a grid), pooled
  // as it is read: a long trace's heads may be recomputed one at a time, never all held.
  ShownOptions options = r.options;
  options.aggregate.clear();
  const int k = std::min(n, kThumbCells);
  std::vector<Matrix> pooled_heads;
  float vmax = 0.0f;
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) {
      Matrix w = shown_weights(t, l, h, options, nullptr, /*cache_head=*/false);
      vmax = std::max(vmax, make_color_scale(w, r.colormap, r.fixed_range, options).vmax);
      pooled_heads.push_back(k < n ? block_max(w, k) : std::move(w));
    }
  ColorScale scale;  // one range shared by every thumbnail
  scale.vmax = vmax > 0 ? vmax : 1.0f;
  scale.log = options.log_scale;
  scale.vmin = scale.log ? std::clamp(options.log_floor, 1e-9f, scale.vmax * 0.5f) : 0.0f;
  const Colormap& map = colormaps().at(static_cast<size_t>(r.colormap));
  const float pad = 8.0f, gap = 4.0f;
  const float title_h = r.title ? kFigureTitleFont * 1.8f : 0.0f;
  const float left = pad + text_width("layer 00", kFigureFont) + pad;
  const float right = 2 * pad + colorbar_width(scale);
  Figure fig;
  fig.width = r.width > 0 ? r.width : std::clamp(left + right + heads * 72.0f, 480.0f, 1400.0f);
  const float thumb = (fig.width - left - right) / heads - gap;
  if (thumb < 4.0f)
    throw UsageError("--width is too small for a grid of " + std::to_string(heads) + " heads");
  const float top = pad + title_h + kFigureFont * 1.6f;
  fig.height = top + layers * (thumb + gap) + pad;
  fig.background = pal.background;
  std::string name = t.model.name.empty() ? t.model.kind : t.model.name;
  if (r.title)
    fig.add(FigureText{pad, pad + kFigureTitleFont,
                       name + " \xC2\xB7 every layer and head \xC2\xB7 " + std::to_string(n) +
                           " tokens" + shown_options_note(options),
                       kFigureTitleFont, pal.text, FigureText::Anchor::kStart, false, false, true});
  // Vector cells while the whole grid stays a reasonable file; rasters beyond.
  const bool vector = static_cast<long long>(layers) * heads * n * n <= 60000;
  for (int h = 0; h < heads; ++h)
    fig.add(FigureText{left + h * (thumb + gap) + thumb / 2, top - kFigureFont * 0.5f,
                       "head " + std::to_string(h), kFigureFont * (thumb < 50 ? 0.75f : 0.9f),
                       pal.text_dim, FigureText::Anchor::kMiddle});
  for (int l = 0; l < layers; ++l) {
    const float y = top + l * (thumb + gap);
    fig.add(FigureText{left - pad, y + thumb / 2 + kFigureFont * 0.36f,
                       "layer " + std::to_string(l), kFigureFont * 0.9f, pal.text_dim,
                       FigureText::Anchor::kEnd});
    for (int h = 0; h < heads; ++h) {
      const Matrix& pooled = pooled_heads[static_cast<size_t>(l * heads + h)];
      add_heatmap_cells(fig, scale.log ? colormap_positions(pooled, scale) : pooled,
                        left + h * (thumb + gap), y, thumb / k, map, 0.0f,
                        scale.log ? 1.0f : scale.vmax, false, l == 0 && h == 0 ? "grid_first" : "",
                        vector ? n : 0);
    }
  }
  const float bar_h = layers * (thumb + gap) - gap;
  add_colorbar(fig, left + heads * (thumb + gap) + pad, top, bar_h, map, scale, pal,
               colorbar_max_ticks(bar_h));
  fig.layout["grid"] = {{"left", left},     {"top", top},     {"thumb", thumb}, {"gap", gap},
                        {"layers", layers}, {"heads", heads}, {"vmax", vmax}};
  return fig;
}
}  // namespace

FigureView make_grid_figure() {
  return {"grid", "every layer x head as a thumbnail, one shared colour range", build};
}

}  // namespace attnscope
