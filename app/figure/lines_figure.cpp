// BertViz's head view as a figure (the app's columns view, app/views/arcs_view.cpp DrawColumns):
// the tokens twice, queries on the left and keys on the right, a line from each query to each key
// whose opacity and width follow the weight. With a focus token its lines stand out.
#include <algorithm>

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
  float label_w = 0;
  for (int i = 0; i < n; ++i) {
    labels[i] = token_label(*r.trace, i, 14);
    label_w = std::max(label_w, text_width(labels[i], kFigureFont));
  }
  const float pad = 8.0f, row_h = std::max(kFigureFont * 1.6f, 6.0f);
  const float title_h = r.title ? kFigureTitleFont * 1.8f : 0.0f;
  Figure fig;
  fig.width = r.width > 0 ? r.width : std::max(360.0f, 2 * (label_w + 2 * pad) + 240.0f);
  const float xl = pad + label_w + pad, xr = fig.width - pad - label_w - pad;
  if (xr - xl < 40.0f) throw UsageError("--width is too small for the token labels");
  const float top = pad + title_h + kFigureFont * 1.8f;
  fig.height = top + n * row_h + pad;
  fig.background = pal.background;
  if (r.title)
    fig.add(FigureText{pad, pad + kFigureTitleFont, request_title(r), kFigureTitleFont, pal.text,
                       FigureText::Anchor::kStart, false, false, true});
  fig.add(FigureText{pad, top - kFigureFont * 0.6f, "queries", kFigureFont, pal.text_dim});
  fig.add(FigureText{fig.width - pad, top - kFigureFont * 0.6f, "keys", kFigureFont, pal.text_dim,
                     FigureText::Anchor::kEnd});
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < n; ++i) {
      const bool focused = i == r.focus;
      if ((pass == 1) != focused) continue;
      const float yi = top + (i + 0.5f) * row_h;
      for (int j = 0; j < n; ++j) {
        const float t = w(i, j) / range.vmax;
        if (t < 0.01f) continue;
        const float alpha = r.focus < 0 ? 0.9f * t : focused ? 0.15f + 0.85f * t : 0.04f + 0.2f * t;
        const float width = r.focus < 0 ? 0.5f + 2.5f * t : focused ? 1.0f + 4.0f * t : 0.5f + t;
        fig.add(FigurePath{
            {{xl + 4, yi}, {xr - 4, top + (j + 0.5f) * row_h}}, with_alpha(pal.arc, alpha), width});
      }
    }
  for (int i = 0; i < n; ++i) {
    const float y = top + (i + 0.5f) * row_h + kFigureFont * 0.36f;
    const bool dim = tokens[i].special || tokens[i].unknown;
    const Rgba c = i == r.focus ? pal.focus : dim ? pal.text_dim : pal.text;
    fig.add(FigureText{xl - 4, y, labels[i], kFigureFont, c, FigureText::Anchor::kEnd});
    fig.add(FigureText{xr + 4, y, labels[i], kFigureFont, dim ? pal.text_dim : pal.text});
  }
  fig.layout["lines"] = {{"xl", xl}, {"xr", xr}, {"top", top}, {"row_h", row_h}, {"n", n}};
  return fig;
}
}  // namespace

FigureView make_lines_figure() {
  return {"lines", "BertViz-style head view: queries left, keys right, a line per weight", build};
}

}  // namespace attnscope
