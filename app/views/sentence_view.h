#pragma once
// The sentence itself, each token tinted by the weight the focused token gives it: the heatmap's
// focused row read in place (the sum or mean of the selected queries' rows when several are
// selected). Hover focuses a token, click locks it; shift-click adds or removes a query from the
// selection, and a drag across tokens selects that range.
#include "app/views/view_context.h"

namespace attnscope {

struct SentenceView {
  int drag_anchor = -1;  // the token a drag started on (-1: no drag)
  void Draw(ViewContext& ctx, float width, bool large);

 private:
  void HandleSelection(ViewContext& ctx, int token);  // the pointer is over `token`
};

}  // namespace attnscope
