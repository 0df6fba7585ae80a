// An encoder–decoder's cross-attention as a figure (`render --view cross`): the window's
// Cross-attention heatmap (app/views/seq2seq_view.cpp) for a page — target tokens (the decoder's
// queries) as rows, source tokens (the encoder's keys) as columns, each side labelled with its own
// tokens, cells in the colormap over the same range, a colorbar. --layer/--head are the decoder's.
#include <algorithm>
#include <cmath>

#include "app/figure/figure_style.h"
#include "app/views/draw_util.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
constexpr int kMaxLabelChars = 12;

const Matrix& cross_matrix(const FigureRequest& r) {
  const DecoderTrace* d = r.trace->decoder.get();
  if (!d)
    throw UsageError(
        "--view cross needs an encoder-decoder's trace (bart, marian, t5): this one has no "
        "decoder");
  if (!r.aggregate.empty())
    throw UsageError("--view cross draws one decoder head: drop --aggregate");
  if (r.layer < 0 || r.layer >= d->layers() || r.head < 0 || r.head >= d->heads())
    throw UsageError("--layer " + std::to_string(r.layer) + " --head " + std::to_string(r.head) +
                     " is out of range: the decoder has " + std::to_string(d->layers()) +
                     " layers and " + std::to_string(d->heads()) + " heads (from 0)");
  return d->cross_attention[static_cast<size_t>(r.layer)][static_cast<size_t>(r.head)];
}

std::vector<std::string> labels_of(const FigureRequest& r, const Tokens& tokens, float& widest) {
  std::vector<std::string> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    out.push_back(token_label(tokens, i, r.trace->model.pieces, kMaxLabelChars));
    widest = std::max(widest, text_width(out.back(), kFigureFont));
  }
  return out;
}

Figure build(const FigureRequest& r) {
  const Matrix& w = cross_matrix(r);
  const FigurePalette pal = figure_palette(r.light);
  const int rows = static_cast<int>(w.rows()), cols = static_cast<int>(w.cols());
  float row_w = 0, col_w = 0;
  const std::vector<std::string> row_labels = labels_of(r, r.trace->decoder->tokens, row_w);
  const std::vector<std::string> col_labels = labels_of(r, r.trace->tokens, col_w);
  const ColorScale range = make_color_scale(w, r.colormap, r.fixed_range, ShownOptions{});
  const Colormap& map = colormaps().at(static_cast<size_t>(r.colormap));
  const float pad = 8.0f;
  const float title_h = r.title ? kFigureTitleFont * 1.8f + kFigureFont * 1.2f : 0.0f;
  const float left = pad + kFigureFont * 1.4f + row_w + pad, top = pad + title_h + col_w + pad;
  const float right = 2 * pad + colorbar_width(range) + pad;
  const std::string title = "Cross-attention: target queries \xC3\x97 source keys";
  const std::string subtitle = r.trace->model.name + " \xC2\xB7 decoder layer " +
                               std::to_string(r.layer) + ", head " + std::to_string(r.head) +
                               " \xC2\xB7 rows: target tokens \xC2\xB7 columns: source tokens";
  // Natural width: the cells' (as the heatmap figure), and never narrower than the title lines.
  const float text_w = r.title ? std::max(text_width(title, kFigureTitleFont) * 1.2f,
                                          text_width(subtitle, kFigureFont * 0.9f)) +
                                     2 * pad
                               : 0.0f;
  const float cells_w = r.width > 0 ? r.width
                                    : std::clamp(left + right + cols * kFigureFont * 2.6f, 320.0f,
                                                 std::max(900.0f, left + right + cols * 2.0f));
  const float cell = (cells_w - left - right) / std::max(cols, 1);
  const float width = r.width > 0 ? r.width : std::max(cells_w, text_w);
  if (cell <= 0.5f)
    throw UsageError("--width " + std::to_string(static_cast<int>(width)) +
                     " leaves no room for the cells of " + std::to_string(cols) + " tokens");
  Figure fig;
  fig.width = width;
  fig.height = std::ceil(top + cell * rows + pad * 2);
  fig.background = pal.background;
  fig.layout["title"] = title;
  fig.layout["layer"] = r.layer;
  fig.layout["head"] = r.head;
  if (r.title) {
    fig.add(FigureText{pad, pad + kFigureTitleFont, title, kFigureTitleFont, pal.text,
                       FigureText::Anchor::kStart, false, false, true});
    fig.add(FigureText{pad, pad + kFigureTitleFont + kFigureFont * 1.4f, subtitle,
                       kFigureFont * 0.9f, pal.text_dim});
  }
  add_heatmap_cells(fig, w, left, top, cell, map, range.vmin, range.vmax,
                    cell >= kFigureMonoFont * 2.6f, "heatmap");
  for (int i = 0; i < rows; ++i)
    fig.add(FigureText{left - pad, top + (i + 0.5f) * cell + kFigureFont * 0.36f, row_labels[i],
                       kFigureFont, i == r.focus ? pal.focus : pal.text, FigureText::Anchor::kEnd});
  for (int j = 0; j < cols; ++j)
    fig.add(FigureText{left + (j + 0.5f) * cell + kFigureFont * 0.36f, top - pad, col_labels[j],
                       kFigureFont, pal.text, FigureText::Anchor::kStart, false, true});
  fig.add(FigureText{pad + kFigureFont, top + cell * rows, "target", kFigureFont * 0.9f,
                     pal.text_dim, FigureText::Anchor::kStart, false, true});
  add_colorbar(fig, left + cell * cols + 2 * pad, top, cell * rows, map, range, pal,
               colorbar_max_ticks(cell * rows));
  return fig;
}
}  // namespace

FigureView make_cross_figure() {
  return {"cross",
          "an encoder-decoder's cross-attention (bart, marian, t5): target tokens as rows, "
          "source tokens as columns; --layer/--head are the decoder's",
          build};
}

}  // namespace attnscope
