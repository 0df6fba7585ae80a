#pragma once
// The guided lesson, drawn full window in large type: a header (step, title, the live sentence),
// the step's picture (app/lesson/lesson_pictures.cpp), and what the teacher says with the
// navigation below. PageDown/→ and PageUp/← step, as presenters' clickers send; Space reveals the
// numbers in "predict first" mode (never hides them); U (step 4) drops ÷√d_k; P (step 8) adds
// positions; Esc leaves. Step 7 has an optional page after its heads, the tiny model's heads that
// copy (app/lesson/lesson_copying.h), which PageDown passes through.
#include <memory>

#include <nlohmann/json.hpp>

#include "app/app.h"
#include "app/lesson/lesson_real.h"
#include "app/ui/fonts.h"
#include "core/model/lesson/lesson_model.h"

namespace attnscope {

// One key press the frame loop hands to the lesson.
enum class LessonKey { kNext, kPrevious, kFirst, kLast, kReveal, kUnscaled, kPositions, kLeave };
void lesson_handle_key(App& app, LessonKey key);
// The "predict first" checkbox: ticking it hides the numbers from the next step on.
void lesson_set_predict(App& app, bool on);

struct LessonView {
  bool text_box_active = false;
  int focus_text_box = -1;  // give the sentence box keyboard focus on the next frame (tests)
  LessonReal real;          // steps 7-8: the model the explorer had, beside the lesson's own
  bool busy = false;        // the last Draw waited for the real model (headless runs wait too)

  void Draw(App& app, const Fonts& fonts, nlohmann::json* layout, float pixel_scale);
};

}  // namespace attnscope
