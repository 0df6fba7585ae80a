// The arc diagram as a figure (the app's DrawArcDiagram, app/views/arcs_view.cpp): the tokens on a
// line, an arc from a query to each key it attends to, thicker and stronger for larger weights.
// With --focus only that query's arcs, the three strongest labelled; without, every query's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "app/figure/figure_style.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
Figure build(const FigureRequest& r) {
  const FigurePalette pal = figure_palette(r.light);
  const Matrix w = request_matrix(r);
  const Tokens& tokens = r.trace->tokens;
  const int n = static_cast<int>(w.rows());
  const ColorScale range = request_scale(r, w);
  std::vector<std::string> labels(static_cast<size_t>(n));
  std::vector<float> widths(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    labels[j] = token_label(*r.trace, j, 10);
    widths[j] = text_width(labels[j], kFigureFont) + kFigureFont * 0.8f;
  }
  const float pad = 8.0f, total = std::accumulate(widths.begin(), widths.end(), 0.0f);
  Figure fig;
  fig.width = r.width > 0 ? r.width : std::max(400.0f, total + 2 * pad);
  const float k = std::min(1.0f, (fig.width - 2 * pad) / total);
  std::vector<float> centers(static_cast<size_t>(n));
  float x = (fig.width - total * k) / 2;
  for (int j = 0; j < n; ++j) centers[j] = x + widths[j] * k / 2, x += widths[j] * k;
  const float span = centers.empty() ? 0 : centers.back() - centers.front();
  const float max_h = std::min(260.0f, span * 0.55f + kFigureFont);
  const float title_h = r.title ? kFigureTitleFont * 1.8f : 0.0f;
  const float baseline = pad + title_h + max_h + kFigureMonoFont * 1.5f;
  fig.height = baseline + kFigureFont * 1.8f + pad;
  fig.background = pal.background;
  if (r.title)
    fig.add(FigureText{
        pad, pad + kFigureTitleFont,
        request_title(r) + (r.focus >= 0 ? " \xC2\xB7 query \xE2\x80\x9C" +
                                               token_label(*r.trace, r.focus, 10) + "\xE2\x80\x9D"
                                         : std::string()),
        kFigureTitleFont, pal.text, FigureText::Anchor::kStart, false, false, true});
  auto arc = [&](int i, int j, float t, bool strong) {
    const Rgba c = with_alpha(pal.arc, strong ? 0.25f + 0.75f * t : 0.75f * t);
    const float thickness = strong ? 1.0f + 7.0f * t : 0.5f + 3.0f * t;
    if (i == j) {  // attention to itself: a small loop above the token
      const float cx = centers[i], h = kFigureFont * 1.2f;
      fig.add(FigurePath{{{cx - 3, baseline},
                          {cx - h, baseline - h * 1.4f},
                          {cx + h, baseline - h * 1.4f},
                          {cx + 3, baseline}},
                         c,
                         thickness,
                         true});
      return 0.0f;
    }
    const float dx = std::fabs(centers[j] - centers[i]);
    const float hgt = std::min(max_h, dx * 0.55f + kFigureFont * 0.5f);
    fig.add(FigurePath{{{centers[i], baseline},
                        {centers[i], baseline - hgt * 1.33f},
                        {centers[j], baseline - hgt * 1.33f},
                        {centers[j], baseline}},
                       c,
                       thickness,
                       true});
    return hgt;
  };
  if (r.focus >= 0) {
    const int f = r.focus;
    std::vector<int> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return w(f, a) > w(f, b); });
    for (int j = 0; j < n; ++j) {
      const float t = w(f, j) / range.vmax;
      if (t < 0.005f) continue;
      const float hgt = arc(f, j, t, true);
      if (std::find(order.begin(), order.begin() + std::min(3, n), j) ==
              order.begin() + std::min(3, n) ||
          j == f)
        continue;
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.2f", w(f, j));
      fig.add(FigureText{(centers[f] + centers[j]) / 2, baseline - hgt - 3, buf, kFigureMonoFont,
                         pal.text, FigureText::Anchor::kMiddle, true});
    }
  } else {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const float t = w(i, j) / range.vmax;
        if (t >= 0.05f) arc(i, j, t, false);
      }
  }
  for (int j = 0; j < n; ++j) {
    const bool dim = tokens[j].special || tokens[j].unknown;
    const Rgba c = j == r.focus ? pal.focus : dim ? pal.text_dim : pal.text;
    if (text_width(labels[j], kFigureFont) <= widths[j] * k || j == r.focus)
      fig.add(FigureText{centers[j], baseline + kFigureFont * 1.25f, labels[j], kFigureFont, c,
                         FigureText::Anchor::kMiddle});
  }
  fig.layout["arcs"] = {{"baseline", baseline}, {"centers", centers}};
  return fig;
}
}  // namespace

FigureView make_arcs_figure() {
  return {"arcs", "arc diagram: tokens on a line, arcs from queries to the keys they attend to",
          build};
}

}  // namespace attnscope
