#include "app/lesson/lesson_steps.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "app/lesson/lesson_copying.h"
#include "core/session/session.h"

namespace attnscope {

namespace {
const LessonStepText kSteps[kLessonSteps] = {
    {"Words become vectors",
     "A computer cannot read words, so each word becomes a list of numbers: its vector. Words "
     "used in similar ways get similar vectors.",
     "Which words of this sentence will have similar vectors?"},
    {"Query, key, value",
     "Every word plays three parts: a query (what am I looking for?), a key (what do I offer?) "
     "and a value (what do I pass on?). In our small model all three are the word's own vector.",
     "If query and key are the same vector, which word matches a word best?"},
    {"Scores: Q \xC2\xB7 K\xE1\xB5\x80",
     "Each word compares its query with every key: multiply them number by number and add up. "
     "A big score means a good match.",
     "Which word will get the biggest score in the highlighted row?"},
    {"Divide by \xE2\x88\x9A"
     "d\xE2\x82\x96",
     "Long vectors give big scores, and big scores make softmax pick one word and ignore the "
     "rest. Dividing by \xE2\x88\x9A"
     "d\xE2\x82\x96 keeps the scores in a range where several words can share the attention.",
     "What happens to the weights if we do not divide?"},
    {"Softmax: weights that add up to 1",
     "Softmax turns each row of scores into weights between 0 and 1 that add up to exactly 1: "
     "how much attention the word pays to each other word.",
     "Which word gets most of the highlighted word's attention?"},
    {"Weights \xC2\xB7 V: a new vector",
     "The word's new vector is the weighted mix of the values it attends to. Now \"%s\" carries "
     "its context: its nearest words move toward the right sense.",
     "Which meaning will the new vector lean toward?"},
    {"Several heads at once",
     "A model asks several questions at once: each head has its own queries and keys. Here one "
     "head follows meaning and the other follows position.",
     "Which word will each head look at?"},
    {"Where is each word?",
     "Attention by itself does not see word order: the same words in another order get the same "
     "weights. Adding a positional encoding to each vector tells the model where each word is.",
     "Will the reversed sentence get the same attention?"},
};
}  // namespace

const LessonStepText& lesson_step_text(int step) {
  return kSteps[std::clamp(step, 1, kLessonSteps) - 1];
}

LessonOptions lesson_step_options(const LessonOptions& base, int step, bool positions) {
  LessonOptions o;
  o.beta = base.beta;
  o.mask_self = base.mask_self;
  o.mask_unknown = base.mask_unknown;
  o.heads = step == 7 ? 2 : 1;
  o.head_design = HeadDesign::kRoles;
  o.positional = step == 8 && positions;
  return o;
}

namespace {
void apply_step(App& app) {
  AppState& st = app.state;
  LessonMode& m = st.lesson_mode;
  copying_close(app);  // step 7's optional page opens from step 7 only
  st.lesson = lesson_step_options(m.saved_options, m.step, m.positions);
  st.layer = 0;
  st.head = 0;
  st.show_second = m.step == 8;
  if (m.step == 8) {
    st.slots[1].text = reversed_words(st.slots[0].text);
    st.slots[1].label = "reversed";
  }
  app.rebuild_lesson_model();  // also resubmits both sentences
}
}  // namespace

void enter_lesson(App& app, int step) {
  AppState& st = app.state;
  LessonMode& m = st.lesson_mode;
  if (!m.active) {
    m.saved_options = st.lesson;
    m.saved_model_spec = st.model_spec;
    m.saved_model = st.model;
    m.saved_text2 = st.slots[1].text;
    m.saved_label2 = st.slots[1].label;
    m.saved_show_second = st.show_second;
    m.active = true;
  }
  m.step = std::clamp(step, 1, kLessonSteps);
  m.revealed = false;
  st.focus.active_slot = 0;
  apply_step(app);
}

void leave_lesson(App& app) {
  AppState& st = app.state;
  LessonMode& m = st.lesson_mode;
  if (!m.active) return;
  m.active = false;
  copying_close(app);
  st.lesson = m.saved_options;
  st.slots[1].text = m.saved_text2;
  st.slots[1].label = m.saved_label2;
  st.show_second = m.saved_show_second;
  if (m.saved_model_spec.empty() || m.saved_model_spec == "lesson")
    app.rebuild_lesson_model();
  else if (m.saved_model && m.saved_model->info().kind != "lesson")
    app.use_model(m.saved_model, m.saved_model_spec);  // GPT-2, BERT, a stored trace: no reload
  else
    app.open_model(m.saved_model_spec);
  m.saved_model.reset();
}

void lesson_go_to(App& app, int step) {
  LessonMode& m = app.state.lesson_mode;
  step = std::clamp(step, 1, kLessonSteps);
  if (!m.active) {
    enter_lesson(app, step);
    return;
  }
  if (step == m.step) return;
  m.step = step;
  m.revealed = false;
  apply_step(app);
}

void lesson_set_positions(App& app, bool on) {
  LessonMode& m = app.state.lesson_mode;
  if (m.positions == on) return;
  m.positions = on;
  if (m.active) apply_step(app);
}

std::string reversed_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  std::string out;
  for (auto it = words.rbegin(); it != words.rend(); ++it) out += (out.empty() ? "" : " ") + *it;
  return out;
}

void lesson_sync(App& app) {
  AppState& st = app.state;
  if (!st.lesson_mode.active || st.lesson_mode.step != 8) return;
  std::string want = reversed_words(st.slots[0].text);
  if (st.slots[1].text != want) app.set_text(1, want);
}

}  // namespace attnscope
