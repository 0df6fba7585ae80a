#pragma once
// The pictures of the lesson's eight steps (and step 7's optional page), each drawn into a
// rectangle in large type.
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

// One head's weights as a square of colored cells, 0 to the head's largest weight; recorded in
// the layout as `name` with its values and `extra` (app/lesson/lesson_real_pictures.cpp).
void draw_heat(LessonPictureContext& ctx, const std::string& name, const Matrix& w, ImVec2 at,
               float side, nlohmann::json extra = nlohmann::json::object());

// Steps 7 and 8's real-model panels (app/lesson/lesson_real_pictures.cpp).
void draw_real_heads(LessonPictureContext& ctx, ImVec2 at, ImVec2 size);
void draw_real_positions(LessonPictureContext& ctx, ImVec2 at, ImVec2 size);

// Step 7's optional page: the tiny model's heads that copy, switched off
// (app/lesson/lesson_copying_picture.cpp).
struct CopyingPage;
void draw_copying_page(LessonPictureContext& ctx, CopyingPage& page, ImVec2 at, ImVec2 size);

// Step 7's two lesson-model heads (app/lesson/lesson_heads.cpp).
void draw_lesson_heads(LessonPictureContext& ctx, ImVec2 at, ImVec2 size);

// Draws step `step` (1..8) into [origin, origin + size].
void draw_lesson_picture(LessonPictureContext& ctx, int step, ImVec2 origin, ImVec2 size);

}  // namespace attnscope
