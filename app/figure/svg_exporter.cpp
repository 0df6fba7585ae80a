// SVG written by hand rather than through cairo, whose SVG surface turns every glyph into a path:
// here text stays <text> in DejaVu Sans with the Noto fallbacks of pango_text.h (selectable,
// searchable, editable in Inkscape; librsvg lays it out through Pango as the PDF does), cells are
// <rect>s in one crisp-edged group, and the colorbar is a <linearGradient>.
#include <cairo.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "app/figure/figure_export.h"
#include "app/figure/pango_text.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
std::string num(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string color(Rgba c) {
  char buf[8];
  auto byte = [](float v) {
    return static_cast<int>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255));
  };
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", byte(c.r), byte(c.g), byte(c.b));
  return buf;
}

std::string fill_attrs(const char* attr, Rgba c) {
  std::string s = std::string(attr) + "=\"" + color(c) + "\"";
  if (c.a < 0.999f) s += std::string(" ") + attr + "-opacity=\"" + num(c.a) + "\"";
  return s;
}

// Text that XML 1.0 can always hold, whatever the label came from (typed text, a stored trace, a
// folder name): the markup characters escaped, C0 controls (tab kept) as spaces, and what XML
// forbids outright (invalid UTF-8, encoded surrogates, U+FFFE, U+FFFF) as U+FFFD.
std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const unicode::CodePoint cp = unicode::decode_at(text, at);
    at += static_cast<std::size_t>(cp.length);
    const char32_t c = cp.value;
    if (!cp.valid || c == 0xFFFE || c == 0xFFFF || (c >= 0xD800 && c <= 0xDFFF)) {
      unicode::append_utf8(out, unicode::kReplacementCharacter);
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else if (c < 0x20 && c != '\t') {
      out += ' ';  // XML 1.0 forbids most control characters even as references
    } else {
      out.append(text, at - static_cast<std::size_t>(cp.length),
                 static_cast<std::size_t>(cp.length));
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += table[(v >> (6 * k)) & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? table[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// The raster as a PNG (through cairo, which the PDF exporter needs anyway).
std::string png_bytes(const FigureImage& img) {
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
  std::string out;
  cairo_surface_write_to_png_stream(
      s,
      [](void* closure, const unsigned char* bytes, unsigned int len) {
        static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(bytes), len);
        return CAIRO_STATUS_SUCCESS;
      },
      &out);
  cairo_surface_destroy(s);
  return out;
}

struct Writer {
  std::ostream& out;
  int gradients = 0;
  bool in_cells = false;

  void cells(bool on) {
    if (on == in_cells) return;
    out << (on ? "<g shape-rendering=\"crispEdges\">\n" : "</g>\n");
    in_cells = on;
  }
  void operator()(const FigureRect& r) {
    cells(r.crisp);
    out << "<rect x=\"" << num(r.x) << "\" y=\"" << num(r.y) << "\" width=\"" << num(r.w)
        << "\" height=\"" << num(r.h) << "\" "
        << (r.fill.a > 0 ? fill_attrs("fill", r.fill) : std::string("fill=\"none\""));
    if (r.stroke > 0)
      out << " " << fill_attrs("stroke", r.stroke_color) << " stroke-width=\"" << num(r.stroke)
          << "\"";
    out << "/>\n";
  }
  void operator()(const FigureText& t) {
    cells(false);
    // A right-to-left label (Hebrew, Arabic) gets direction="rtl", so neutral characters at its
    // ends go where Pango puts them in the PDF and PNG; its start is then its right end, so the
    // anchor is mirrored to keep the figure's geometry (start = left).
    const bool rtl = text_is_rtl(t.text);
    FigureText::Anchor anchor = t.anchor;
    if (rtl && anchor != FigureText::Anchor::kMiddle)
      anchor = anchor == FigureText::Anchor::kStart ? FigureText::Anchor::kEnd
                                                    : FigureText::Anchor::kStart;
    out << "<text x=\"" << num(t.x) << "\" y=\"" << num(t.y) << "\" font-family=\""
        << (t.mono ? kFigureMonoFamilies : kFigureSansFamilies) << "\" font-size=\"" << num(t.size)
        << "\" " << fill_attrs("fill", t.color);
    if (t.bold) out << " font-weight=\"bold\"";
    if (rtl) out << " direction=\"rtl\" unicode-bidi=\"embed\"";
    if (anchor != FigureText::Anchor::kStart)
      out << " text-anchor=\"" << (anchor == FigureText::Anchor::kMiddle ? "middle" : "end")
          << "\"";
    if (t.vertical) out << " transform=\"rotate(-90 " << num(t.x) << " " << num(t.y) << ")\"";
    out << " xml:space=\"preserve\">" << escape(t.text) << "</text>\n";
  }
  void operator()(const FigurePath& p) {
    cells(false);
    out << "<path d=\"M" << num(p.points[0][0]) << " " << num(p.points[0][1]);
    out << (p.bezier ? " C" : " L");
    for (size_t k = 1; k < p.points.size(); ++k)
      out << (k > 1 ? " " : "") << num(p.points[k][0]) << " " << num(p.points[k][1]);
    out << "\" fill=\"none\" " << fill_attrs("stroke", p.color) << " stroke-width=\""
        << num(p.width) << "\" stroke-linecap=\"round\"/>\n";
  }
  void operator()(const FigureGradient& g) {
    cells(false);
    const std::string id = "ramp" + std::to_string(gradients++);
    out << "<defs><linearGradient id=\"" << id << "\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">\n";
    for (size_t k = 0; k < g.stops.size(); ++k)
      out << "<stop offset=\"" << num(static_cast<float>(k) / (g.stops.size() - 1))
          << "\" stop-color=\"" << color(g.stops[k]) << "\"/>\n";
    out << "</linearGradient></defs>\n<rect x=\"" << num(g.x) << "\" y=\"" << num(g.y)
        << "\" width=\"" << num(g.w) << "\" height=\"" << num(g.h) << "\" fill=\"url(#" << id
        << ")\"/>\n";
  }
  void operator()(const FigureImage& img) {
    cells(false);
    out << "<image x=\"" << num(img.x) << "\" y=\"" << num(img.y) << "\" width=\"" << num(img.w)
        << "\" height=\"" << num(img.h)
        << "\" preserveAspectRatio=\"none\" image-rendering=\"optimizeSpeed\" "
           "style=\"image-rendering:pixelated\" href=\"data:image/png;base64,"
        << base64(png_bytes(img)) << "\"/>\n";
  }
};

void write_svg(const Figure& fig, const std::string& path, float) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot write the figure to '" + path + "'");
  f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(fig.width)
    << "\" height=\"" << num(fig.height) << "\" viewBox=\"0 0 " << num(fig.width) << " "
    << num(fig.height) << "\">\n"
    << "<rect width=\"100%\" height=\"100%\" " << fill_attrs("fill", fig.background) << "/>\n";
  Writer w{f};
  for (const FigureShape& s : fig.shapes) std::visit(w, s);
  w.cells(false);
  f << "</svg>\n";
  f.flush();
  if (!f) throw Error("writing the figure to '" + path + "' failed");
}
}  // namespace

FigureExporter make_svg_exporter() {
  return {"svg", "SVG: vector, text as text (DejaVu Sans, Noto fonts for other scripts)",
          write_svg};
}

}  // namespace attnscope
