#pragma once
// DejaVu Sans for text, DejaVu Sans Mono for numbers (fonts-dejavu-core), rasterised at the exact
// pixel size they are shown at: the atlas is rebuilt when the font scale changes and at S× for a
// hi-res screenshot, so text is crisp at every scale rather than a stretched bitmap.
#include <string>

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
};

// Clears the atlas and adds the fonts at `font_scale` (user's Ctrl +/−) × `raster_scale` (1, 2 or
// 4 for screenshots). Sets io.FontGlobalScale = 1 / raster_scale. The caller re-uploads the atlas.
Fonts build_fonts(float font_scale, float raster_scale);

inline constexpr float kUiFontSize = 15.0f;
inline constexpr float kMonoFontSize = 14.0f;
inline constexpr float kBigFontSize = 21.0f;
inline constexpr float kLessonFontSize = 27.0f;
inline constexpr float kLessonMonoFontSize = 23.0f;
inline constexpr float kLessonTitleFontSize = 38.0f;

}  // namespace attnscope
