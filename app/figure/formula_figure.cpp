// The formula softmax(Q·Kᵀ/√d_k)·V with the head's real numbers, step by step (the app's formula
// view, app/views/formula_view.cpp): the scores, the scaled scores and the weights as matrices with
// token labels. Needs the per-head steps, which models keep for short inputs (kStepsMaxTokens).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/figure/figure_style.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
std::string entry(float v) {
  if (std::isinf(v)) return v < 0 ? "\xE2\x88\x92\xE2\x88\x9E" : "\xE2\x88\x9E";
  char buf[16];
  std::snprintf(buf, sizeof buf,
                std::fabs(v) >= 99.5f   ? "%.0f"
                : std::fabs(v) >= 9.95f ? "%.1f"
                                        : "%.2f",
                v);
  return buf;
}

Figure build(const FigureRequest& r) {
  const AttentionTrace& t = *r.trace;
  if (!r.aggregate.empty()) throw UsageError("the formula view shows one head: drop --aggregate");
  request_matrix(r);  // checks layer and head
  const size_t index = static_cast<size_t>(r.layer) * t.heads() + r.head;
  if (index >= t.steps.size() || t.steps[index].weights.size() == 0)
    throw UsageError("the formula view needs the per-head steps, which models keep for up to " +
                     std::to_string(kStepsMaxTokens) +
                     " tokens (and stored traces do not hold): use a shorter text");
  const HeadSteps& s = t.steps[index];
  const FigurePalette pal = figure_palette(r.light);
  const int n = static_cast<int>(s.weights.rows());
  std::vector<std::string> labels(static_cast<size_t>(n));
  float label_w = 0;
  for (int i = 0; i < n; ++i) {
    labels[i] = token_label(t, i, 8);
    label_w = std::max(label_w, text_width(labels[i], kFigureMonoFont, true));
  }
  const float pad = 10.0f, row_h = kFigureMonoFont * 1.5f;
  const float cell_w = std::max(text_width("-00.00", kFigureMonoFont, true),
                                std::min(label_w, text_width("wwwwww", kFigureMonoFont, true))) +
                       kFigureMonoFont * 0.6f;
  const float block_w = label_w + pad + n * cell_w + pad;
  const Matrix* mats[] = {&s.scores, &s.scaled, &s.weights};
  const char* titles[] = {"scores  Q\xC2\xB7K\xE1\xB5\x80",
                          "scaled  \xC3\xB7 \xE2\x88\x9A"
                          "d\xE2\x82\x96",
                          "weights  softmax, rows sum to 1"};
  Figure fig;
  const float natural = pad + 3 * (block_w + pad);
  fig.width = r.width > 0 ? r.width : natural;
  const int per_row = std::max(1, static_cast<int>((fig.width - pad) / (block_w + pad) + 1e-3f));
  const float block_h = kFigureFont * 1.6f + label_w + 6 + n * row_h + pad;
  const float title_h = kFigureTitleFont * 1.8f + kFigureFont * 1.6f;
  fig.height = pad + title_h + ((3 + per_row - 1) / per_row) * (block_h + pad);
  fig.background = pal.background;
  fig.add(FigureText{pad, pad + kFigureTitleFont, request_title(r), kFigureTitleFont, pal.text,
                     FigureText::Anchor::kStart, false, false, true});
  fig.add(FigureText{pad, pad + kFigureTitleFont * 1.8f + kFigureFont,
                     "Attention(Q, K, V) = softmax(Q\xC2\xB7K\xE1\xB5\x80 / \xE2\x88\x9A"
                     "d\xE2\x82\x96) \xC2\xB7 V",
                     kFigureFont, pal.accent});
  for (int b = 0; b < 3; ++b) {
    const float bx = pad + (b % per_row) * (block_w + pad);
    const float by = pad + title_h + (b / per_row) * (block_h + pad);
    fig.add(FigureText{bx, by + kFigureFont, titles[b], kFigureFont, pal.accent});
    const float x0 = bx + label_w + pad, y0 = by + kFigureFont * 1.6f + label_w + 6;
    for (int j = 0; j < n; ++j)
      fig.add(FigureText{x0 + (j + 0.5f) * cell_w + kFigureMonoFont * 0.36f, y0 - 4, labels[j],
                         kFigureMonoFont, pal.text_dim, FigureText::Anchor::kStart, true, true});
    for (int i = 0; i < n; ++i) {
      const float y = y0 + i * row_h;
      if (i == r.focus)
        fig.add(FigureRect{bx, y, block_w - pad, row_h, with_alpha(pal.focus, 0.2f)});
      fig.add(FigureText{x0 - pad, y + row_h / 2 + kFigureMonoFont * 0.36f, labels[i],
                         kFigureMonoFont, i == r.focus ? pal.focus : pal.text_dim,
                         FigureText::Anchor::kEnd, true});
      for (int j = 0; j < n; ++j)
        fig.add(FigureText{x0 + (j + 1) * cell_w - kFigureMonoFont * 0.3f,
                           y + row_h / 2 + kFigureMonoFont * 0.36f, entry((*mats[b])(i, j)),
                           kFigureMonoFont, pal.text, FigureText::Anchor::kEnd, true});
    }
    // Brackets around the numbers.
    const float l = x0 - 3, rr = x0 + n * cell_w + 3, y1 = y0 + n * row_h;
    fig.add(FigurePath{{{l + 4, y0}, {l, y0}, {l, y1}, {l + 4, y1}}, pal.text_dim, 1.2f});
    fig.add(FigurePath{{{rr - 4, y0}, {rr, y0}, {rr, y1}, {rr - 4, y1}}, pal.text_dim, 1.2f});
  }
  return fig;
}
}  // namespace

FigureView make_formula_figure() {
  return {"formula", "softmax(Q·Kᵀ/√d_k)·V step by step with the head's numbers", build};
}

}  // namespace attnscope
