// The heatmap as a figure: the app's heatmap view (app/views/heatmap_view.cpp) for a page — token
// labels on both axes (columns rotated), cells in the colormap over the same weight range, numbers
// in cells large enough to hold them, a colorbar with ticks.
#include <algorithm>
#include <cmath>

#include "app/figure/figure_style.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
constexpr int kMaxLabelChars = 12;

Figure build(const FigureRequest& r) {
  const FigurePalette pal = figure_palette(r.light);
  const ShownMatrix shown = request_shown(r);  // what the window's heatmap draws
  const Matrix& w = shown.weights;
  const Tokens& tokens = r.trace->tokens;
  const int n = static_cast<int>(w.rows());
  const ColorScale& range = shown.scale;
  const Colormap& map = colormaps().at(static_cast<size_t>(r.colormap));

  std::vector<std::string> labels(static_cast<size_t>(n));
  float label_w = 0;
  for (int i = 0; i < n; ++i) {
    labels[i] = token_label(*r.trace, i, kMaxLabelChars);
    label_w = std::max(label_w, text_width(labels[i], kFigureFont));
  }
  const float pad = 8.0f;
  const float title_h = r.title ? kFigureTitleFont * 1.8f + kFigureFont * 1.2f : 0.0f;
  const float left = pad + label_w + pad, top = pad + title_h + label_w + pad;
  const float right = 2 * pad + colorbar_width(range) + pad;
  // Natural size: cells of 2.6 label heights up to 16 tokens, shrinking to fit 900 px.
  const float width = r.width > 0 ? r.width
                                  : std::clamp(left + right + n * kFigureFont * 2.6f, 320.0f,
                                               std::max(900.0f, left + right + n * 2.0f));
  const float cell = (width - left - right) / std::max(n, 1);
  if (cell <= 0.5f)
    throw UsageError("--width " + std::to_string(static_cast<int>(width)) +
                     " leaves no room for the cells of " + std::to_string(n) + " tokens");
  Figure fig;
  fig.width = width;
  fig.height = std::ceil(top + cell * n + pad * 2);
  fig.background = pal.background;
  const std::string title = request_title(r, shown, &fig);
  if (r.title)
    fig.add(FigureText{pad, pad + kFigureTitleFont, title, kFigureTitleFont, pal.text,
                       FigureText::Anchor::kStart, false, false, true});

  const bool numbers = cell >= kFigureMonoFont * 2.6f;
  if (range.log)  // cells coloured by their position on the log scale (no numbers: they are
                  // positions)
    add_heatmap_cells(fig, colormap_positions(w, range), left, top, cell, map, 0.0f, 1.0f, false,
                      "heatmap");
  else
    add_heatmap_cells(fig, w, left, top, cell, map, range.vmin, range.vmax, numbers, "heatmap");
  // Labels; with small cells only every k-th one, as the app does.
  const int every = std::max(1, static_cast<int>(std::ceil(kFigureFont * 0.95f / cell)));
  for (int i = 0; i < n; i += every) {
    const Token& t = tokens[i];
    const Rgba c = i == r.focus ? pal.focus : (t.special || t.unknown) ? pal.text_dim : pal.text;
    const float mid = (i + 0.5f) * cell + kFigureFont * 0.36f;
    fig.add(FigureText{left - pad, top + mid, labels[i], kFigureFont, c, FigureText::Anchor::kEnd});
    fig.add(FigureText{left + mid, top - pad, labels[i], kFigureFont, c, FigureText::Anchor::kStart,
                       false, true});
  }
  if (r.title)
    fig.add(FigureText{pad, pad + kFigureTitleFont + kFigureFont * 1.4f,
                       "rows: queries \xC2\xB7 columns: keys", kFigureFont * 0.9f, pal.text_dim});
  // The selected queries' rows outlined, as the window marks them.
  for (int q : shown.queries)
    fig.add(
        FigureRect{left, top + q * cell, cell * n, cell, Rgba{0, 0, 0, 0}, false, 1.5f, pal.focus});
  add_colorbar(fig, left + cell * n + 2 * pad, top, cell * n, map, range, pal,
               colorbar_max_ticks(cell * n));
  return fig;
}
}  // namespace

FigureView make_heatmap_figure() {
  return {"heatmap", "the attention matrix, queries as rows and keys as columns", build};
}

}  // namespace attnscope
