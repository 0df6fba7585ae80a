#pragma once
// One label laid out by Pango: fonts found through fontconfig (a family list, then fontconfig's
// own fallback), shaped by HarfBuzz (Arabic joins, Devanagari conjuncts and marks), ordered by
// FriBidi (Hebrew and Arabic read right to left), and rasterised by cairo into straight-alpha RGBA
// (colour emoji keep their colours). No OpenGL or ImGui here: app/render/text_layer.* caches the
// results as textures; tests call this directly.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

struct _PangoLayout;

namespace attnscope {

enum class FontKind : std::uint8_t { kSans, kMono };

struct ShapeRequest {
  std::string_view text;
  // The size the views ask ImGui for (ImGui::GetFontSize(): DejaVu's ascent + descent), in device
  // pixels; the em size Pango gets is derived from it, so a shaped label matches an ImGui one.
  int pixel_size = 15;
  FontKind font = FontKind::kSans;
  bool bold = false;
  int max_width = 0;  // device pixels; wider text is cut with "…" (0: 8,192, the texture limit)
};

struct ShapedText {
  int width = 0;     // advance width of the line, device pixels
  int height = 0;    // = pixel_size: the line box the views lay out, like ImGui::CalcTextSize
  int unknown = 0;   // glyphs no installed font could draw (pango_layout_get_unknown_glyphs_count)
  bool rtl = false;  // Pango resolved the base direction right to left
  int glyphs = 0;    // glyphs after shaping (a joined or combined word has fewer than letters)
  // The raster (when asked for): image_w x image_h straight-alpha RGBA, its top-left at
  // (image_x, image_y) from the line box's top-left; it covers the ink too (marks, descenders).
  int image_x = 0, image_y = 0, image_w = 0, image_h = 0;
  std::vector<std::uint8_t> rgba;
  bool ink = false;  // some pixel of the raster is not transparent
};

// The family lists (checked with fc-list on Debian 12 with fonts-noto-core/-cjk/-color-emoji).
const char* font_families(FontKind font);

// Lays out `r.text` as one line; rasterises it in `rgb` (0xRRGGBB) when `rasterise`.
// Called from the UI thread only (one Pango context, created on first use).
ShapedText shape_text(const ShapeRequest& r, bool rasterise, std::uint32_t rgb = 0xFFFFFF);

// Where the caret and the selection of a line of text go once it is shaped and ordered, for a text
// box that is drawn shaped while it is edited: in a right-to-left run the end of the text is on
// the left. The line is laid out as shape_text lays it out (never cut: r.max_width is ignored);
// x is in device pixels from the line's left edge, indices are byte offsets into r.text.
class LineGeometry {
 public:
  explicit LineGeometry(const ShapeRequest& r);
  ~LineGeometry();
  LineGeometry(const LineGeometry&) = delete;
  LineGeometry& operator=(const LineGeometry&) = delete;

  int width() const { return width_; }
  // The caret before the character at `byte` (the strong cursor; `byte` = the size: the end).
  int caret_x(int byte) const;
  // The visual pieces [x0, x1) of the logical range [from, to): one per direction run it crosses.
  std::vector<std::pair<int, int>> ranges(int from, int to) const;
  // The caret position nearest to x (a click): the byte offset before which it stands.
  int index_at(int x) const;

 private:
  _PangoLayout* layout_ = nullptr;
  int size_ = 0, width_ = 0, x0_ = 0;
};

}  // namespace attnscope
