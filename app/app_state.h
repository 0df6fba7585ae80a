#pragma once
// What every view reads and the controls write: the sentences, the model, the focus, the chosen
// layer/head and colormap. One instance, owned by the UI thread.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/views/shown_matrix.h"
#include "app/worker.h"
#include "core/backend/backend.h"
#include "core/model/intervention.h"
#include "core/model/lesson/lesson_model.h"
#include "core/model/model.h"

namespace attnscope {

struct SlotState {
  std::string text;  // what the text box holds
  // Encoder–decoders (capabilities.cross_attention): the target sentence the decoder reads; empty:
  // the model's own (greedy) translation of `text`.
  std::string target;
  std::uint64_t next_id = 1;                    // id of the next compute job
  std::uint64_t submitted_id = 0;               // newest job sent to the worker
  std::shared_ptr<const ComputeResult> result;  // newest published result (this frame)
  std::string label;                            // e.g. "river" (preset sense)
  int locked_token = -1;                        // clicked token (-1: none)
  std::string preferred_word;                   // focus this word when a new trace arrives
  // Generation (decoders): the settings of the Generate button, and whether the focus follows
  // each new token as it comes (false once the user steps back on the timeline).
  GenerationOptions generation{.max_new_tokens = 16, .predictions = 10};
  bool follow_generation = true;
  std::vector<int> selected_queries;  // several query tokens (shift-click / drag), sorted
  // Edges cut in this sentence (Ctrl+click a heatmap cell or an arc): its token indices.
  std::vector<EdgeKnockout> knockouts;
};

// What the window asks of the model besides the weights (issue 27): heads switched off (every
// sentence), the model view's effect and dla, and for which target token.
struct InterventionState {
  std::vector<HeadRef> ablated;  // sorted by layer, head
  AblationMode mode = AblationMode::kZero;
  int target = -1;  // the token whose probability effect and dla measure (-1: the top prediction)
  std::string target_input;        // what the user typed to pick it
  bool effects_cancelled = false;  // the effect map was stopped; Recompute starts it again
};

// The focus is shared by every view: hovering any view focuses that token everywhere (this frame),
// clicking locks it.
struct Focus {
  int hover_slot = -1, hover_token = -1;            // set while drawing this frame
  int last_hover_slot = -1, last_hover_token = -1;  // from the previous frame, read by views
  int active_slot = 0;                              // slot the formula/meaning panels follow

  int token(const SlotState& slot, int slot_index) const {
    if (last_hover_slot == slot_index && last_hover_token >= 0) return last_hover_token;
    return slot.locked_token;
  }
  void hover(int slot, int token) {
    hover_slot = slot;
    hover_token = token;
  }
};

// The guided lesson (app/lesson/): a presentation mode, one screen per step of "Attention,
// explained from scratch", on sentence 1.
struct LessonMode {
  bool active = false;
  int step = 1;            // 1..kLessonSteps (core/session/session.h)
  bool unscaled = false;   // step 4: show the softmax without ÷√d_k
  bool predict = false;    // "predict first": each step's numbers stay hidden until revealed
  bool revealed = false;   // this step's numbers are shown (predict mode)
  bool positions = false;  // step 8: add positional encodings
  // What the explorer showed before the lesson began, restored when it ends.
  LessonOptions saved_options;
  std::string saved_model_spec, saved_text2, saved_label2;
  std::shared_ptr<const Model> saved_model;  // given back as is (no reload) when not the lesson
  bool saved_show_second = true;
};

struct AppState {
  std::array<SlotState, kSlots> slots;
  bool show_second = true;

  // Model: the one computing now, what it is, and how it was asked for.
  std::shared_ptr<const Model> model;
  ModelInfo model_info;  // model->info() of `model`, read once when it loaded (views read this)
  std::string model_spec = "lesson";
  std::string model_error;  // why the newest load failed (the previous model stays)
  LessonOptions lesson;     // edited by the controls; applied by rebuilding the lesson model
  std::shared_ptr<Backend> backend;
  std::string backend_choice = "auto";
  std::string backend_note;  // why it fell back to the CPU, or the CUDA error

  int layer = 0, head = 0;
  int colormap = 0;          // index into colormaps()
  bool fixed_range = false;  // colors span 0..1 instead of 0..row-set max
  Focus focus;

  // What every view draws instead of one head's raw weights (aggregate, sinks, log colours).
  ShownOptions shown;
  bool model_view = false;  // the main area shows every layer × head (app/views/model_view.h)
  int model_view_slot = 0;  // whose sentence the model view shows
  bool overlay = false;     // the lines view overlays several heads of the layer
  // Lines and arcs draw each query's k strongest keys. Kept as chosen: a text too short for k
  // clamps where it is used, never here (retyping or clearing must not lose it).
  int top_k = 5;
  std::vector<int> overlay_heads;  // which heads (sorted), toggled by their swatches
  // The model view's sort and filter, as head summary keys (core/analysis/head_summary.h; "":
  // the model's head order / every head) so a saved session names them.
  std::string model_sort, model_filter;
  // The model view's thumbnails marked by "effect" or "dla" (issue 27; "": not marked).
  std::string model_colour;
  float model_filter_min = 0.5f;

  InterventionState interventions;

  LessonMode lesson_mode;
  std::string session_path;  // the session file last opened or saved (empty: none)

  std::string message;  // last screenshot path or notice (status bar)
  bool message_is_error = false;
};

// The focused token of slot `s` for this frame, clamped to the trace (-1 when none).
int focused_token(const AppState& app, int s);

}  // namespace attnscope
