#pragma once
// Where each code point's glyph comes from: the primary fonts (DejaVu Sans, DejaVu Sans Mono),
// found through fontconfig, then fontconfig's fallback list for them (Noto CJK, Arabic, Hebrew,
// Devanagari, Thai, colour emoji …). A font "has" a code point when FreeType finds a glyph for it
// in that face (FT_Get_Char_Index), not merely when fontconfig's charset says so. Font files are
// mapped once and shared with the ImGui atlas, so a rebuild reads nothing from disk.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnscope {

struct FontFace {
  std::string path;
  int index = 0;        // face in a collection (.ttc): ImFontConfig::FontNo
  bool bitmap = false;  // no outlines (Noto Color Emoji's CBDT): drawn as custom atlas glyphs
  const void* data = nullptr;
  size_t size = 0;
};

// A glyph rasterised for a custom atlas rectangle: RGBA, straight alpha, row-major.
struct GlyphBitmap {
  int width = 0, height = 0;
  float x0 = 0, y0 = 0, advance = 0;  // placement from the line's top-left, in pixels
  bool colored = false;               // colour pixels: ImGui must not tint them
  std::vector<std::uint32_t> rgba;
};

class FontSources {
 public:
  FontSources();
  ~FontSources();
  FontSources(const FontSources&) = delete;
  FontSources& operator=(const FontSources&) = delete;

  int sans() const { return sans_; }  // face ids; -1 when fontconfig found nothing usable
  int mono() const { return mono_; }
  const FontFace& face(int id) const;

  // The face that draws `cp` when `primary` is asked for it: `primary` itself if it has the
  // glyph, else the first fallback that has it; -1 when no font has it. Remembered.
  int resolve(unsigned cp, int primary);
  // Rasterises `cp` from face `id` for a font whose line is `size_px` high (ImGui's FreeType
  // builder: ascender − descender = size); `primary` gives the baseline.
  bool rasterise(int id, unsigned cp, float size_px, int primary, GlyphBitmap& out);

 private:
  struct Face;
  struct Candidate;
  int face_id(const std::string& path, int index);
  bool has(int id, unsigned cp);
  int find_primary(const char* family);

  void* ft_ = nullptr;         // FT_Library
  void* fallbacks_ = nullptr;  // FcFontSet from FcFontSort, best first
  std::vector<std::unique_ptr<Face>> faces_;
  std::vector<Candidate> candidates_;
  std::unordered_map<std::uint64_t, int> resolved_;  // (primary << 32 | cp) -> face id or -1
  int sans_ = -1, mono_ = -1;
};

}  // namespace attnscope
