// The registration list of figure views (figure_views.h).
#include "app/figure/figure_views.h"

#include "core/util/error.h"

namespace attnscope {

const std::vector<FigureView>& figure_views() {
  static const std::vector<FigureView> all = {make_heatmap_figure(), make_lines_figure(),
                                              make_arcs_figure(),    make_grid_figure(),
                                              make_formula_figure(), make_cross_figure()};
  return all;
}

const FigureView& figure_view(const std::string& name) {
  std::string known;
  for (const FigureView& v : figure_views()) {
    if (v.name == name) return v;
    known += (known.empty() ? "" : ", ") + v.name;
  }
  throw UsageError("unknown view '" + name + "' (known: " + known + ")");
}

Figure build_figure(const std::string& view, const FigureRequest& request) {
  return figure_view(view).build(request);
}

}  // namespace attnscope
