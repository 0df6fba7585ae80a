#pragma once
// What a view gets to draw one sentence's trace: the shared state, the slot's trace and weights
// (attention[layer][head]), the focused token and where to record what it drew (tests).
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/app_state.h"
#include "app/probe_jobs.h"
#include "app/ui/fonts.h"
#include "core/trace/trace.h"

namespace attnscope {

struct ViewContext {
  ViewContext(AppState& app_state, const Fonts& view_fonts) : app(app_state), fonts(view_fonts) {}
  AppState& app;
  const Fonts& fonts;
  int slot = 0;
  const AttentionTrace* trace = nullptr;            // null before the first result
  std::shared_ptr<const AttentionTrace> trace_ref;  // owns *trace (views may keep it)
  const Matrix* weights = nullptr;  // [queries x keys] as drawn (= shown->weights), or null
  // What the views draw: the chosen head or aggregate after the sink options, its colour scale,
  // the combined row of several selected queries, the title (null before the first result).
  std::shared_ptr<const ShownMatrix> shown;
  bool shown_pending = false;  // a newer `shown` is being built off the UI thread (shown: older)
  int focus = -1;              // focused token this frame (-1: none)
  nlohmann::json* layout = nullptr;  // where to record drawn positions, or null
  float pixel_scale = 1.0f;          // screenshot pixels per ImGui unit
  // The sentence's next token, lens and effect map (decoders; null otherwise or before the first)
  // and whether a newer one is on its way.
  std::shared_ptr<const ProbeResult> probe;
  bool probe_pending = false;
  // Interventions the window makes (issue 27): toggled by Alt+click (a head) and Ctrl+click (an
  // edge); null where the model cannot be intervened on.
  std::function<void(int layer, int head)> toggle_ablation;
  std::function<void(const EdgeKnockout&)> toggle_knockout;
  std::function<void()> clear_interventions;  // every head back on, every edge back

  // What a view says while it has no trace: no model yet, the sentence's text failed (its message
  // is under the text box: a text whose token the model cannot embed, say), or it is on its way.
  const char* no_trace_text() const {
    if (!app.model) return "no model: choose one on the left";
    const SlotState& s = app.slots[static_cast<std::size_t>(slot)];
    if (s.result && !s.result->trace && !s.result->error.empty() &&
        s.result->id >= s.submitted_id)  // no newer job on its way
      return "nothing to show: this text could not be computed (the message is above)";
    return "computing\xE2\x80\xA6";
  }
};

}  // namespace attnscope
