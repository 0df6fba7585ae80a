#pragma once
// The bottom line: model, backend (and why it fell back to the CPU), tokens, compute and frame
// time, and the last notice (saved screenshot path, an error).
#include "app/app.h"

namespace attnscope {

struct StatusBar {
  void Draw(const App& app, float frame_ms, float height);
};

}  // namespace attnscope
