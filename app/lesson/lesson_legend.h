#pragma once
// What the colours and the grey cells of the lesson's grids mean: a colorbar with its values, and
// the masked pairs (−∞) said in words.
#include <string>
#include <vector>

#include "app/lesson/lesson_draw.h"

namespace attnscope::lesson {

// A vertical colorbar over [vmin, vmax] (vmax at the top) `h` high with its values at both ends
// and the middle; returns its width (colorbar_width measures it first).
float draw_colorbar(LessonPictureContext& ctx, const char* name, float vmin, float vmax, ImVec2 at,
                    float h);
float colorbar_width(const LessonPictureContext& ctx, float vmin, float vmax);
// Why some entries of `masked` are −∞, in a teacher's words: each word with itself when "exclude
// self" is on, the columns of words without a vector, other masked pairs. `shown_as` is what the
// grid shows in those cells ("−∞", or "0" for weights). Empty text when nothing is masked.
struct MaskedNote {
  std::string text;
  bool self = false;                 // the diagonal is masked
  std::vector<int> unknown_columns;  // keys without a vector
  bool other = false;                // pairs masked for another reason
};
MaskedNote masked_note(const AttentionTrace& t, const Matrix& masked, const char* shown_as);
// Draws the note wrapped at `width` (nothing when empty) and records it; returns the height used.
float draw_masked_note(LessonPictureContext& ctx, const MaskedNote& note, ImVec2 at, float width);

}  // namespace attnscope::lesson
