// The arc diagram as a figure: what the app's arc diagram (app/views/arcs_view.cpp,
// DrawArcDiagram) shows for the same choice. The tokens on a line; from the focused query (else a
// decoder's last token, else the selected queries' combined row) an arc to each of its top-k keys
// (shown_top_k and top_k_threshold, as the window), the three strongest labelled; with none of
// these, each query's strongest key. Thicker and stronger for larger weights.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

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
  const int n = static_cast<int>(w.cols());
  const ColorScale& range = shown.scale;
  // The window's choice of what to draw (DrawArcDiagram): the selection's combined row, the
  // focused query, a decoder's last token, or every query's strongest key.
  const bool selection = !shown.queries.empty();
  int f = !selection && r.focus >= 0 && r.focus < w.rows() ? r.focus : -1;
  std::string mode = selection ? "selection" : "query";
  if (!selection && f < 0 && is_causal(w)) f = static_cast<int>(w.rows()) - 1, mode = "last";
  if (!selection && f < 0) mode = "strongest";
  const float* row = selection ? shown.combined.data() : f >= 0 ? &w(f, 0) : nullptr;
  const int top_k = shown_top_k(r.top_k, n);
  const float threshold = row ? top_k_threshold(row, n, top_k) : 0.0f;
  const std::vector<Arc> arcs = choose_arcs(w, row, f, top_k, range.vmax);

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
  const float title_h = r.title ? kFigureTitleFont * 1.8f + kFigureFont * 1.4f : 0.0f;
  const float baseline = pad + title_h + max_h + kFigureMonoFont * 1.5f;
  fig.height = baseline + kFigureFont * 1.8f + pad;
  fig.background = pal.background;
  const std::string title = request_title(r, shown, &fig);
  // The window's header line: whose arcs, how many, from which weight on.
  char what[160];
  const std::string who = f >= 0 ? token_label(*r.trace, f, 14) : std::string();
  if (selection)
    std::snprintf(what, sizeof what,
                  "%d selected queries: their %d strongest keys (weight \xE2\x89\xA5 %.3f)",
                  static_cast<int>(shown.queries.size()), top_k, threshold);
  else if (f >= 0)
    std::snprintf(
        what, sizeof what,
        "%squery \xE2\x80\x9C%s\xE2\x80\x9D: its %d strongest keys (weight \xE2\x89\xA5 %.3f)",
        mode == "last" ? "last " : "", who.c_str(), top_k, threshold);
  else
    std::snprintf(what, sizeof what, "the strongest key of every query");
  if (r.title) {
    fig.add(FigureText{pad, pad + kFigureTitleFont, title, kFigureTitleFont, pal.text,
                       FigureText::Anchor::kStart, false, false, true});
    fig.add(FigureText{pad, pad + kFigureTitleFont + kFigureFont * 1.4f, what, kFigureFont * 0.9f,
                       pal.text_dim});
  }
  float selection_x = 0;
  for (int q : shown.queries) selection_x += centers[std::clamp(q, 0, n - 1)];
  if (selection) selection_x /= static_cast<float>(shown.queries.size());
  const auto x_of = [&](int i) { return i >= 0 ? centers[i] : selection_x; };
  const auto height_of = [&](const Arc& a) {
    return std::min(max_h, std::fabs(centers[a.to] - x_of(a.from)) * 0.55f + kFigureFont * 0.5f);
  };
  nlohmann::json drawn = nlohmann::json::array();
  for (auto it = arcs.rbegin(); it != arcs.rend(); ++it) {  // strongest drawn last, on top
    const float t = it->weight / range.vmax;
    const Rgba c = with_alpha(pal.arc, row ? 0.25f + 0.75f * t : 0.15f + 0.6f * t);
    const float thickness = row ? 1.0f + 7.0f * t : 1.0f + 3.0f * t;
    if (it->to == it->from) {  // attention to itself: a small loop above the token
      const float cx = centers[it->to], h = kFigureFont * 1.2f;
      fig.add(FigurePath{{{cx - 3, baseline},
                          {cx - h, baseline - h * 1.4f},
                          {cx + h, baseline - h * 1.4f},
                          {cx + 3, baseline}},
                         c,
                         thickness,
                         true});
    } else {
      const float hgt = height_of(*it), x0 = x_of(it->from), x1 = centers[it->to];
      fig.add(FigurePath{{{x0, baseline},
                          {x0, baseline - hgt * 1.33f},
                          {x1, baseline - hgt * 1.33f},
                          {x1, baseline}},
                         c,
                         thickness,
                         true});
    }
  }
  for (const Arc& a : arcs) drawn.push_back({{"from", a.from}, {"to", a.to}, {"weight", a.weight}});
  // The three strongest arcs' weights, above their apex.
  if (row)
    for (size_t i = 0; i < arcs.size() && i < 3; ++i) {
      const Arc& a = arcs[i];
      if (a.to == a.from) continue;
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.2f", a.weight);
      fig.add(FigureText{(x_of(a.from) + centers[a.to]) / 2, baseline - height_of(a) - 3, buf,
                         kFigureMonoFont, pal.text, FigureText::Anchor::kMiddle, true});
    }
  for (int j = 0; j < n; ++j) {
    const bool dim = tokens[j].special || tokens[j].unknown;
    const bool chosen = j == f || std::binary_search(shown.queries.begin(), shown.queries.end(), j);
    const Rgba c = chosen ? pal.focus : dim ? pal.text_dim : pal.text;
    if (text_width(labels[j], kFigureFont) <= widths[j] * k || chosen)
      fig.add(FigureText{centers[j], baseline + kFigureFont * 1.25f, labels[j], kFigureFont, c,
                         FigureText::Anchor::kMiddle});
  }
  fig.layout["arcs"] = {{"baseline", baseline}, {"centers", centers}, {"mode", mode},
                        {"query", f},           {"top_k", top_k},     {"threshold", threshold},
                        {"header", what},       {"drawn", drawn}};
  return fig;
}
}  // namespace

FigureView make_arcs_figure() {
  return {"arcs", "arc diagram: tokens on a line, arcs from queries to the keys they attend to",
          build};
}

}  // namespace attnscope
