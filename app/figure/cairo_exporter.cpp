// PDF and PNG through cairo. Text goes through Pango (pango_text.cpp: shaped, bidi, a font for
// every script); the PDF keeps it as text (cairo embeds subsets of the fonts used, with their
// Unicode) and cells as filled rectangles; the PNG is cairo's image surface, so it needs no display
// and no GL.
#include <cairo-pdf.h>
#include <cairo.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "app/figure/figure_export.h"
#include "app/figure/pango_text.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
void set(cairo_t* cr, Rgba c) {
  cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a);
}

struct Painter {
  cairo_t* cr;
  void operator()(const FigureRect& r) {
    cairo_set_antialias(cr, r.crisp ? CAIRO_ANTIALIAS_NONE : CAIRO_ANTIALIAS_DEFAULT);
    cairo_rectangle(cr, r.x, r.y, r.w, r.h);
    if (r.fill.a > 0) {
      set(cr, r.fill);
      r.stroke > 0 ? cairo_fill_preserve(cr) : cairo_fill(cr);
    }
    if (r.stroke > 0) {
      set(cr, r.stroke_color);
      cairo_set_line_width(cr, r.stroke);
      cairo_stroke(cr);
    }
    cairo_new_path(cr);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
  }
  void operator()(const FigureText& t) { draw_figure_text(cr, t); }
  void operator()(const FigurePath& p) {
    cairo_move_to(cr, p.points[0][0], p.points[0][1]);
    if (p.bezier && p.points.size() == 4)
      cairo_curve_to(cr, p.points[1][0], p.points[1][1], p.points[2][0], p.points[2][1],
                     p.points[3][0], p.points[3][1]);
    else
      for (size_t k = 1; k < p.points.size(); ++k)
        cairo_line_to(cr, p.points[k][0], p.points[k][1]);
    set(cr, p.color);
    cairo_set_line_width(cr, p.width);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    cairo_stroke(cr);
  }
  void operator()(const FigureGradient& g) {
    cairo_pattern_t* pat = cairo_pattern_create_linear(0, g.y, 0, g.y + g.h);
    for (size_t k = 0; k < g.stops.size(); ++k) {
      const Rgba& c = g.stops[k];
      cairo_pattern_add_color_stop_rgba(pat, static_cast<double>(k) / (g.stops.size() - 1), c.r,
                                        c.g, c.b, c.a);
    }
    cairo_rectangle(cr, g.x, g.y, g.w, g.h);
    cairo_set_source(cr, pat);
    cairo_fill(cr);
    cairo_pattern_destroy(pat);
  }
  void operator()(const FigureImage& img) {
    cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, img.cols, img.rows);
    unsigned char* data = cairo_image_surface_get_data(s);
    const int stride = cairo_image_surface_get_stride(s);
    for (int i = 0; i < img.rows; ++i)
      for (int j = 0; j < img.cols; ++j) {
        const std::uint8_t* p = &img.rgb[(static_cast<size_t>(i) * img.cols + j) * 3];
        std::uint32_t px = (std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2];
        std::memcpy(data + i * stride + j * 4, &px, 4);
      }
    cairo_surface_mark_dirty(s);
    cairo_save(cr);
    cairo_translate(cr, img.x, img.y);
    cairo_scale(cr, img.w / img.cols, img.h / img.rows);
    cairo_set_source_surface(cr, s, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr, 0, 0, img.cols, img.rows);
    cairo_fill(cr);
    cairo_restore(cr);
    cairo_surface_destroy(s);
  }
};

void paint(cairo_t* cr, const Figure& fig) {
  set(cr, fig.background);
  cairo_paint(cr);
  Painter p{cr};
  for (const FigureShape& s : fig.shapes) std::visit(p, s);
}

void check(cairo_status_t status, const std::string& path) {
  if (status != CAIRO_STATUS_SUCCESS)
    throw Error("cannot write the figure to '" + path + "': " + cairo_status_to_string(status));
}

void write_pdf(const Figure& fig, const std::string& path, float) {
  cairo_surface_t* surface = cairo_pdf_surface_create(path.c_str(), fig.width, fig.height);
  check(cairo_surface_status(surface), path);
  cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "attnscope");
  cairo_t* cr = cairo_create(surface);
  paint(cr, fig);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  const cairo_status_t status = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  check(status, path);
}

// A PNG is drawn whole in memory (4 bytes a pixel): a 24,000-px square took 2.4 GB. Past these
// limits (cairo's own side limit, and 400 MB of pixels) the figure is refused with a message.
constexpr double kMaxPngSide = 32767, kMaxPngPixels = 100e6;

void write_png(const Figure& fig, const std::string& path, float scale) {
  const double wd = std::ceil(static_cast<double>(fig.width) * scale),
               hd = std::ceil(static_cast<double>(fig.height) * scale);
  if (!(scale > 0) || !std::isfinite(wd * hd) || wd > kMaxPngSide || hd > kMaxPngSide ||
      wd * hd > kMaxPngPixels) {
    char what[256];
    std::snprintf(what, sizeof what,
                  "a PNG of %.0f x %.0f pixels is over the limit (%.0f pixels a side, %.0f "
                  "million in all): lower --scale or --width, or write .svg or .pdf",
                  wd, hd, kMaxPngSide, kMaxPngPixels / 1e6);
    throw UsageError(what);
  }
  const int w = static_cast<int>(wd), h = static_cast<int>(hd);
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  check(cairo_surface_status(surface), path);
  cairo_t* cr = cairo_create(surface);
  cairo_scale(cr, scale, scale);
  paint(cr, fig);
  cairo_destroy(cr);
  const cairo_status_t status = cairo_surface_write_to_png(surface, path.c_str());
  cairo_surface_destroy(surface);
  check(status, path);
}
}  // namespace

FigureExporter make_pdf_exporter() {
  return {"pdf", "PDF: vector, text as text (DejaVu Sans and Noto fonts embedded)", write_pdf};
}

FigureExporter make_png_exporter() {
  return {"png", "PNG: drawn by cairo without a display, at --scale pixels per unit", write_png};
}

}  // namespace attnscope
