#pragma once
// The real transformer the guided lesson shows beside its own model at steps 7 and 8: whatever
// the explorer had loaded before the lesson began (GPT-2, BERT, a decoder, the tiny trained
// transformer; not the lesson model, not a stored trace, which cannot read a new sentence). It
// runs on the worker's two lesson slots (sentence 1 and its words reversed) with head summaries,
// never on the UI thread. A lesson begun before that model was open (a session saved in the
// lesson, `--model M --lesson N`) opens it here, off the UI thread, and hands it to LessonMode so
// that leaving the lesson needs no second load.
#include <cstdint>
#include <memory>
#include <string>

#include "app/app.h"
#include "app/lesson/real_heads.h"
#include "app/ui/background_task.h"

namespace attnscope {

// A model the lesson can show at steps 7 and 8: it has layers and heads, reads any text, and is
// not the lesson model (read from its capabilities, not its kind).
bool lesson_can_show(const Model& model, const ModelInfo& info);

struct LessonReal {
  std::shared_ptr<const Model> model;  // null: steps 7 and 8 are the lesson model's alone
  ModelInfo info;
  PositionScheme positions = PositionScheme::kUnknown;
  std::string error;  // the model could not be opened or run: said on the step

  // Once per frame in lesson mode: opens the saved model if needed, and at steps 7 and 8 sends
  // sentence 1 (and its reverse) to the worker whenever the text or the model changed.
  void sync(App& app);
  // The newest result for the current model: `which` 0 is sentence 1, 1 its reverse; null until
  // the first one arrives (an older one of another model is never returned).
  std::shared_ptr<const ComputeResult> result(const App& app, int which) const;
  // Something is still on its way (the headless screenshot waits for it).
  bool busy(const App& app) const;

 private:
  BackgroundTask<std::shared_ptr<const Model>> opening_;
  std::string opening_spec_;
  std::shared_ptr<const Model> seen_;  // LessonMode::saved_model when `model` was chosen
  std::uint64_t first_id_ = 0;         // results older than this answer another model
  std::uint64_t sent_id_[2] = {0, 0};
  std::string sent_text_;
  bool wanted_ = false;  // this frame is step 7 or 8 with a model to show
};

}  // namespace attnscope
