#pragma once
// The next-token panel of a decoder (issue 27): for the focused position, the model's top next
// tokens before → after the heads switched off and the edges cut, with Δlog-probability and the KL
// divergence of the whole distribution; a click on a token makes it the target of the model
// view's effect and dla. Drawn in the "Next token" tab (app/views/meaning_view.h).
#include "app/views/view_context.h"

namespace attnscope {

// False when there is nothing of the probe's to show (not a decoder, a generated token in focus):
// the caller shows what it showed before.
bool draw_next_token(ViewContext& ctx);

// "L3.H2 off · 2:5>1 cut" — the interventions a result was computed under ("" for none).
std::string interventions_summary(const Interventions& iv, int max_items = 6);

}  // namespace attnscope
