#pragma once
// What the figure builders share: the palette of the app's themes (app/ui/theme.cpp), font sizes,
// text measurement in the fonts the exporters use (pango_text.h: DejaVu Sans or Sans Mono with
// Noto fallbacks), the matrix a request shows, and the heatmap block the heatmap and grid views
// both draw.
#include <string>

#include "app/figure/figure_views.h"
#include "app/ui/colormap.h"
#include "core/util/error.h"
#include "core/util/matrix.h"

namespace attnscope {

struct FigurePalette {
  Rgba background, text, text_dim, accent, focus, arc, line;
};
// The app's light and dark theme colours (app/ui/theme.cpp's theme_palette).
FigurePalette figure_palette(bool light);

inline constexpr float kFigureFont = 13.0f;      // labels
inline constexpr float kFigureMonoFont = 11.0f;  // numbers
inline constexpr float kFigureTitleFont = 15.0f;

// Advance width of `text` at `size` px, as the exporters lay it out (pango_text_width).
float text_width(const std::string& text, float size, bool mono = false);

Rgba rgba(const std::array<float, 3>& rgb, float alpha = 1.0f);
Rgba with_alpha(Rgba c, float alpha);

// The matrix the request shows: attention[layer][head], or the layer's heads combined. Throws
// UsageError for a layer/head outside the trace or an unknown aggregate.
Matrix request_matrix(const FigureRequest& r);
// What the window's views draw for the same choice (app/views/shown_matrix.h): the weights, their
// colour scale, the selected queries' combined row and the title. Throws as request_matrix.
ShownMatrix request_shown(const FigureRequest& r);
// The model, then the window's title of the same choice: "gpt2 · layer 3 · head 5" or
// "… · layer 3 · mean of 12 heads", then the options shown (" · first token hidden (rows
// renormalised) · log colours (floor 0.001)") and the selection (" · mean of 3 queries").
// Also records it, the layer, head and aggregate in fig.layout (parity with the window's layout).
std::string request_title(const FigureRequest& r);
std::string request_title(const FigureRequest& r, const ShownMatrix& shown, Figure* fig = nullptr);
// The colour scale of the request's matrix (range, colormap, log).
ColorScale request_scale(const FigureRequest& r, const Matrix& w);
// The values to colour linearly over [0, 1]: each weight's position on `scale`.
Matrix colormap_positions(const Matrix& w, const ColorScale& scale);

// A heatmap of `w` (colormap over [vmin, vmax]) with its top-left cell corner at (x0, y0):
// vector cells up to kVectorCellLimit rows/cols, an embedded raster above; numbers in the cells
// when `numbers`. Records the geometry under layout[key] when `key` is non-empty.
inline constexpr int kVectorCellLimit = 256;
void add_heatmap_cells(Figure& fig, const Matrix& w, float x0, float y0, float cell,
                       const Colormap& map, float vmin, float vmax, bool numbers,
                       const std::string& key, int vector_limit = kVectorCellLimit);
// A vertical colorbar (vmax at the top) with ticks at round weights (colorbar_ticks, as the
// window's heatmap), at most `max_ticks`, each where its weight falls on `scale` (a log scale's
// are not evenly spaced); returns its total width. Records layout["colorbar"] with the ticks.
float add_colorbar(Figure& fig, float x, float y, float h, const Colormap& map,
                   const ColorScale& scale, const FigurePalette& pal, int max_ticks = 6);
// The width add_colorbar takes: the bar and its widest tick label.
float colorbar_width(const ColorScale& scale, int max_ticks = 6);
// As many ticks as a colorbar `h` tall holds, about two label heights apart (2 to 6).
int colorbar_max_ticks(float h);

}  // namespace attnscope
