#include "app/ui/fonts.h"

#include <filesystem>

namespace attnscope {

namespace {
const char* const kSans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const char* const kMono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";

// Latin, Greek (β), Cyrillic, punctuation, super/subscripts (ᵀ), arrows and math (√ · ÷ ∝).
const ImWchar kRanges[] = {0x0020, 0x024F, 0x0370, 0x03FF, 0x0400, 0x04FF, 0x1D00, 0x1DBF,
                           0x2000, 0x206F, 0x2070, 0x209F, 0x2C60, 0x2C7F, 0x2190, 0x21FF,
                           0x2200, 0x22FF, 0x2500, 0x25FF, 0xFFFD, 0xFFFD, 0};
// The lesson's large fonts: fewer glyphs (Latin, Greek, sub/superscripts, arrows, math), so the
// atlas stays small at 2× and 4× screenshot scale.
const ImWchar kLessonRanges[] = {0x0020, 0x017F, 0x0370, 0x03FF, 0x1D00, 0x1DBF, 0x2000,
                                 0x22FF, 0x25A0, 0x25FF, 0xFFFD, 0xFFFD, 0};
}  // namespace

Fonts build_fonts(float font_scale, float raster_scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  Fonts fonts;
  const float k = font_scale * raster_scale;
  ImFontConfig config;
  config.OversampleH = 2;
  config.OversampleV = 1;
  config.PixelSnapH = true;
  if (std::filesystem::exists(kSans) && std::filesystem::exists(kMono)) {
    fonts.ui = io.Fonts->AddFontFromFileTTF(kSans, kUiFontSize * k, &config, kRanges);
    fonts.mono = io.Fonts->AddFontFromFileTTF(kMono, kMonoFontSize * k, &config, kRanges);
    fonts.big = io.Fonts->AddFontFromFileTTF(kSans, kBigFontSize * k, &config, kRanges);
    // Large fonts need no horizontal oversampling to look sharp.
    ImFontConfig large = config;
    large.OversampleH = 1;
    fonts.lesson = io.Fonts->AddFontFromFileTTF(kSans, kLessonFontSize * k, &large, kLessonRanges);
    fonts.lesson_mono =
        io.Fonts->AddFontFromFileTTF(kMono, kLessonMonoFontSize * k, &large, kLessonRanges);
    fonts.lesson_title =
        io.Fonts->AddFontFromFileTTF(kSans, kLessonTitleFontSize * k, &large, kLessonRanges);
  }
  if (!fonts.ui || !fonts.mono || !fonts.big || !fonts.lesson || !fonts.lesson_mono ||
      !fonts.lesson_title) {
    io.Fonts->Clear();
    fonts.warning = "DejaVu fonts not found (apt-get install fonts-dejavu-core); using a fallback";
    ImFontConfig fallback;
    fallback.SizePixels = 13.0f * k;
    fonts.ui = fonts.mono = fonts.big = io.Fonts->AddFontDefault(&fallback);
    fonts.lesson = fonts.lesson_mono = fonts.lesson_title = fonts.ui;
  }
  io.FontDefault = fonts.ui;
  io.FontGlobalScale = 1.0f / raster_scale;
  return fonts;
}

}  // namespace attnscope
