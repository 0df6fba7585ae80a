#include "app/figure/figure_style.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/figure/pango_text.h"
#include "app/ui/theme.h"
#include "core/trace/aggregate.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
Rgba rgb8(int r, int g, int b, int a = 255) {
  return {r / 255.0f, g / 255.0f, b / 255.0f, a / 255.0f};
}
Rgba from_imgui(ImU32 c) {  // IM_COL32 packs A, B, G, R from the high byte down
  return rgb8(c & 0xff, (c >> 8) & 0xff, (c >> 16) & 0xff, (c >> 24) & 0xff);
}
}  // namespace

FigurePalette figure_palette(bool light) {
  const ThemeColors c = theme_palette(light);
  // The background is the panels' (ImGuiCol_ChildBg in app/ui/theme.cpp).
  return {light ? rgb8(255, 255, 255) : rgb8(28, 28, 33),
          from_imgui(c.text),
          from_imgui(c.text_dim),
          from_imgui(c.accent),
          from_imgui(c.focus),
          from_imgui(c.arc),
          from_imgui(c.panel_line)};
}

float text_width(const std::string& text, float size, bool mono) {
  // Measured by the same Pango layout the PDF and PNG exporters draw (fallback fonts included).
  return pango_text_width(text, size, mono, false);
}

Rgba rgba(const std::array<float, 3>& rgb, float alpha) {
  return {rgb[0], rgb[1], rgb[2], alpha};
}

Rgba with_alpha(Rgba c, float alpha) {
  c.a = std::clamp(alpha, 0.0f, 1.0f);
  return c;
}

Matrix request_matrix(const FigureRequest& r) {
  const AttentionTrace& t = *r.trace;
  if (r.layer < 0 || r.layer >= t.layers())
    throw UsageError("--layer " + std::to_string(r.layer) + " is out of range (the trace has " +
                     std::to_string(t.layers()) + " layers, numbered from 0)");
  if (r.aggregate.empty() && (r.head < 0 || r.head >= t.heads()))
    throw UsageError("--head " + std::to_string(r.head) + " is out of range (the trace has " +
                     std::to_string(t.heads()) + " heads, numbered from 0)");
  ShownOptions o = r.options;
  o.aggregate = r.aggregate;
  return shown_weights(t, r.layer, r.head, o);
}

ShownMatrix request_shown(const FigureRequest& r) {
  request_matrix(r);  // the range checks and their messages
  ShownOptions o = r.options;
  o.aggregate = r.aggregate;
  return make_shown_matrix(*r.trace, r.layer, r.head, o, r.colormap, r.fixed_range, r.queries);
}

ColorScale request_scale(const FigureRequest& r, const Matrix& w) {
  return make_color_scale(w, r.colormap, r.fixed_range, r.options);
}

Matrix colormap_positions(const Matrix& w, const ColorScale& scale) {
  return w.unaryExpr([&](float v) { return scale.position(v); });
}

std::string request_title(const FigureRequest& r) {
  // The window's own title (ShownMatrix::title) after the model's name: a figure exported from
  // the window says what the window says.
  return request_title(r, request_shown(r));
}

std::string request_title(const FigureRequest& r, const ShownMatrix& shown, Figure* fig) {
  const std::string model = r.trace->model.name.empty() ? r.trace->model.kind : r.trace->model.name;
  const std::string title = model + " \xC2\xB7 " + shown.title;
  if (fig) {
    fig->layout["title"] = title;
    fig->layout["shown_title"] = shown.title;
    fig->layout["layer"] = r.layer;
    fig->layout["head"] = r.head;
    fig->layout["aggregate"] = r.aggregate;
    fig->layout["selected_queries"] = shown.queries;
  }
  return title;
}

void add_heatmap_cells(Figure& fig, const Matrix& w, float x0, float y0, float cell,
                       const Colormap& map, float vmin, float vmax, bool numbers,
                       const std::string& key, int vector_limit) {
  const int rows = static_cast<int>(w.rows()), cols = static_cast<int>(w.cols());
  const float span = vmax > vmin ? vmax - vmin : 1.0f;
  auto t_of = [&](float v) { return (v - vmin) / span; };
  const bool vector = rows <= vector_limit && cols <= vector_limit;
  if (vector) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        fig.add(FigureRect{x0 + j * cell, y0 + i * cell, cell, cell, rgba(map.rgb(t_of(w(i, j)))),
                           true});
  } else {
    FigureImage img{x0, y0, cell * cols, cell * rows, cols, rows, {}};
    img.rgb.resize(static_cast<size_t>(rows) * cols * 3);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const auto c = map.rgb(t_of(w(i, j)));
        for (int k = 0; k < 3; ++k)
          img.rgb[(static_cast<size_t>(i) * cols + j) * 3 + k] =
              static_cast<std::uint8_t>(std::lround(c[k] * 255.0f));
      }
    fig.add(std::move(img));
  }
  if (numbers) {
    char buf[16];
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        std::snprintf(buf, sizeof buf, "%.2f", w(i, j));
        const bool dark_cell = map.luminance(t_of(w(i, j))) < 0.35f;
        fig.add(FigureText{x0 + (j + 0.5f) * cell, y0 + (i + 0.5f) * cell + kFigureMonoFont * 0.36f,
                           buf, kFigureMonoFont, dark_cell ? Rgba{1, 1, 1, 1} : Rgba{0, 0, 0, 1},
                           FigureText::Anchor::kMiddle, true});
      }
  }
  if (!key.empty())
    fig.layout[key] = {{"x0", x0},        {"y0", y0},     {"cell", cell}, {"rows", rows},
                       {"cols", cols},    {"vmin", vmin}, {"vmax", vmax}, {"colormap", map.name},
                       {"vector", vector}};
}

int colorbar_max_ticks(float h) {
  return std::clamp(static_cast<int>(h / (kFigureMonoFont * 2.2f)), 2, 6);
}

float colorbar_width(const ColorScale& scale, int max_ticks) {
  float widest = 0;
  for (const ColorTick& t : colorbar_ticks(scale, max_ticks))
    widest = std::max(widest, text_width(t.label, kFigureMonoFont, true));
  return 14.0f + 6.0f + widest + 4.0f;
}

float add_colorbar(Figure& fig, float x, float y, float h, const Colormap& map,
                   const ColorScale& scale, const FigurePalette& pal, int max_ticks) {
  const float bar_w = 14.0f;
  FigureGradient g{x, y, bar_w, h, {}};
  for (int k = 0; k < 256; k += 5) g.stops.push_back(rgba(map.rgb(1.0f - k / 255.0f)));
  g.stops.push_back(rgba(map.rgb(0.0f)));
  fig.add(std::move(g));
  fig.add(FigureRect{x, y, bar_w, h, Rgba{0, 0, 0, 0}, false, 0.75f, pal.line});
  // Round weights where they fall on the scale: the same ticks as the window's colorbar.
  nlohmann::json ticks = nlohmann::json::array();
  for (const ColorTick& t : colorbar_ticks(scale, max_ticks)) {
    const float ty = y + h * (1.0f - t.position);
    fig.add(FigurePath{{{x + bar_w, ty}, {x + bar_w + 4, ty}}, pal.text, 0.75f});
    fig.add(FigureText{x + bar_w + 6, ty + kFigureMonoFont * 0.36f, t.label, kFigureMonoFont,
                       pal.text, FigureText::Anchor::kStart, true});
    ticks.push_back({{"value", t.value}, {"label", t.label}, {"y", ty}});
  }
  fig.layout["colorbar"] = {{"x", x},
                            {"y", y},
                            {"w", bar_w},
                            {"h", h},
                            {"vmin", scale.vmin},
                            {"vmax", scale.vmax},
                            {"log", scale.log},
                            {"ticks", ticks}};
  return colorbar_width(scale, max_ticks);
}

}  // namespace attnscope
