#pragma once
// The sentence itself, each token tinted by the weight the focused token gives it: the heatmap's
// focused row read in place. Hover focuses a token, click locks it. Long inputs (thousands of
// tokens) scroll in a strip of a few lines where only the visible lines are laid out and drawn,
// and a search box finds a token, locks it and scrolls to it. Shift-click adds or removes a query
// from the selection, and a drag across tokens selects that range.
#include <string>
#include <vector>

#include "app/views/draw_util.h"
#include "app/views/view_context.h"

namespace attnscope {

struct SentenceView {
  int drag_anchor = -1;  // the token a drag started on (-1: no drag)
  void Draw(ViewContext& ctx, float width, bool large);

  std::string search;   // the search box's text
  int search_hit = -1;  // the token the last search step went to

 private:
  // Where each token goes, computed once per trace, width and font (not every frame).
  struct Placement {
    float x = 0, w = 0;
    int line = 0;
  };
  const AttentionTrace* placed_for = nullptr;
  float placed_width = 0, placed_font = 0, placed_density = 0;
  std::vector<std::string> labels;
  std::vector<Placement> places;
  std::vector<int> line_starts;  // first token of each line
  int scroll_to_token = -1;      // scroll the strip to this token next frame

  void Place(const AttentionTrace& trace, float width, float font);
  void DrawSearch(ViewContext& ctx);
  void HandleSelection(ViewContext& ctx, int token);  // the pointer is over `token`
};

}  // namespace attnscope
