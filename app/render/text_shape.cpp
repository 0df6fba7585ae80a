#include "app/render/text_shape.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <pango/pangocairo.h>

namespace attnscope {

namespace {
// ImGui sizes DejaVu by ascent + descent (hhea 1901 + 483 of 2048 units = 1.1641 em); its baseline
// sits an ascent (0.9282 em) below the line's top. Pango sizes by the em.
constexpr double kEmPerPixelSize = 2048.0 / (1901.0 + 483.0);
constexpr double kAscentPerPixelSize = 1901.0 / (1901.0 + 483.0);
constexpr int kMaxWidth = 8192;  // keeps a label's texture within every GL's limit

// The Pango context every label shares (UI thread only): a cairo font map, grey antialiasing
// (labels are blended over any colour, so no subpixel order), slight hinting for small type.
PangoContext* shared_context() {
  static PangoContext* context = [] {
    PangoFontMap* map = pango_cairo_font_map_new();
    PangoContext* c = pango_font_map_create_context(map);
    g_object_unref(map);  // the context keeps it
    cairo_font_options_t* options = cairo_font_options_create();
    cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY);
    cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_SLIGHT);
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_ON);
    pango_cairo_context_set_font_options(c, options);
    cairo_font_options_destroy(options);
    return c;
  }();
  return context;
}

struct LayoutDeleter {
  void operator()(PangoLayout* l) const { g_object_unref(l); }
};
}  // namespace

// Noto Color Emoji is deliberately not named (as in the figures, app/figure/pango_text.cpp): it
// has glyphs for the keycap bases (0-9, #, *) and, named, Pango drew digits, spaces and "=" near
// them from it, grey and spaced out ("0 . 2 1"). fontconfig's fallback still finds it for emoji.
const char* font_families(FontKind font) {
  return font == FontKind::kMono
             ? "DejaVu Sans Mono, Noto Sans Mono, Noto Sans CJK SC, Noto Sans Arabic, "
               "Noto Sans Hebrew, Noto Sans Devanagari, Noto Sans Thai"
             : "DejaVu Sans, Noto Sans, Noto Sans CJK SC, Noto Sans Arabic, Noto Sans Hebrew, "
               "Noto Sans Devanagari, Noto Sans Thai";
}

namespace {
// One line of `r.text` in the shared font families; cut with "…" past `max_width` device pixels
// when `cut`.
PangoLayout* new_layout(const ShapeRequest& r, bool cut) {
  const int pixel_size = std::max(1, r.pixel_size);
  PangoLayout* layout = pango_layout_new(shared_context());
  PangoFontDescription* desc = pango_font_description_from_string(font_families(r.font));
  pango_font_description_set_absolute_size(desc, pixel_size * kEmPerPixelSize * PANGO_SCALE);
  pango_font_description_set_weight(desc, r.bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
  pango_layout_set_font_description(layout, desc);
  pango_font_description_free(desc);
  if (cut) {  // too wide is cut at the end of the text (the left, for Arabic)
    const int max_width = r.max_width > 0 ? std::min(r.max_width, kMaxWidth) : kMaxWidth;
    pango_layout_set_width(layout, max_width * PANGO_SCALE);
    pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END);
  }
  pango_layout_set_single_paragraph_mode(layout, TRUE);  // one line, never wrapped
  pango_layout_set_text(layout, r.text.data(), static_cast<int>(r.text.size()));
  return layout;
}
}  // namespace

ShapedText shape_text(const ShapeRequest& r, bool rasterise, std::uint32_t rgb) {
  ShapedText out;
  const int pixel_size = std::max(1, r.pixel_size);
  out.height = pixel_size;
  std::unique_ptr<PangoLayout, LayoutDeleter> owner(new_layout(r, /*cut=*/true));
  PangoLayout* layout = owner.get();

  PangoLayoutLine* line = pango_layout_get_line_readonly(layout, 0);
  out.rtl = line && line->resolved_dir == PANGO_DIRECTION_RTL;
  out.unknown = pango_layout_get_unknown_glyphs_count(layout);
  for (GSList* run = line ? line->runs : nullptr; run; run = run->next)
    out.glyphs += static_cast<PangoGlyphItem*>(run->data)->glyphs->num_glyphs;
  // A line set to a width is aligned within it: measure the line itself, not the layout box.
  PangoRectangle ink, logical;
  pango_layout_line_get_pixel_extents(line, &ink, &logical);
  out.width = logical.width;
  if (!rasterise) return out;

  // Line coordinates have the baseline at y = 0 and the line's start at x = logical.x.
  const int baseline_y = static_cast<int>(std::lround(pixel_size * kAscentPerPixelSize));
  const int x0 = std::min(ink.x, logical.x) - 1,
            x1 = std::max(ink.x + ink.width, logical.x + logical.width) + 1;
  const int y0 = std::min(ink.y, logical.y) - 1,
            y1 = std::max(ink.y + ink.height, logical.y + logical.height) + 1;
  out.image_w = std::max(1, x1 - x0), out.image_h = std::max(1, y1 - y0);
  out.image_x = x0 - logical.x, out.image_y = baseline_y + y0;
  cairo_surface_t* surface =
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, out.image_w, out.image_h);
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_rgb(cr, ((rgb >> 16) & 0xFF) / 255.0, ((rgb >> 8) & 0xFF) / 255.0,
                       (rgb & 0xFF) / 255.0);
  cairo_move_to(cr, -x0, -y0);  // the baseline's start
  pango_cairo_show_layout_line(cr, line);
  cairo_destroy(cr);
  cairo_surface_flush(surface);

  // cairo's ARGB32 is premultiplied, one native-endian 32-bit word a pixel; GL wants straight RGBA.
  const unsigned char* data = cairo_image_surface_get_data(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  out.rgba.resize(static_cast<std::size_t>(out.image_w) * out.image_h * 4);
  for (int y = 0; y < out.image_h; ++y) {
    const auto* row =
        reinterpret_cast<const std::uint32_t*>(data + static_cast<std::ptrdiff_t>(y) * stride);
    std::uint8_t* dst = out.rgba.data() + static_cast<std::size_t>(y) * out.image_w * 4;
    for (int x = 0; x < out.image_w; ++x, dst += 4) {
      const std::uint32_t p = row[x];
      const unsigned a = p >> 24;
      if (a == 0) {
        dst[0] = dst[1] = dst[2] = dst[3] = 0;
        continue;
      }
      out.ink = true;
      dst[0] = static_cast<std::uint8_t>(std::min(255u, (((p >> 16) & 0xFF) * 255 + a / 2) / a));
      dst[1] = static_cast<std::uint8_t>(std::min(255u, (((p >> 8) & 0xFF) * 255 + a / 2) / a));
      dst[2] = static_cast<std::uint8_t>(std::min(255u, ((p & 0xFF) * 255 + a / 2) / a));
      dst[3] = static_cast<std::uint8_t>(a);
    }
  }
  cairo_surface_destroy(surface);
  return out;
}

LineGeometry::LineGeometry(const ShapeRequest& r)
    : layout_(new_layout(r, /*cut=*/false)), size_(static_cast<int>(r.text.size())) {
  // Without a width the line is not aligned within one: layout x = line x.
  PangoRectangle logical;
  pango_layout_line_get_pixel_extents(pango_layout_get_line_readonly(layout_, 0), nullptr,
                                      &logical);
  width_ = logical.width, x0_ = logical.x;  // the drawn line starts at its logical x
}

LineGeometry::~LineGeometry() {
  g_object_unref(layout_);
}

int LineGeometry::caret_x(int byte) const {
  PangoRectangle strong;
  pango_layout_get_cursor_pos(layout_, std::clamp(byte, 0, size_), &strong, nullptr);
  return PANGO_PIXELS(strong.x) - x0_;
}

std::vector<std::pair<int, int>> LineGeometry::ranges(int from, int to) const {
  std::vector<std::pair<int, int>> out;
  from = std::clamp(from, 0, size_), to = std::clamp(to, 0, size_);
  if (from > to) std::swap(from, to);
  if (from == to) return out;
  int* x = nullptr;
  int n = 0;
  pango_layout_line_get_x_ranges(pango_layout_get_line_readonly(layout_, 0), from, to, &x, &n);
  for (int i = 0; i < n; ++i)
    out.emplace_back(PANGO_PIXELS(x[2 * i]) - x0_, PANGO_PIXELS(x[2 * i + 1]) - x0_);
  g_free(x);
  return out;
}

int LineGeometry::index_at(int x) const {
  int index = 0, trailing = 0;
  PangoRectangle logical;
  pango_layout_get_pixel_extents(layout_, nullptr, &logical);
  pango_layout_xy_to_index(layout_, (x + x0_) * PANGO_SCALE, logical.height * PANGO_SCALE / 2,
                           &index, &trailing);
  // `trailing` counts characters (grapheme positions) past the one hit: the caret goes after it.
  const char* text = pango_layout_get_text(layout_);
  const char* p = text + std::clamp(index, 0, size_);
  for (; trailing > 0 && p < text + size_; --trailing) p = g_utf8_next_char(p);
  return static_cast<int>(std::min(p, text + size_) - text);
}

}  // namespace attnscope
