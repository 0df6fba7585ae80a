#pragma once
// Generation timeline (decoders): a Generate button with N new tokens, temperature and seed, run by
// the worker one step at a time (Stop ends it before the next step), and the generated tokens in a
// row. Choosing a step (click, the slider, Shift+←/→, or ←/→ while the pointer is over the
// timeline) focuses that token: every view then shows its row, what it attended to over the prompt
// and the earlier generations, and the meaning panel its top predictions.
#include "app/app.h"
#include "app/views/view_context.h"

namespace attnscope {

struct TimelineView {
  bool hovered = false;  // the pointer is over the timeline (plain ←/→ then step it)
  int scrolled_to = -1;  // the step the chip strip last scrolled to

  // Draws at the cursor, `width` wide; nothing for a model that cannot generate.
  void Draw(App& app, ViewContext& ctx, float width);
};

}  // namespace attnscope
