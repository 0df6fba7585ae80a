#pragma once
// The left panel's "Switch off" part (issue 27), under the layer and head: the head shown switched
// off or on, zero or mean ablation, what is switched off and cut, and one button to undo it all.
// Drawn only for models that can be intervened on (the decoders).
#include "app/app.h"

namespace attnscope {

void DrawInterventionControls(App& app);

}  // namespace attnscope
