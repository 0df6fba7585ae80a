#include "app/ui/layout.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace attnscope {

namespace {
struct ViewNames {
  const char* name;
  const char* title;
};
constexpr ViewNames kViewNames[kViewCount] = {
    {"heatmap", "Heatmap"}, {"arcs", "Arcs"},       {"lines", "Lines"},     {"meaning", "Meaning"},
    {"formula", "Formula"}, {"lens", "Logit lens"}, {"model", "Model view"}};

constexpr float kGapLines = 0.4f;  // between panes, in font sizes

// Splits `r` into two along x (or y) with a gap, the first part `first` long.
std::pair<Rect, Rect> split_x(const Rect& r, float first, float gap) {
  return {Rect{r.x, r.y, first, r.h}, Rect{r.x + first + gap, r.y, r.w - first - gap, r.h}};
}
std::pair<Rect, Rect> split_y(const Rect& r, float first, float gap) {
  return {Rect{r.x, r.y, r.w, first}, Rect{r.x, r.y + first + gap, r.w, r.h - first - gap}};
}
}  // namespace

const char* view_name(ViewId id) {
  return kViewNames[static_cast<int>(id)].name;
}
const char* view_title(ViewId id) {
  return kViewNames[static_cast<int>(id)].title;
}

bool parse_view_name(const std::string& name, ViewId& out) {
  for (int i = 0; i < kViewCount; ++i)
    if (name == kViewNames[i].name) {
      out = static_cast<ViewId>(i);
      return true;
    }
  return false;
}

std::string parse_view_list(const std::string& list, std::set<ViewId>& out) {
  std::string bad;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    ViewId view;
    if (parse_view_name(name, view))
      out.insert(view);
    else if (bad.empty())
      bad = name.empty() ? "(empty)" : name;
    start = comma + 1;
  }
  return bad;
}

void layout_stage(const Rect& stage, float base_font, float grid_cap, float chrome_w,
                  float chrome_h, SlotLayout& out) {
  const float gap = base_font * kGapLines;
  const float min_side = base_font * kMinSideColumn, min_below = base_font * kMinRegionLines;
  // The grid's side with the other views beside it, and with them below it.
  const float beside =
      std::min({stage.h - chrome_h, stage.w - chrome_w - min_side - gap, grid_cap});
  const float below =
      std::min({stage.w - chrome_w, stage.h - chrome_h - min_below - gap, grid_cap});
  out.beside = beside >= below;
  out.grid_side = std::max(base_font * 4, std::max(beside, below));
  const std::vector<ViewId> words = {ViewId::kArcs, ViewId::kLines};
  const std::vector<ViewId> numbers = {ViewId::kMeaning, ViewId::kFormula, ViewId::kLens};
  const std::vector<ViewId> all = {ViewId::kArcs, ViewId::kLines, ViewId::kMeaning,
                                   ViewId::kFormula, ViewId::kLens};
  out.regions.clear();
  if (out.beside) {
    const float pane_w = std::min(stage.w, out.grid_side + chrome_w);
    auto [left, side] = split_x(stage, pane_w, gap);
    out.heatmap = left;
    if (side.w <= 0) return;
    // Room under the grid (its side is capped) holds the numbers' region; the column beside it
    // the words'. Else a tall column holds both regions, a short one all the views as tabs.
    const float pane_h = out.grid_side + chrome_h;
    if (left.h - pane_h - gap >= min_below) {
      auto [heatmap, below] = split_y(left, pane_h, gap);
      out.heatmap = heatmap;
      out.regions.push_back({side, words});
      out.regions.push_back({below, numbers});
    } else if (side.h >= base_font * 2 * (kMinRegionLines + 6)) {
      auto [top, bottom] = split_y(side, (side.h - gap) * 0.55f, gap);
      out.regions.push_back({top, words});
      out.regions.push_back({bottom, numbers});
    } else {
      out.regions.push_back({side, all});
    }
  } else {
    const float pane_h = std::min(stage.h, out.grid_side + chrome_h);
    auto [heatmap, rest] = split_y(stage, pane_h, gap);
    out.heatmap = heatmap;
    if (rest.h <= 0) return;
    if (rest.w >= 2 * min_side + gap) {
      auto [left, right] = split_x(rest, (rest.w - gap) * 0.5f, gap);
      out.regions.push_back({left, words});
      out.regions.push_back({right, numbers});
    } else {
      out.regions.push_back({rest, all});
    }
  }
}

namespace {
// One sentence's area: its header on top, the stage below.
SlotLayout layout_slot(const Rect& area, const LayoutInput& in, int s, float grid_cap) {
  SlotLayout slot;
  slot.slot = area;
  const float font = in.font, gap = in.base_font * kGapLines;
  const float wanted = in.header_h[s] > 0 ? in.header_h[s] : font * 4.5f;
  const float header_h =
      std::clamp(wanted, font * 2.5f, std::min(font * 1.5f * kMaxHeaderLines, area.h * 0.35f));
  Rect stage;
  std::tie(slot.header, stage) = split_y(area, header_h, gap);
  layout_stage(stage, in.base_font, grid_cap, in.chrome_w[s], in.chrome_h[s], slot);
  return slot;
}

// The height a sentence needs for a grid of `side`: header, the heatmap pane, a region below.
float slot_height_for(float side, const LayoutInput& in, int s) {
  const float wanted = in.header_h[s] > 0 ? in.header_h[s] : in.font * 4.5f;
  const float header_h = std::clamp(wanted, in.font * 2.5f, in.font * 1.5f * kMaxHeaderLines);
  const float gap = in.base_font * kGapLines;
  return header_h + gap + side + in.chrome_h[s] + gap + in.base_font * kMinRegionLines;
}
}  // namespace

namespace {
// The layout with each grid at least `target` (when the window cannot give that without
// scrolling, the sentences stack and the main area scrolls).
ExplorerLayout layout_with_target(const LayoutInput& in, float target) {
  ExplorerLayout out;
  const float gap = in.base_font * kGapLines;
  if (in.focus_slot >= 0) {  // one view fills everything but the menu and the status bar
    out.focus = true;
    out.main = out.focus_rect = in.work;
    out.content_h = in.work.h;
    return out;
  }
  Rect main = in.work;
  if (in.sidebar) {
    const float w = std::min(in.font * kSidebarWidth, in.work.w * 0.3f);
    std::tie(out.sidebar, main) = split_x(in.work, w, 0);
  }
  main.y += in.top_strip, main.h -= in.top_strip;
  out.main = main;
  out.content_h = main.h;
  const int n = std::clamp(in.sentences, 1, 2);
  const float grid_cap = in.window_h * kHeatmapShare;
  const float least = std::max(in.base_font * kMinGridSide, target - 0.5f);
  const auto lay = [&](const std::vector<Rect>& areas) {
    out.slots.clear();
    for (int s = 0; s < n; ++s) out.slots.push_back(layout_slot(areas[s], in, s, grid_cap));
  };
  const auto big_enough = [&] {
    return std::all_of(out.slots.begin(), out.slots.end(),
                       [&](const SlotLayout& s) { return s.grid_side >= least; });
  };
  if (n == 2 && main.w >= main.h * 1.25f) {
    out.side_by_side = true;
    auto [a, b] = split_x(main, (main.w - gap) / 2, gap);
    lay({a, b});
    if (big_enough()) return out;
  }
  // One above the other, each tall enough for a grid of `least`: the main area scrolls when
  // they are taller than it.
  out.side_by_side = false;
  const float fair = (main.h - gap * (n - 1)) / n;
  float need = 0;
  for (int s = 0; s < n; ++s)
    need = std::max(need, slot_height_for(std::min(least, grid_cap), in, s));
  const float each = std::max(fair, need);
  std::vector<Rect> areas;
  for (int s = 0; s < n; ++s)
    areas.push_back(Rect{main.x, main.y + s * (each + gap), main.w, each});
  lay(areas);
  out.content_h = n * each + gap * (n - 1);
  return out;
}
}  // namespace

ExplorerLayout layout_explorer(const LayoutInput& in) {
  // A larger presentation scale must not shrink the grid the window gives at 100%: lay the window
  // out at the unscaled font first (the labels' room scales with the font), and hold the grid to
  // that size now, reflowing (stacking, scrolling) if need be.
  float target = 0;
  if (in.focus_slot < 0 && in.font > in.base_font * 1.001f) {
    LayoutInput base = in;
    const float k = in.base_font / in.font;
    base.font = in.base_font;
    base.top_strip *= k;
    for (int s = 0; s < 2; ++s) base.chrome_w[s] *= k, base.chrome_h[s] *= k, base.header_h[s] *= k;
    const ExplorerLayout at_base = layout_with_target(base, 0);
    target = at_base.slots.empty() ? 0 : at_base.slots[0].grid_side;
    for (const SlotLayout& s : at_base.slots) target = std::min(target, s.grid_side);
  }
  return layout_with_target(in, target);
}

std::vector<int> thinned_labels(int first, int last, int every, const std::vector<int>& always,
                                float pitch, float size) {
  std::vector<int> must;
  for (int i : always)
    if (i >= first && i <= last) must.push_back(i);
  std::sort(must.begin(), must.end());
  must.erase(std::unique(must.begin(), must.end()), must.end());
  std::vector<int> out = must;
  every = std::max(1, every);
  for (int i = (first + every - 1) / every * every; i <= last; i += every) {
    // A regular label keeps clear of the ones that must show (they may sit between two regular
    // ones); regular labels keep clear of each other by `every`.
    const bool clear = std::none_of(must.begin(), must.end(), [&](int m) {
      return m != i && std::fabs(static_cast<float>(m - i)) * pitch < size;
    });
    if (clear) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace attnscope
