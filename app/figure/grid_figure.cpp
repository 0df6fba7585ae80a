// Every layer x head as a thumbnail heatmap (layers as rows, heads as columns) over one shared
// colour range, so heads can be compared at a glance; one colorbar for all.
#include <algorithm>
#include <cmath>

#include "app/figure/figure_style.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
Figure build(const FigureRequest& r) {
  const FigurePalette pal = figure_palette(r.light);
  const AttentionTrace& t = *r.trace;
  const int layers = t.layers(), heads = t.heads(), n = static_cast<int>(t.tokens.size());
  float vmax = 0.0f;
  for (const auto& layer : t.attention)
    for (const Matrix& w : layer) vmax = std::max(vmax, weight_range(w, r.fixed_range).vmax);
  const Colormap& map = colormaps().at(static_cast<size_t>(r.colormap));
  const float pad = 8.0f, gap = 4.0f;
  const float title_h = r.title ? kFigureTitleFont * 1.8f : 0.0f;
  const float left = pad + text_width("layer 00", kFigureFont) + pad;
  const float right = 2 * pad + colorbar_width();
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
    fig.add(FigureText{
        pad, pad + kFigureTitleFont,
        name + " \xC2\xB7 every layer and head \xC2\xB7 " + std::to_string(n) + " tokens",
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
    for (int h = 0; h < heads; ++h)
      add_heatmap_cells(fig, t.attention[l][h], left + h * (thumb + gap), y, thumb / n, map, 0.0f,
                        vmax > 0 ? vmax : 1.0f, false, l == 0 && h == 0 ? "grid_first" : "",
                        vector ? n : 0);
  }
  add_colorbar(fig, left + heads * (thumb + gap) + pad, top, layers * (thumb + gap) - gap, map,
               0.0f, vmax > 0 ? vmax : 1.0f, pal);
  fig.layout["grid"] = {{"left", left},     {"top", top},     {"thumb", thumb}, {"gap", gap},
                        {"layers", layers}, {"heads", heads}, {"vmax", vmax}};
  return fig;
}
}  // namespace

FigureView make_grid_figure() {
  return {"grid", "every layer x head as a thumbnail, one shared colour range", build};
}

}  // namespace attnscope
