#pragma once
// DejaVu Sans for text, DejaVu Sans Mono for numbers (found through fontconfig), rasterised by
// FreeType at the exact pixel size they are shown at: the atlas is rebuilt when the font scale
// changes and at S× for a hi-res screenshot, so text is crisp at every scale.
//
// Every script: the atlas starts with Latin, Greek, Cyrillic and math, and grows with the text
// the app shows. The frame reports its strings (Fonts::want); a code point the atlas lacks is
// resolved to a font that has it (the primary, else fontconfig's fallback: Noto CJK, Arabic,
// Hebrew, Devanagari, Thai, colour emoji …, app/ui/font_sources.h) and the atlas is rebuilt before
// the next frame, with just those glyphs merged in. A code point no font has is remembered as
// missing and never causes another rebuild. Code points above U+FFFF reach ImGui as Private Use
// Area proxies (app/ui/imgui_text.h) whose glyphs are drawn here from the real code point.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <imgui.h>

namespace attnscope {

struct Fonts {
  ImFont* ui = nullptr;    // labels, menus
  ImFont* mono = nullptr;  // numbers in matrices and cells
  ImFont* big = nullptr;   // the sentence view
  // The guided lesson's large type, readable from the back of a classroom at 1280×720.
  ImFont* lesson = nullptr;        // explanations, labels
  ImFont* lesson_mono = nullptr;   // numbers in the lesson's matrices
  ImFont* lesson_title = nullptr;  // the step's title
  std::string warning;             // set when DejaVu was not found (ImGui's built-in font is used)

  // The app is about to show `utf8` (real UTF-8, not ImGui's proxy form). Cheap for code points
  // already seen.
  static void want(std::string_view utf8);
  // A wanted code point is missing from the atlas and some font has it: rebuild before the frame.
  static bool need_rebuild();

  // Every wanted code point (ascending) and the font file that draws it in the UI font ("" when
  // no font has it), with the face index in that file (.ttc collections).
  struct Source {
    unsigned code_point;
    std::string file;
    int face_index;
  };
  static std::vector<Source> coverage();
  struct AtlasStats {
    int width = 0, height = 0, glyphs = 0, builds = 0;
    double last_build_ms = 0, max_build_ms = 0;
  };
  static AtlasStats atlas_stats();
};

// Clears the atlas and adds the fonts at `font_scale` (user's Ctrl +/−) × `raster_scale` (1, 2 or
// 4 for screenshots), with the wanted glyphs. Sets io.FontGlobalScale = 1 / raster_scale. Builds
// the atlas; the caller re-uploads its texture.
Fonts build_fonts(float font_scale, float raster_scale);

inline constexpr float kUiFontSize = 15.0f;
inline constexpr float kMonoFontSize = 14.0f;
inline constexpr float kBigFontSize = 21.0f;
inline constexpr float kLessonFontSize = 27.0f;
inline constexpr float kLessonMonoFontSize = 23.0f;
inline constexpr float kLessonTitleFontSize = 38.0f;

}  // namespace attnscope
