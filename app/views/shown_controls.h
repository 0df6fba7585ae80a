#pragma once
// The controls of what every view draws (AppState::shown): one head or an aggregate of the
// registry (core/trace/aggregate.h: mean / max of the layer, mean of all layers, rollout …),
// "hide first token" and "hide special tokens" (rows renormalised), a log colour scale with its
// floor, and how several selected queries combine (sum or mean). Drawn in the controls panel.
#include "app/app_state.h"

namespace attnscope {

void DrawShownControls(AppState& state);

}  // namespace attnscope
