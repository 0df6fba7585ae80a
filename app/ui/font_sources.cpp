#include "app/ui/font_sources.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fontconfig/fontconfig.h>
#include <ft2build.h>
#include FT_FREETYPE_H

namespace attnscope {

struct FontSources::Face {
  FontFace info;
  FT_Face ft = nullptr;
  bool failed = false;  // the file could not be mapped or FreeType refused it
};

struct FontSources::Candidate {
  std::string path;
  int index = 0;
  bool color = false;
  const FcCharSet* charset = nullptr;  // owned by the sorted font set
  int face = -1;                       // opened on first use
};

namespace {
// Emoji blocks above the BMP: the colour font is asked first there (a symbol font's monochrome
// outline is a poor emoji).
bool emoji_block(unsigned cp) {
  return cp >= 0x1F000 && cp <= 0x1FAFF;
}
}  // namespace

FontSources::FontSources() {
  FT_Library lib = nullptr;
  if (FT_Init_FreeType(&lib) == 0) ft_ = lib;
  if (!FcInit()) return;
  sans_ = find_primary("DejaVu Sans");
  mono_ = find_primary("DejaVu Sans Mono");
  // Fallbacks: fontconfig's own order for the sans-serif primary (trimmed to the fonts that add
  // coverage), which puts Noto's script fonts after DejaVu.
  FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>("DejaVu Sans"));
  FcConfigSubstitute(nullptr, pattern, FcMatchPattern);
  FcDefaultSubstitute(pattern);
  FcResult result;
  FcFontSet* set = FcFontSort(nullptr, pattern, FcTrue, nullptr, &result);
  FcPatternDestroy(pattern);
  if (!set) return;
  fallbacks_ = set;
  for (int i = 0; i < set->nfont; ++i) {
    FcChar8* file = nullptr;
    FcCharSet* charset = nullptr;
    int index = 0;
    FcBool color = FcFalse;
    if (FcPatternGetString(set->fonts[i], FC_FILE, 0, &file) != FcResultMatch ||
        FcPatternGetCharSet(set->fonts[i], FC_CHARSET, 0, &charset) != FcResultMatch)
      continue;
    FcPatternGetInteger(set->fonts[i], FC_INDEX, 0, &index);
    FcPatternGetBool(set->fonts[i], FC_COLOR, 0, &color);
    const std::string path = reinterpret_cast<const char*>(file);
    // Only formats FreeType and the atlas handle as files (not Type 1 .pfb and the like).
    const auto ext = path.substr(path.find_last_of('.') + 1);
    if (ext != "ttf" && ext != "otf" && ext != "ttc" && ext != "otc") continue;
    candidates_.push_back({path, index, color == FcTrue, charset, -1});
  }
}

FontSources::~FontSources() {
  for (auto& f : faces_) {
    if (f->ft) FT_Done_Face(f->ft);
    if (f->info.data) munmap(const_cast<void*>(f->info.data), f->info.size);
  }
  if (ft_) FT_Done_FreeType(static_cast<FT_Library>(ft_));
  if (fallbacks_) FcFontSetDestroy(static_cast<FcFontSet*>(fallbacks_));
}

int FontSources::find_primary(const char* family) {
  FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>(family));
  FcConfigSubstitute(nullptr, pattern, FcMatchPattern);
  FcDefaultSubstitute(pattern);
  FcResult result;
  FcPattern* match = FcFontMatch(nullptr, pattern, &result);
  FcPatternDestroy(pattern);
  int id = -1;
  FcChar8* file = nullptr;
  FcChar8* found_family = nullptr;
  int index = 0;
  if (match && FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch &&
      FcPatternGetString(match, FC_FAMILY, 0, &found_family) == FcResultMatch &&
      std::string(reinterpret_cast<const char*>(found_family)) == family) {
    FcPatternGetInteger(match, FC_INDEX, 0, &index);
    id = face_id(reinterpret_cast<const char*>(file), index);
    if (faces_[id]->failed || faces_[id]->info.bitmap) id = -1;
  }
  if (match) FcPatternDestroy(match);
  return id;
}

int FontSources::face_id(const std::string& path, int index) {
  for (size_t i = 0; i < faces_.size(); ++i)
    if (faces_[i]->info.path == path && faces_[i]->info.index == index) return static_cast<int>(i);
  auto face = std::make_unique<Face>();
  face->info.path = path;
  face->info.index = index;
  // A file shared by several faces of a collection is mapped once per face: the kernel shares
  // the pages, and it keeps each face's lifetime simple.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0 && st.st_size > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) face->info.data = p, face->info.size = static_cast<size_t>(st.st_size);
  }
  if (fd >= 0) ::close(fd);
  FT_Face ft = nullptr;
  if (!face->info.data || !ft_ ||
      FT_New_Memory_Face(static_cast<FT_Library>(ft_), static_cast<const FT_Byte*>(face->info.data),
                         static_cast<FT_Long>(face->info.size), index, &ft) != 0) {
    face->failed = true;
  } else {
    face->ft = ft;
    face->info.bitmap = !FT_IS_SCALABLE(ft);
  }
  faces_.push_back(std::move(face));
  return static_cast<int>(faces_.size() - 1);
}

const FontFace& FontSources::face(int id) const {
  return faces_[id]->info;
}

bool FontSources::has(int id, unsigned cp) {
  const Face& f = *faces_[id];
  return !f.failed && FT_Get_Char_Index(f.ft, cp) != 0;
}

int FontSources::resolve(unsigned cp, int primary) {
  const std::uint64_t key = (static_cast<std::uint64_t>(primary + 1) << 32) | cp;
  if (auto it = resolved_.find(key); it != resolved_.end()) return it->second;
  int found = -1;
  if (primary >= 0 && has(primary, cp)) found = primary;
  // Two passes over fontconfig's order: colour fonts first in the emoji blocks, then all.
  for (int pass = emoji_block(cp) ? 0 : 1; found < 0 && pass < 2; ++pass) {
    for (Candidate& c : candidates_) {
      if (pass == 0 && !c.color) continue;
      if (!FcCharSetHasChar(c.charset, cp)) continue;
      if (c.face < 0) c.face = face_id(c.path, c.index);
      if (has(c.face, cp)) {
        found = c.face;
        break;
      }
    }
  }
  resolved_.emplace(key, found);
  return found;
}

bool FontSources::rasterise(int id, unsigned cp, float size_px, int primary, GlyphBitmap& out) {
  Face& f = *faces_[id];
  if (f.failed) return false;
  FT_Face ft = f.ft;
  out = GlyphBitmap{};
  if (f.info.bitmap) {
    // A colour bitmap font has fixed strikes (Noto Color Emoji: 109 ppem, 136×128): take the
    // largest and scale it down to the line height with an area average.
    if (ft->num_fixed_sizes <= 0) return false;
    int best = 0;
    for (int i = 1; i < ft->num_fixed_sizes; ++i)
      if (ft->available_sizes[i].height > ft->available_sizes[best].height) best = i;
    if (FT_Select_Size(ft, best) != 0 || FT_Load_Char(ft, cp, FT_LOAD_COLOR | FT_LOAD_RENDER) != 0)
      return false;
    const FT_Bitmap& b = ft->glyph->bitmap;
    if (b.pixel_mode != FT_PIXEL_MODE_BGRA || b.width == 0 || b.rows == 0) return false;
    const float scale = 0.95f * size_px / static_cast<float>(ft->available_sizes[best].height);
    const int w = std::max(1, static_cast<int>(std::lround(b.width * scale)));
    const int h = std::max(1, static_cast<int>(std::lround(b.rows * scale)));
    out.width = w, out.height = h, out.colored = true;
    out.x0 = 0.5f;
    out.y0 = std::round((size_px - h) * 0.5f);
    out.advance = static_cast<float>(w) + 1.0f;
    out.rgba.resize(static_cast<size_t>(w) * h);
    const double sx = static_cast<double>(b.width) / w, sy = static_cast<double>(b.rows) / h;
    for (int y = 0; y < h; ++y) {
      const int ry0 = static_cast<int>(y * sy),
                ry1 = std::max(ry0 + 1, static_cast<int>((y + 1) * sy));
      for (int x = 0; x < w; ++x) {
        const int rx0 = static_cast<int>(x * sx),
                  rx1 = std::max(rx0 + 1, static_cast<int>((x + 1) * sx));
        double acc[4] = {0, 0, 0, 0};  // premultiplied B, G, R, A
        int n = 0;
        for (int ry = ry0; ry < ry1 && ry < static_cast<int>(b.rows); ++ry)
          for (int rx = rx0; rx < rx1 && rx < static_cast<int>(b.width); ++rx, ++n) {
            const unsigned char* p = b.buffer + ry * b.pitch + rx * 4;
            for (int k = 0; k < 4; ++k) acc[k] += p[k];
          }
        std::uint32_t px = 0;
        if (n > 0 && acc[3] > 0) {
          const double a = acc[3] / n;
          auto un = [&](double v) {
            return static_cast<std::uint32_t>(std::clamp(v / n * 255.0 / a, 0.0, 255.0) + 0.5);
          };
          px = un(acc[2]) | (un(acc[1]) << 8) | (un(acc[0]) << 16) |
               (static_cast<std::uint32_t>(a + 0.5) << 24);
        }
        out.rgba[static_cast<size_t>(y) * w + x] = px;
      }
    }
    return true;
  }
  // An outline font: the same size request as ImGui's FreeType builder, on the primary's baseline.
  auto request = [&](FT_Face face) {
    FT_Size_RequestRec req{};
    req.type = FT_SIZE_REQUEST_TYPE_REAL_DIM;
    req.height = static_cast<FT_Long>(std::floor(size_px * 64));
    return FT_Request_Size(face, &req) == 0;
  };
  float ascent = size_px * 0.8f;
  if (primary >= 0 && !faces_[primary]->failed && request(faces_[primary]->ft))
    ascent = std::ceil(faces_[primary]->ft->size->metrics.ascender / 64.0f);
  if (!request(ft) || FT_Load_Char(ft, cp, FT_LOAD_RENDER | FT_LOAD_TARGET_LIGHT) != 0)
    return false;
  const FT_Bitmap& b = ft->glyph->bitmap;
  if (b.pixel_mode != FT_PIXEL_MODE_GRAY) return false;
  out.width = std::max(1, static_cast<int>(b.width));
  out.height = std::max(1, static_cast<int>(b.rows));
  out.x0 = static_cast<float>(ft->glyph->bitmap_left);
  out.y0 = ascent - static_cast<float>(ft->glyph->bitmap_top);
  out.advance = ft->glyph->advance.x / 64.0f;
  out.rgba.assign(static_cast<size_t>(out.width) * out.height, 0x00FFFFFFu);
  for (unsigned y = 0; y < b.rows; ++y)
    for (unsigned x = 0; x < b.width; ++x)
      out.rgba[y * out.width + x] =
          0x00FFFFFFu | (static_cast<std::uint32_t>(b.buffer[y * b.pitch + x]) << 24);
  return true;
}

}  // namespace attnscope
