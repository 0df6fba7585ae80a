#include "app/figure/pango_text.h"

#include <pango/pangocairo.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>

namespace attnscope {

// DejaVu first (the app's font, and its metrics for Latin, Greek and Cyrillic), then Noto per
// script. Pango asks fontconfig for this list and takes each character from the first font that has
// it; fontconfig appends its own fallbacks after the list, so a script not named still finds a
// font. Noto Color Emoji is deliberately not named: it has glyphs for the digits (keycap bases),
// and listed it takes them over (gray, emoji-wide "1 . 0 0"); Pango's emoji itemization finds it
// through fontconfig for the emoji themselves.
const char* const kFigureSansFamilies =
    "DejaVu Sans, Noto Sans, Noto Sans CJK SC, Noto Sans Arabic, Noto Sans Hebrew, "
    "Noto Sans Devanagari, Noto Sans Bengali, Noto Sans Gurmukhi, Noto Sans Gujarati, "
    "Noto Sans Tamil, Noto Sans Telugu, Noto Sans Kannada, Noto Sans Malayalam, Noto Sans Thai";
const char* const kFigureMonoFamilies =
    "DejaVu Sans Mono, Noto Sans Mono CJK SC, Noto Sans, Noto Sans Arabic, Noto Sans Hebrew, "
    "Noto Sans Devanagari, Noto Sans Bengali, Noto Sans Gurmukhi, Noto Sans Gujarati, "
    "Noto Sans Tamil, Noto Sans Telugu, Noto Sans Kannada, Noto Sans Malayalam, Noto Sans Thai";

namespace {
template <typename T>
struct GFree {
  void operator()(T* p) const { g_object_unref(p); }
};
using LayoutPtr = std::unique_ptr<PangoLayout, GFree<PangoLayout>>;
using ContextPtr = std::unique_ptr<PangoContext, GFree<PangoContext>>;

// Unhinted metrics and unrounded glyph positions: a label's width is then the same in the
// measuring context, the PDF and a PNG at any scale (hinting would snap advances to device pixels).
void set_linear_metrics(PangoContext* ctx) {
  cairo_font_options_t* opts = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(opts, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style(opts, CAIRO_HINT_STYLE_NONE);
  pango_cairo_context_set_font_options(ctx, opts);
  cairo_font_options_destroy(opts);
  pango_context_set_round_glyph_positions(ctx, FALSE);
}

LayoutPtr make_layout(PangoContext* ctx, const std::string& text, float size, bool mono,
                      bool bold) {
  LayoutPtr layout(pango_layout_new(ctx));
  PangoFontDescription* desc = pango_font_description_new();
  pango_font_description_set_family(desc, mono ? kFigureMonoFamilies : kFigureSansFamilies);
  pango_font_description_set_weight(desc, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
  // Absolute: figure units (the toy API's cairo_set_font_size), not points at some resolution.
  pango_font_description_set_absolute_size(desc, size * PANGO_SCALE);
  pango_layout_set_font_description(layout.get(), desc);
  pango_font_description_free(desc);
  pango_layout_set_auto_dir(layout.get(), TRUE);  // paragraph direction from the text
  pango_layout_set_single_paragraph_mode(layout.get(), TRUE);
  pango_layout_set_text(layout.get(), text.data(), static_cast<int>(text.size()));
  return layout;
}

constexpr float kDirectionProbeSize = 10.0f;  // any size: direction does not depend on it

// One measuring context for the process (figures are built on the GUI thread and on render's).
struct Measurer {
  std::mutex mutex;
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t* cr = cairo_create(surface);
  ContextPtr ctx{pango_cairo_create_context(cr)};
  Measurer() { set_linear_metrics(ctx.get()); }
};
Measurer& measurer() {
  static Measurer m;
  return m;
}
// PDF: cairo paints colour emoji (bitmap glyphs) as images, so pdftotext, search and copy found
// no text for them. Each run drawn from a colour font gets a copy in an outline font over it, at
// an alpha no eye sees (cairo drops a fully clear source), and text extraction reads the emoji in
// place. Symbola (fonts-symbola) has outlines for them.
constexpr const char* kOutlineEmojiFamilies = "Symbola";
constexpr double kInvisibleAlpha = 1.0 / 255.0;

bool colour_font(PangoFont* font) {
  if (!font) return false;
  PangoFontDescription* desc = pango_font_describe(font);
  const char* family = pango_font_description_get_family(desc);
  const bool colour = family && std::strstr(family, "Color Emoji") != nullptr;
  pango_font_description_free(desc);
  return colour;
}

void add_text_under_colour_glyphs(cairo_t* cr, PangoContext* ctx, PangoLayout* layout,
                                  const FigureText& t, double x0, double y0) {
  PangoLayoutLine* line = pango_layout_get_line_readonly(layout, 0);
  if (!line) return;
  const double baseline = static_cast<double>(pango_layout_get_baseline(layout)) / PANGO_SCALE;
  int x = 0;  // the runs are in visual order
  for (GSList* r = line->runs; r; r = r->next) {
    const auto* run = static_cast<PangoGlyphItem*>(r->data);
    const int width = pango_glyph_string_get_width(run->glyphs);
    if (colour_font(run->item->analysis.font)) {
      const std::string piece = t.text.substr(static_cast<std::size_t>(run->item->offset),
                                              static_cast<std::size_t>(run->item->length));
      LayoutPtr copy(pango_layout_new(ctx));
      PangoFontDescription* desc = pango_font_description_new();
      pango_font_description_set_family(desc, kOutlineEmojiFamilies);
      pango_font_description_set_absolute_size(desc, t.size * PANGO_SCALE);
      pango_layout_set_font_description(copy.get(), desc);
      pango_font_description_free(desc);
      pango_layout_set_single_paragraph_mode(copy.get(), TRUE);
      // Pango's emoji itemisation would pick the colour font again: the outline one only.
      PangoAttrList* attrs = pango_attr_list_new();
      pango_attr_list_insert(attrs, pango_attr_fallback_new(FALSE));
      pango_layout_set_attributes(copy.get(), attrs);
      pango_attr_list_unref(attrs);
      pango_layout_set_text(copy.get(), piece.data(), static_cast<int>(piece.size()));
      const double copy_baseline =
          static_cast<double>(pango_layout_get_baseline(copy.get())) / PANGO_SCALE;
      cairo_move_to(cr, x0 + static_cast<double>(x) / PANGO_SCALE, y0 + baseline - copy_baseline);
      cairo_set_source_rgba(cr, t.color.r, t.color.g, t.color.b, kInvisibleAlpha);
      pango_cairo_show_layout(cr, copy.get());
    }
    x += width;
  }
}
}  // namespace

void draw_figure_text(cairo_t* cr, const FigureText& t) {
  cairo_save(cr);
  cairo_translate(cr, t.x, t.y);
  if (t.vertical) cairo_rotate(cr, -M_PI / 2);
  ContextPtr ctx(pango_cairo_create_context(cr));
  set_linear_metrics(ctx.get());
  LayoutPtr layout = make_layout(ctx.get(), t.text, t.size, t.mono, t.bold);
  int width = 0, height = 0;
  pango_layout_get_size(layout.get(), &width, &height);
  const double w = static_cast<double>(width) / PANGO_SCALE;
  const double baseline =
      static_cast<double>(pango_layout_get_baseline(layout.get())) / PANGO_SCALE;
  // Anchors are in figure space, whatever the text's direction: start is the left end.
  const double shift = t.anchor == FigureText::Anchor::kStart    ? 0.0
                       : t.anchor == FigureText::Anchor::kMiddle ? w / 2
                                                                 : w;
  cairo_move_to(cr, -shift, -baseline);
  cairo_set_source_rgba(cr, t.color.r, t.color.g, t.color.b, t.color.a);
  pango_cairo_show_layout(cr, layout.get());
  if (cairo_surface_get_type(cairo_get_target(cr)) == CAIRO_SURFACE_TYPE_PDF)
    add_text_under_colour_glyphs(cr, ctx.get(), layout.get(), t, -shift, -baseline);
  cairo_restore(cr);
  cairo_new_path(cr);
}

float pango_text_width(const std::string& text, float size, bool mono, bool bold) {
  Measurer& m = measurer();
  std::lock_guard<std::mutex> lock(m.mutex);
  LayoutPtr layout = make_layout(m.ctx.get(), text, size, mono, bold);
  int width = 0, height = 0;
  pango_layout_get_size(layout.get(), &width, &height);
  return static_cast<float>(width) / PANGO_SCALE;
}

int missing_glyphs(const std::string& text, float size, bool mono, bool bold) {
  Measurer& m = measurer();
  std::lock_guard<std::mutex> lock(m.mutex);
  LayoutPtr layout = make_layout(m.ctx.get(), text, size, mono, bold);
  return pango_layout_get_unknown_glyphs_count(layout.get());
}

int figure_missing_glyphs(const Figure& fig) {
  int total = 0;
  for (const FigureShape& s : fig.shapes)
    if (const auto* t = std::get_if<FigureText>(&s))
      total += missing_glyphs(t->text, t->size, t->mono, t->bold);
  return total;
}

bool text_is_rtl(const std::string& text) {
  Measurer& m = measurer();
  std::lock_guard<std::mutex> lock(m.mutex);
  LayoutPtr layout = make_layout(m.ctx.get(), text, kDirectionProbeSize, false, false);
  PangoLayoutLine* line = pango_layout_get_line_readonly(layout.get(), 0);
  return line && pango_layout_line_get_resolved_direction(line) == PANGO_DIRECTION_RTL;
}

}  // namespace attnscope
