#pragma once
// Where the explorer's views go: one pure function of the window, the font and the sentences, so
// reflow, focus mode, the collapsed panel and the font scale are one mechanism (no view decides
// its own size) and the geometry is unit-tested without a window.
//
// The rule: the heatmap is the picture. Its grid gets the largest square the pane allows, up to
// kHeatmapShare of the window's height; the other views share what is left in tab regions beside
// it (a wide pane) or under it (a narrow one). The minimum sizes of those regions are counted in
// the unscaled font (`base_font`), so a larger presentation scale takes its room from the panels
// and the labels' margins, not from the grid. When a window is too small for a grid of
// kMinGridSide (two sentences at 800x600, say), the sentences stack and the main area scrolls:
// the heatmap and one more view stay visible, never squeezed away.
#include <array>
#include <set>
#include <string>
#include <vector>

namespace attnscope {

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
  float right() const { return x + w; }
  float bottom() const { return y + h; }
  bool empty() const { return w <= 0 || h <= 0; }
};

// The views a pane can hold. The order is the order of their tabs.
// kModel is the "Model view" tab's grid (focus mode only: it has no place in the regions).
enum class ViewId { kHeatmap, kArcs, kLines, kMeaning, kFormula, kLens, kModel, kCount };
inline constexpr int kViewCount = static_cast<int>(ViewId::kCount);
const char* view_name(ViewId id);   // "heatmap", "arcs", … (layout file, sessions)
const char* view_title(ViewId id);  // "Heatmap", "Arcs", … (tabs)
// Parses view_name's text; false when it names no view.
bool parse_view_name(const std::string& name, ViewId& out);
// Adds the views of a comma-separated list ("lines,formula") to `out`; returns the first name
// that is not a view ("" when all are).
std::string parse_view_list(const std::string& list, std::set<ViewId>& out);

// Sizes in unscaled font sizes (base_font) unless said otherwise.
inline constexpr float kHeatmapShare = 0.62f;   // the grid's side: at most this × window height
inline constexpr float kMinRegionLines = 6.5f;  // a tab region under the heatmap: at least this
inline constexpr float kMinSideColumn = 17.0f;  // a column beside the heatmap: at least this
inline constexpr float kMinGridSide = 17.5f;    // below this the sentences stack and scroll
inline constexpr float kSidebarWidth = 17.5f;   // the left panel (scaled font), at most 30%
inline constexpr int kMaxHeaderLines = 9;       // the sentence header scrolls beyond this

// What the layout needs to know. Lengths in ImGui units; `font` is the UI font size.
struct LayoutInput {
  Rect work;             // the viewport's work area less the status bar
  float window_h = 0;    // the whole window's height (the grid's cap follows it)
  float font = 15;       // the UI font now
  float base_font = 15;  // the UI font at 100% (the unit of the minimum sizes)
  bool sidebar = true;   // the left panel is shown
  float top_strip = 0;   // the main area's own line at its top (the "Sentences | Model" tabs)
  int sentences = 1;     // 1 or 2
  // Each sentence's header (text box, notes, chips, timeline) as measured last frame.
  std::array<float, 2> header_h = {0, 0};
  // The heatmap's labels and colorbar around its grid, per sentence: width left + right of the
  // grid, height above it (HeatmapView::chrome).
  std::array<float, 2> chrome_w = {0, 0}, chrome_h = {0, 0};
  // Focus mode: this sentence's view fills the main area (slot -1: none).
  int focus_slot = -1;
  ViewId focus_view = ViewId::kHeatmap;
};

// A group of views drawn as tabs in one rectangle.
struct TabRegion {
  Rect rect;
  std::vector<ViewId> views;
};

struct SlotLayout {
  Rect slot;    // the sentence's whole area
  Rect header;  // text box and chips (empty in focus mode)
  Rect heatmap;
  std::vector<TabRegion> regions;  // the other views
  bool beside = true;              // the regions are right of the heatmap (else below)
  float grid_side = 0;             // the heatmap grid the pane was sized for
};

struct ExplorerLayout {
  Rect sidebar;  // empty when collapsed or in focus mode
  Rect main;
  float content_h = 0;       // the slots' height: more than main.h when the main area scrolls
  bool side_by_side = true;  // two sentences: columns (else rows)
  std::vector<SlotLayout> slots;
  bool focus = false;  // one view fills `main`
  Rect focus_rect;     // that view's rectangle (focus mode)
};

ExplorerLayout layout_explorer(const LayoutInput& in);

// Token labels in every view: at the UI font's size while their cells or rows allow, never
// smaller than this × the UI font (12 px at 100%); past that, labels thin (thinned_labels).
inline constexpr float kMinLabel = 0.8f;

// Which of the labels first..last along an axis to draw: every `every`-th, plus the ones that
// must always show (hovered, locked, selected), less regular ones that would touch those.
// `pitch` is the distance between neighbouring labels' centres, `size` a label's extent along the
// axis (with air). Sorted, unique.
std::vector<int> thinned_labels(int first, int last, int every, const std::vector<int>& always,
                                float pitch, float size);

// The stage of one sentence (its area below the header): the heatmap and the tab regions.
void layout_stage(const Rect& stage, float base_font, float grid_cap, float chrome_w,
                  float chrome_h, SlotLayout& out);

}  // namespace attnscope
