#pragma once
// The guided lesson's script and its control: eight steps that follow "Attention, explained from
// scratch" on the live sentence 1, each with a title and what a teacher would say. Entering the
// lesson switches to the lesson model (the step decides its heads and positions); leaving restores
// what the explorer showed. No drawing here: app/lesson/lesson_view.cpp draws the steps.
#include <string>

#include "app/app.h"

namespace attnscope {

struct LessonStepText {
  const char* title;
  const char* say;      // one or two sentences, in a teacher's words
  const char* predict;  // the "predict first" question asked before the numbers are revealed
};
// Step 1..kLessonSteps.
const LessonStepText& lesson_step_text(int step);

// The lesson model options step `step` computes with, from the explorer's `base` (β and the self
// mask are the teacher's; heads, positions and scaling are the step's).
LessonOptions lesson_step_options(const LessonOptions& base, int step, bool positions);

void enter_lesson(App& app, int step);
void leave_lesson(App& app);
void lesson_go_to(App& app, int step);  // clamps to 1..kLessonSteps
void lesson_set_positions(App& app, bool on);
// Step 8 compares sentence 1 with its words in reverse order (sentence 2).
std::string reversed_words(const std::string& text);
// Call once per frame in lesson mode: keeps sentence 2 the reverse of sentence 1 on step 8.
void lesson_sync(App& app);

}  // namespace attnscope
