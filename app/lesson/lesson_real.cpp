#include "app/lesson/lesson_real.h"

#include "app/lesson/lesson_steps.h"
#include "app/session_io.h"
#include "core/trace/trace_model.h"

namespace attnscope {

bool lesson_can_show(const Model& model, const ModelInfo& info) {
  // The lesson model is the one that compares meanings; a stored trace cannot read new text.
  return !info.capabilities.meaning_shift && info.layers > 0 && info.heads > 0 &&
         dynamic_cast<const TraceModel*>(&model) == nullptr;
}

void LessonReal::sync(App& app) {
  LessonMode& m = app.state.lesson_mode;
  wanted_ = false;
  if (!m.active) return;
  // The explorer's model was never opened (the lesson began first): open it here, once.
  const std::string& spec = m.saved_model_spec;
  if (!m.saved_model && !spec.empty() && spec != "lesson" && spec.rfind(kTraceSpecPrefix, 0) != 0 &&
      spec != opening_spec_) {
    opening_spec_ = spec;
    opening_.start([spec] { return open_model(spec); });
  }
  std::shared_ptr<const Model> opened;
  std::string why;
  if (opening_.take(opened, why)) {
    if (opened && m.saved_model_spec == opening_spec_ && !m.saved_model) m.saved_model = opened;
    if (!why.empty()) error = "could not open " + opening_spec_ + ": " + why;
  }
  if (m.saved_model != seen_) {
    seen_ = model = m.saved_model;
    info = model ? model->info() : ModelInfo{};
    if (model && !lesson_can_show(*model, info)) model.reset();
    positions = model ? position_scheme_of(info.kind) : PositionScheme::kUnknown;
    first_id_ = 0;
    sent_text_.clear();
    if (model) error.clear();
  }
  if (!model || (m.step != 7 && m.step != 8)) return;
  wanted_ = true;
  const std::string& text = app.state.slots[0].text;
  if (first_id_ == 0 || text != sent_text_) {
    sent_text_ = text;
    sent_id_[0] = app.submit_lesson_job(kSlots, model, text);
    sent_id_[1] = app.submit_lesson_job(kSlots + 1, model, reversed_words(text));
    if (first_id_ == 0) first_id_ = sent_id_[0];
  }
}

std::shared_ptr<const ComputeResult> LessonReal::result(const App& app, int which) const {
  if (!model || first_id_ == 0) return nullptr;
  auto r = app.lesson_job_result(kSlots + which);
  return r && r->id >= first_id_ ? r : nullptr;
}

bool LessonReal::busy(const App& app) const {
  if (opening_.busy()) return true;
  if (!wanted_) return false;
  for (int w = 0; w < 2; ++w) {
    auto r = result(app, w);
    if (!r || r->id != sent_id_[w]) return true;
  }
  return false;
}

}  // namespace attnscope
