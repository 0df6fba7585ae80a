#pragma once
// The pictures of the lesson's eight steps, each drawn into a rectangle in large type.
#include <nlohmann/json.hpp>

#include "app/app.h"
#include "app/lesson/real_heads.h"
#include "app/ui/fonts.h"
#include "core/model/lesson/lesson_model.h"

namespace attnscope {

// The real model beside the lesson's own at steps 7 and 8 (app/lesson/lesson_real.h).
struct LessonRealShown {
  const ModelInfo& info;
  PositionScheme positions;
  const AttentionTrace* trace;     // sentence 1 on that model (null: computing)
  const AttentionTrace* reversed;  // its words reversed (null: computing)
  const HeadSummaries* summaries;  // of `trace`
  const std::string& error;        // why it is missing (empty: none)
};

struct LessonPictureContext {
  App& app;
  const Fonts& fonts;
  nlohmann::json* layout;  // nullable: where grids and bars went (tests)
  float pixel_scale;
  const AttentionTrace* trace;            // sentence 1
  const AttentionTrace* second;           // sentence 2 (step 8: the reversed words), may be null
  int focus;                              // the focused token of sentence 1 (-1: none)
  const MeaningShift* shift;              // step 6's neighbours of the focused word, may be null
  const LessonRealShown* real = nullptr;  // steps 7-8: a real model to show too (null: none)
};

// Steps 7 and 8's real-model panels (app/lesson/lesson_real_pictures.cpp).
void draw_real_heads(LessonPictureContext& ctx, ImVec2 at, ImVec2 size);
void draw_real_positions(LessonPictureContext& ctx, ImVec2 at, ImVec2 size);

// Step 7's two lesson-model heads (app/lesson/lesson_heads.cpp).
void draw_lesson_heads(LessonPictureContext& ctx, ImVec2 at, ImVec2 size);

// Draws step `step` (1..8) into [origin, origin + size].
void draw_lesson_picture(LessonPictureContext& ctx, int step, ImVec2 origin, ImVec2 size);

}  // namespace attnscope
