#pragma once
// Figure text through Pango (pangocairo): one font list with fallbacks for every script a teacher
// types (Latin, Greek, Cyrillic, CJK, Arabic, Hebrew, Indic, Thai, emoji; fontconfig falls back
// beyond it), HarfBuzz shaping (Arabic joined, Devanagari conjuncts) and bidi (a Hebrew or Arabic
// label reads right to left). The PDF and PNG exporters draw with it and the figure builders
// measure with it (text_width), so a label is exactly as wide as it was laid out.
#include <cairo.h>

#include <string>

#include "app/figure/figure.h"

namespace attnscope {

// The font-family lists, also written into SVG (librsvg lays them out through Pango too).
extern const char* const kFigureSansFamilies;
extern const char* const kFigureMonoFamilies;

// Draws `t` on `cr`: its baseline point at (t.x, t.y), anchored and rotated as FigureText says.
void draw_figure_text(cairo_t* cr, const FigureText& t);

// Logical width of `text` as draw_figure_text lays it out, in figure units.
float pango_text_width(const std::string& text, float size, bool mono, bool bold);

// Characters of `text` that no installed font has a glyph for (drawn as hex boxes).
int missing_glyphs(const std::string& text, float size, bool mono, bool bold);
// The sum over every text of `fig`.
int figure_missing_glyphs(const Figure& fig);

// Whether the label's first strong character is right to left (Hebrew, Arabic): its paragraph
// direction, as Pango lays it out.
bool text_is_rtl(const std::string& text);

}  // namespace attnscope
