#pragma once
// The pictures of the lesson's eight steps, each drawn into a rectangle in large type.
#include <nlohmann/json.hpp>

#include "app/app.h"
#include "app/ui/fonts.h"
#include "core/model/lesson/lesson_model.h"

namespace attnscope {

struct LessonPictureContext {
  App& app;
  const Fonts& fonts;
  nlohmann::json* layout;  // nullable: where grids and bars went (tests)
  float pixel_scale;
  const AttentionTrace* trace;   // sentence 1
  const AttentionTrace* second;  // sentence 2 (step 8: the reversed words), may be null
  int focus;                     // the focused token of sentence 1 (-1: none)
  const MeaningShift* shift;     // step 6's neighbours of the focused word, may be null
};

// Draws step `step` (1..8) into [origin, origin + size].
void draw_lesson_picture(LessonPictureContext& ctx, int step, ImVec2 origin, ImVec2 size);

}  // namespace attnscope
