// BertViz's head view as a figure: what the app's columns view (app/views/arcs_view.cpp,
// DrawColumnLines) shows for the same choice. The tokens twice, queries on the left and keys on
// the right; from each query a line to each of its top-k keys (shown_top_k and top_k_threshold,
// as the window), opacity and width following the weight; the focused or selected queries' lines
// stand out (with a focus beyond 24 tokens only theirs are drawn, as in the window).
#include <algorithm>
#include <cstdio>

#include "app/figure/figure_style.h"
#include "app/views/arcs_view.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
Figure build(const FigureRequest& r) {
  const FigurePalette pal = figure_palette(r.light);
  const ShownMatrix shown = request_shown(r);  // what the window's views draw
  const Matrix& w = shown.weights;
  const Tokens& tokens = r.trace->tokens;
  const int n = static_cast<int>(w.rows()), m = static_cast<int>(w.cols());
  const ColorScale& range = shown.scale;
  // A long trace is thinned to what can be seen: at most kMaxFigureLines lines in all (4,096
  // tokens of tied weights drew 16 million lines: 3 GB of SVG and 30 s), each query keeping its
  // strongest keys (ties broken by position), and the figure says so.
  constexpr long kMaxFigureLines = 20000;
  const auto chosen = [&](int i) {
    return i == r.focus || std::binary_search(shown.queries.begin(), shown.queries.end(), i);
  };
  int top_k = shown_top_k(r.top_k, m);
  const auto lines_at = [&](int k, std::vector<float>& keep) {  // what the window would draw
    long total = 0;
    keep.assign(static_cast<size_t>(n), 0.0f);
    for (int i = 0; i < n; ++i) {
      keep[i] = top_k_threshold(w, i, k);
      if (r.focus >= 0 && n > 24 && !chosen(i)) continue;  // only the focused query's lines
      for (int j = 0; j < m; ++j) total += w(i, j) >= keep[i] && w(i, j) >= 0.01f * range.vmax;
    }
    return total;
  };
  std::vector<float> keep;
  const bool thinned = lines_at(top_k, keep) > kMaxFigureLines;
  if (thinned) {
    top_k = static_cast<int>(std::clamp<long>(kMaxFigureLines / n, 1, top_k));
    lines_at(top_k, keep);
  }
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
  const float caption_h = thinned ? kFigureFont * 1.4f : 0.0f;
  const float top = pad + title_h + caption_h + kFigureFont * 1.8f;
  fig.height = top + n * row_h + pad;
  fig.background = pal.background;
  const std::string title = request_title(r, shown, &fig);
  if (r.title)
    fig.add(FigureText{pad, pad + kFigureTitleFont, title, kFigureTitleFont, pal.text,
                       FigureText::Anchor::kStart, false, false, true});
  char caption[160] = "";
  if (thinned) {
    std::snprintf(caption, sizeof caption,
                  "showing the %d strongest key%s of each query (%d tokens: thinned to fit)", top_k,
                  top_k == 1 ? "" : "s", n);
    fig.add(
        FigureText{pad, pad + title_h + kFigureFont, caption, kFigureFont * 0.9f, pal.text_dim});
  }
  fig.add(FigureText{pad, top - kFigureFont * 0.6f, "queries", kFigureFont, pal.text_dim});
  fig.add(FigureText{fig.width - pad, top - kFigureFont * 0.6f, "keys", kFigureFont, pal.text_dim,
                     FigureText::Anchor::kEnd});
  if (top_k < m) {  // say that lines were left out, between the headers (as the window does)
    char note[24];
    std::snprintf(note, sizeof note, "top %d", top_k);
    fig.add(FigureText{(xl + xr) / 2, top - kFigureFont * 0.6f, note, kFigureFont, pal.text_dim,
                       FigureText::Anchor::kMiddle});
  }
  nlohmann::json drawn = nlohmann::json::array();
  // Faint lines for every query, then the focused (or selected) queries' lines on top, strong.
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < n; ++i) {
      const bool focused = chosen(i);
      if ((pass == 1) != focused || (pass == 0 && r.focus >= 0 && n > 24)) continue;
      const float yi = top + (i + 0.5f) * row_h;
      // Each query's top-k keys only. Keys tied at the threshold are all drawn, as the window
      // does, unless the figure is thinned: then no more than top_k (the earliest tied keys).
      int ties = top_k;
      if (thinned)
        for (int j = 0; j < m; ++j) ties -= w(i, j) > keep[i] ? 1 : 0;
      for (int j = 0; j < m; ++j) {
        const float t = w(i, j) / range.vmax;
        if (t < 0.01f || w(i, j) < keep[i]) continue;
        if (thinned && w(i, j) == keep[i] && ties-- <= 0) continue;
        const float alpha = focused ? 0.15f + 0.85f * t : 0.06f + 0.3f * t;
        const float width = focused ? 1.0f + 5.0f * t : 1.0f + 1.5f * t;
        fig.add(FigurePath{
            {{xl + 4, yi}, {xr - 4, top + (j + 0.5f) * row_h}}, with_alpha(pal.arc, alpha), width});
        drawn.push_back({{"query", i}, {"key", j}, {"weight", w(i, j)}, {"strong", focused}});
      }
    }
  for (int i = 0; i < n; ++i) {
    const float y = top + (i + 0.5f) * row_h + kFigureFont * 0.36f;
    const bool dim = tokens[i].special || tokens[i].unknown;
    const Rgba c = chosen(i) ? pal.focus : dim ? pal.text_dim : pal.text;
    fig.add(FigureText{xl - 4, y, labels[i], kFigureFont, c, FigureText::Anchor::kEnd});
    fig.add(FigureText{xr + 4, y, labels[i], kFigureFont, dim ? pal.text_dim : pal.text});
  }
  fig.layout["lines"] = {{"xl", xl},         {"xr", xr},       {"top", top},
                         {"row_h", row_h},   {"n", n},         {"top_k", top_k},
                         {"focus", r.focus}, {"drawn", drawn}, {"caption", caption}};
  return fig;
}
}  // namespace

FigureView make_lines_figure() {
  return {"lines", "BertViz-style head view: queries left, keys right, a line per weight", build};
}

}  // namespace attnscope
