#pragma once
// The sentence itself, each token tinted by the weight the focused token gives it: the heatmap's
// focused row read in place. Hover focuses a token, click locks it.
#include "app/views/view_context.h"

namespace attnscope {

struct SentenceView {
  void Draw(ViewContext& ctx, float width, bool large);
};

}  // namespace attnscope
