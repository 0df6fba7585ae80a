#pragma once
// Step 7's optional page, "a head that copies" (issue 27): the built-in tiny trained transformer
// reads a sentence said twice, without its last word. The second time it can guess each next word
// by copying: its induction heads look back at the word that followed the same word the first
// time. Switching them off makes the guess of the repeated word fall; every number is the model's,
// computed when the page opens (and again when the sentence is retyped), off the UI thread.
//
// The page belongs to step 7 (sessions keep storing steps 1..8): PageDown on step 7 opens it when
// the tiny model ships (assets/tiny_model), the next PageDown switches the copying heads off and
// the one after goes on to step 8; PageUp goes back to step 7's heads. The heads are switched off
// in the lesson's own probe, never in the explorer's interventions.
#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/lesson/lesson_steps.h"
#include "app/lesson/lesson_view.h"  // LessonKey
#include "app/ui/background_task.h"
#include "core/model/intervention.h"
#include "core/model/model.h"
#include "core/util/matrix.h"

namespace attnscope {

// The sentence the page starts with: tiny guesses its last word ("tree") from the first copy.
inline constexpr const char* kCopyingSentence = "A red fox saw a blue moon over the green tree.";
// A head copies when at least this much of its attention, from a word seen before, goes to the
// word that followed it then (its induction score, core/analysis/head_summary.h). tiny's layer 2
// heads score 0.3-0.8 on a repeated sentence, every other head below 0.07.
inline constexpr float kCopyingInduction = 0.2f;
inline constexpr int kMaxCopyingHeads = 4;  // the strongest ones, so 2^k switch states stay few

// One switch state of the copying heads: the next-token distribution with those heads off.
struct CopyingOutcome {
  unsigned off = 0;                   // bit i: heads[i] switched off
  std::vector<double> probability;    // of every token of the vocabulary
  double target = 0.0;                // the repeated word's probability
  int target_rank = 0;                // 1: the model's first guess
  std::vector<TokenProbability> top;  // the model's first guesses (kCopyingTop of them)
};
inline constexpr int kCopyingTop = 5;

// What the page shows, all from the model.
struct CopyingResult {
  std::shared_ptr<const Model> model;  // tiny, kept for the next sentence
  std::string model_name;
  std::string sentence;  // as typed
  std::string prompt;    // what tiny reads: the sentence, then the sentence without its last word
  Tokens tokens;         // of `prompt` (the first is <s>)
  TokenProbability target;       // the token that came next the first time (its clean probability)
  std::vector<HeadRef> heads;    // the heads that copy, by layer and head
  std::vector<float> induction;  // their induction scores
  std::vector<Matrix> weights;   // their attention [T x T], heads on
  std::vector<CopyingOutcome> outcomes;  // indexed by the `off` mask, 0 .. 2^heads - 1
  int vocab = 0;                         // how many tokens the model chooses from
};

// "s" said twice without the last word ("a b c" → "a b c a b"); empty when it has fewer than two
// words.
std::string copying_prompt(const std::string& sentence);
// Runs `model` (tiny when null) on the sentence said twice. Throws Error with a message for a
// class: too short, too long for the model, no head that copies.
std::shared_ptr<const CopyingResult> compute_copying(std::shared_ptr<const Model> model,
                                                     const std::string& sentence);

// The page's state; one per App (copying_page()).
struct CopyingPage {
  bool shown = false;  // step 7 shows this page instead of the lesson's heads
  unsigned off = 0;    // bit i: result->heads[i] switched off
  std::string sentence = kCopyingSentence;
  std::shared_ptr<const CopyingResult> result;  // of `sentence` (null: computing or failed)
  std::string error;                            // why there is no result
  std::string asked;                            // the sentence the newest computation reads
  std::shared_ptr<const Model> model;           // tiny, once opened
  BackgroundTask<std::shared_ptr<const CopyingResult>> task;

  unsigned all() const { return result ? (1u << result->heads.size()) - 1 : 0u; }
  const CopyingOutcome* shown_outcome() const;  // the current switch state's (null: none yet)
  // Once per frame while shown: starts computing a retyped sentence, takes a finished result.
  void sync();
  bool busy() const;  // a result for the sentence shown is still coming
};
CopyingPage& copying_page(const App& app);

// The page can be shown here: the tiny model's folder was found.
bool copying_available();
void copying_open(App& app);   // on step 7: shows the page (the heads on)
void copying_close(App& app);  // hides it and switches the heads back on
bool copying_shown(const App& app);
// The presenter's keys on the page: true when the key was used here (false: the lesson's own).
bool copying_handle_key(App& app, LessonKey key);

const LessonStepText& copying_step_text();
// What the teacher says, with the model's numbers for the current switch state.
std::string copying_say(const CopyingPage& page);
// "12%", "2.3%", "0.081%": two significant digits below 10%.
std::string percent(double p);

}  // namespace attnscope
