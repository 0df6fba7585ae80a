#include "app/ui/fonts.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>

#include <imgui_freetype.h>

#if IMGUI_VERSION_NUM >= 19200
// 1.92 replaced the static atlas built here (FontBuilderIO, custom glyph rects written into
// GetTexDataAsRGBA32's pixels, ImFont::Glyphs) with fonts baked on demand into textures the
// renderer backend updates (ImFontLoader, ImFontBaked, ImTextureData); this file and the texture
// upload in app/gui_main.cpp are not ported to it yet.
#error \
    "attnscope's font atlas needs Dear ImGui 1.86-1.91 (1.92's dynamic fonts are not supported yet)"
#endif

#include "app/ui/font_sources.h"
#include "app/ui/imgui_text.h"

namespace attnscope {

namespace {
// Latin, Greek (β), Cyrillic, punctuation, super/subscripts (ᵀ), arrows and math (√ · ÷ ∝).
const ImWchar kRanges[] = {0x0020, 0x024F, 0x0370, 0x03FF, 0x0400, 0x04FF, 0x1D00, 0x1DBF,
                           0x2000, 0x206F, 0x2070, 0x209F, 0x2C60, 0x2C7F, 0x2190, 0x21FF,
                           0x2200, 0x22FF, 0x2500, 0x25FF, 0xFFFD, 0xFFFD, 0};
// The lesson's large fonts: fewer glyphs (Latin, Greek, sub/superscripts, arrows, math), so the
// atlas stays small at 2× and 4× screenshot scale.
const ImWchar kLessonRanges[] = {0x0020, 0x017F, 0x0370, 0x03FF, 0x1D00, 0x1DBF, 0x2000,
                                 0x22FF, 0x25A0, 0x25FF, 0xFFFD, 0xFFFD, 0};

bool in_ranges(const ImWchar* ranges, unsigned cp) {
  for (; ranges[0]; ranges += 2)
    if (cp >= ranges[0] && cp <= ranges[1]) return true;
  return false;
}
// Code points ImGui cannot take as themselves: drawn through a proxy (app/ui/imgui_text.h).
bool proxied(unsigned cp) {
  return cp > 0xFFFF || (cp >= 0xE000 && cp <= 0xF8FF);
}

struct Registry {
  FontSources sources;
  std::vector<bool> seen = std::vector<bool>(0x110000, false);
  std::vector<unsigned> wanted;  // in the order first seen
  bool dirty = false;
  Fonts::AtlasStats stats;
  std::deque<std::vector<ImWchar>> ranges;  // the glyph ranges of the atlas's fonts (kept alive)
};
Registry& registry() {
  static Registry r;
  return r;
}

using Clock = std::chrono::steady_clock;

struct PendingGlyph {
  ImFont* font;
  int rect;
  ImWchar id;
  GlyphBitmap bitmap;
};

// Adds `primary` at `size_px` with `base` ranges plus every wanted code point it has; with
// `fallbacks`, merges in each other font's wanted code points and reserves custom rectangles for
// those drawn as bitmaps (proxies, colour emoji).
ImFont* add_font(Registry& r, int primary, float size_px, const ImWchar* base,
                 const ImFontConfig& config, bool fallbacks, std::vector<PendingGlyph>& pending) {
  ImGuiIO& io = ImGui::GetIO();
  FontSources& src = r.sources;
  std::vector<ImWchar> own;
  for (const ImWchar* b = base; *b; ++b) own.push_back(*b);
  std::map<int, std::vector<ImWchar>> merged;  // face id -> ranges
  std::vector<std::pair<unsigned, int>> custom;
  for (unsigned cp : r.wanted) {
    const int face = src.resolve(cp, primary);
    if (face < 0) continue;
    if (proxied(cp) || src.face(face).bitmap) {
      if (fallbacks || face == primary) custom.emplace_back(cp, face);
    } else if (face == primary) {
      if (!in_ranges(base, cp)) own.insert(own.end(), {ImWchar(cp), ImWchar(cp)});
    } else if (fallbacks) {
      merged[face].insert(merged[face].end(), {ImWchar(cp), ImWchar(cp)});
    }
  }
  own.push_back(0);
  const FontFace& p = src.face(primary);
  ImFontConfig cfg = config;
  cfg.FontDataOwnedByAtlas = false;  // mapped by FontSources for the app's lifetime
  cfg.FontNo = p.index;
  r.ranges.push_back(std::move(own));
  ImFont* font = io.Fonts->AddFontFromMemoryTTF(const_cast<void*>(p.data), static_cast<int>(p.size),
                                                size_px, &cfg, r.ranges.back().data());
  if (!font) return nullptr;
  for (auto& [face, ranges] : merged) {
    const FontFace& f = src.face(face);
    ImFontConfig m = config;
    m.MergeMode = true;
    m.FontDataOwnedByAtlas = false;
    m.FontNo = f.index;
    ranges.push_back(0);
    r.ranges.push_back(std::move(ranges));
    io.Fonts->AddFontFromMemoryTTF(const_cast<void*>(f.data), static_cast<int>(f.size), size_px, &m,
                                   r.ranges.back().data());
  }
  for (auto [cp, face] : custom) {
    const unsigned id = proxy_for(cp);
    if (id == 0xFFFD) continue;  // the proxies are spent
    PendingGlyph g{font, -1, static_cast<ImWchar>(id), {}};
    if (!src.rasterise(face, cp, size_px, primary, g.bitmap)) continue;
    g.rect = io.Fonts->AddCustomRectFontGlyph(font, g.id, g.bitmap.width, g.bitmap.height,
                                              g.bitmap.advance, ImVec2(g.bitmap.x0, g.bitmap.y0));
    pending.push_back(std::move(g));
  }
  return font;
}
}  // namespace

void Fonts::want(std::string_view utf8) {
  Registry& r = registry();
  for_each_code_point(utf8, [&](unsigned cp, int, bool ok) {
    if (!ok || cp < 0x20 || r.seen[cp]) return;
    r.seen[cp] = true;
    r.wanted.push_back(cp);
    const int sans = r.sources.sans();
    const int face = r.sources.resolve(cp, sans);
    if (face < 0) return;  // missing: remembered (seen), never another rebuild
    if (proxied(cp)) proxy_for(cp);
    // The base ranges of every font (the lesson's are the smallest) already hold it.
    if (face == sans && !proxied(cp) && in_ranges(kLessonRanges, cp)) return;
    r.dirty = true;
  });
}

bool Fonts::need_rebuild() {
  return registry().dirty;
}

std::vector<Fonts::Source> Fonts::coverage() {
  Registry& r = registry();
  std::vector<Source> out;
  for (unsigned cp : r.wanted) {
    const int face = r.sources.resolve(cp, r.sources.sans());
    if (face < 0)
      out.push_back({cp, "", 0});
    else
      out.push_back({cp, r.sources.face(face).path, r.sources.face(face).index});
  }
  std::sort(out.begin(), out.end(),
            [](const Source& a, const Source& b) { return a.code_point < b.code_point; });
  return out;
}

Fonts::AtlasStats Fonts::atlas_stats() {
  return registry().stats;
}

Fonts build_fonts(float font_scale, float raster_scale) {
  const auto started = Clock::now();
  Registry& r = registry();
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  r.ranges.clear();
  r.dirty = false;
  io.Fonts->FontBuilderIO = ImGuiFreeType::GetBuilderForFreeType();
  io.Fonts->FontBuilderFlags = ImGuiFreeTypeBuilderFlags_LightHinting;
  Fonts fonts;
  const float k = font_scale * raster_scale;
  ImFontConfig config;
  config.PixelSnapH = true;
  std::vector<PendingGlyph> pending;
  const int sans = r.sources.sans(), mono = r.sources.mono();
  if (sans >= 0 && mono >= 0) {
    fonts.ui = add_font(r, sans, kUiFontSize * k, kRanges, config, true, pending);
    fonts.mono = add_font(r, mono, kMonoFontSize * k, kRanges, config, true, pending);
    fonts.big = add_font(r, sans, kBigFontSize * k, kRanges, config, true, pending);
    fonts.lesson = add_font(r, sans, kLessonFontSize * k, kLessonRanges, config, true, pending);
    fonts.lesson_mono =
        add_font(r, mono, kLessonMonoFontSize * k, kLessonRanges, config, false, pending);
    fonts.lesson_title =
        add_font(r, sans, kLessonTitleFontSize * k, kLessonRanges, config, false, pending);
  }
  if (!fonts.ui || !fonts.mono || !fonts.big || !fonts.lesson || !fonts.lesson_mono ||
      !fonts.lesson_title || !io.Fonts->Build()) {
    io.Fonts->Clear();
    pending.clear();
    fonts = Fonts{};
    fonts.warning = "DejaVu fonts not found (apt-get install fonts-dejavu-core); using a fallback";
    ImFontConfig fallback;
    fallback.SizePixels = 13.0f * k;
    fonts.ui = fonts.mono = fonts.big = io.Fonts->AddFontDefault(&fallback);
    fonts.lesson = fonts.lesson_mono = fonts.lesson_title = fonts.ui;
    io.Fonts->Build();
  }
  // The custom glyphs' pixels go into the RGBA atlas the OpenGL backend uploads.
  unsigned char* pixels = nullptr;
  int tw = 0, th = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &tw, &th);
  auto* texels = reinterpret_cast<std::uint32_t*>(pixels);
  for (const PendingGlyph& g : pending) {
    const ImFontAtlasCustomRect* rect = io.Fonts->GetCustomRectByIndex(g.rect);
    if (!rect->IsPacked()) continue;
    for (int y = 0; y < g.bitmap.height; ++y)
      std::copy_n(&g.bitmap.rgba[static_cast<size_t>(y) * g.bitmap.width], g.bitmap.width,
                  &texels[static_cast<size_t>(rect->Y + y) * tw + rect->X]);
    if (g.bitmap.colored)
      if (auto* glyph = const_cast<ImFontGlyph*>(g.font->FindGlyphNoFallback(g.id)))
        glyph->Colored = 1;  // drawn untinted
  }
  io.FontDefault = fonts.ui;
  io.FontGlobalScale = 1.0f / raster_scale;
  Fonts::AtlasStats& s = r.stats;
  s.width = tw, s.height = th, s.glyphs = 0;
  for (const ImFont* f : io.Fonts->Fonts) s.glyphs += f->Glyphs.Size;
  ++s.builds;
  s.last_build_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  s.max_build_ms = std::max(s.max_build_ms, s.last_build_ms);
  return fonts;
}

}  // namespace attnscope
