// The explorer's layout (app/ui/layout.h) as pure geometry: the heatmap is the largest thing in
// the window at any length and font, the other views keep a visible place down to 800x600, a
// larger font never shrinks the grid at the sizes a classroom uses, focus mode fills the window,
// and no two panes overlap or leave the window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "app/ui/layout.h"

namespace attnscope {
namespace {

constexpr float kUiFont = 15.0f;  // app/ui/fonts.h kUiFontSize at 100%

// The room the heatmap's labels (a nine-letter word) and colorbar take at a font, as
// HeatmapView::chrome computes it, plus its pane's title and padding (MainWindow).
void typical_chrome(LayoutInput& in) {
  const float f = in.font, label = f * 5.5f;
  for (int s = 0; s < 2; ++s) {
    in.chrome_w[s] = (label + 12 + f * 0.6f) + (f * 0.9f + f * 0.6f * 5 + 18 + f * 0.4f) + 10;
    in.chrome_h[s] = (label + 12) + 6 + (f + 10) + 10;
    in.header_h[s] = f * 4.2f;  // text box and two lines of tokens
  }
}

LayoutInput window(float w, float h, float font_scale, int sentences) {
  LayoutInput in;
  in.font = kUiFont * font_scale;
  in.base_font = kUiFont;
  const float menu = in.font + 6, status = in.font + 8;
  in.work = {0, menu, w, h - menu - status};
  in.window_h = h;
  in.top_strip = in.font + 10;
  in.sentences = sentences;
  typical_chrome(in);
  return in;
}

bool overlap(const Rect& a, const Rect& b) {
  return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom();
}
bool inside(const Rect& r, const Rect& outer) {
  const float e = 0.5f;
  return r.x >= outer.x - e && r.y >= outer.y - e && r.right() <= outer.right() + e &&
         r.bottom() <= outer.bottom() + e;
}
std::string str(const Rect& r) {
  std::ostringstream out;
  out << "(" << r.x << "," << r.y << " " << r.w << "x" << r.h << ")";
  return out.str();
}

// Every rectangle the layout places: sidebar, headers, heatmaps, regions.
std::vector<Rect> panes(const ExplorerLayout& L) {
  std::vector<Rect> out;
  if (!L.sidebar.empty()) out.push_back(L.sidebar);
  for (const SlotLayout& s : L.slots) {
    out.push_back(s.header);
    out.push_back(s.heatmap);
    for (const TabRegion& r : s.regions) out.push_back(r.rect);
  }
  return out;
}

TEST(ExplorerLayout, OneSentenceHeatmapIsTheLargestThingAt1600x1000) {
  const ExplorerLayout L = layout_explorer(window(1600, 1000, 1.0f, 1));
  ASSERT_EQ(L.slots.size(), 1u);
  const SlotLayout& s = L.slots[0];
  EXPECT_GE(s.grid_side, 550.0f);  // the bar: ≥ 55% of the height
  // Cells are whole pixels (HeatmapView snaps them): still ≥ 550 px at every length up to 64.
  for (int n = 1; n <= 64; ++n)
    EXPECT_GE(std::floor(s.grid_side / n) * n, 550.0f) << n << " tokens";
  EXPECT_GE(s.heatmap.h, 0.55f * 1000);  // its pane
  for (const TabRegion& r : s.regions) EXPECT_LT(r.rect.w * r.rect.h, s.heatmap.w * s.heatmap.h);
  ASSERT_FALSE(s.regions.empty());  // the other views keep a place
}

TEST(ExplorerLayout, LargerFontNeverShrinksTheGridBelowItsSizeAt100) {
  // The layout reflows (regions, stacking, scrolling) so every scale up to 250% keeps the grid
  // at least as large as the window gave it at 100%.
  for (const auto& [w, h] : {std::pair{1600.0f, 1000.0f}, {1920.0f, 1080.0f}, {3840.0f, 2160.0f}})
    for (int sentences : {1, 2}) {
      const float at_100 = layout_explorer(window(w, h, 1.0f, sentences)).slots[0].grid_side;
      for (float scale : {1.1f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f}) {
        const ExplorerLayout L = layout_explorer(window(w, h, scale, sentences));
        for (const SlotLayout& s : L.slots)
          EXPECT_GE(s.grid_side, at_100 - 0.5f)
              << w << "x" << h << ", " << sentences << " sentence(s), font " << scale;
      }
    }
}

TEST(ExplorerLayout, SmallWindowKeepsHeatmapAndOneMoreView) {
  for (int sentences : {1, 2}) {
    const ExplorerLayout L = layout_explorer(window(800, 600, 1.0f, sentences));
    for (const SlotLayout& s : L.slots) {
      EXPECT_FALSE(s.regions.empty()) << sentences;
      for (const TabRegion& r : s.regions) EXPECT_GE(r.rect.h, kUiFont * 5) << sentences;
    }
    // Two sentences scroll rather than squeeze: each grid still ≥ 250 px.
    for (const SlotLayout& s : L.slots) EXPECT_GE(s.grid_side, 250.0f) << sentences;
    if (sentences == 2) {
      EXPECT_GT(L.content_h, L.main.h);
    }
  }
}

TEST(ExplorerLayout, TwoSentencesSideBySideWhenWideStackedWhenTall) {
  const ExplorerLayout wide = layout_explorer(window(1600, 1000, 1.0f, 2));
  ASSERT_EQ(wide.slots.size(), 2u);
  EXPECT_TRUE(wide.side_by_side);
  EXPECT_LT(wide.slots[0].slot.x, wide.slots[1].slot.x);
  const ExplorerLayout tall = layout_explorer(window(1000, 1600, 1.0f, 2));
  EXPECT_FALSE(tall.side_by_side);
  EXPECT_LT(tall.slots[0].slot.y, tall.slots[1].slot.y);
}

TEST(ExplorerLayout, FocusModeFillsTheWindow) {
  LayoutInput in = window(1600, 1000, 1.0f, 2);
  in.focus_slot = 1;
  in.focus_view = ViewId::kArcs;
  const ExplorerLayout L = layout_explorer(in);
  EXPECT_TRUE(L.focus);
  EXPECT_TRUE(L.sidebar.empty());
  EXPECT_GE(L.focus_rect.w * L.focus_rect.h, 0.9f * 1600 * 1000 * 0.93f);
  EXPECT_TRUE(inside(L.focus_rect, in.work));
}

TEST(ExplorerLayout, CollapsedPanelGivesItsRoomToTheViews) {
  LayoutInput in = window(1280, 800, 1.0f, 1);
  const float with_panel = layout_explorer(in).main.w;
  in.sidebar = false;
  const ExplorerLayout L = layout_explorer(in);
  EXPECT_TRUE(L.sidebar.empty());
  EXPECT_GT(L.main.w, with_panel);
  EXPECT_FLOAT_EQ(L.main.w, in.work.w);
}

TEST(ExplorerLayout, PanesNeverOverlapNorLeaveTheWindow) {
  for (const auto& [w, h] :
       {std::pair{800.0f, 600.0f}, {1600.0f, 1000.0f}, {3840.0f, 2160.0f}, {1000.0f, 1600.0f}})
    for (float scale : {0.5f, 1.0f, 1.5f, 2.0f})
      for (int sentences : {1, 2}) {
        const LayoutInput in = window(w, h, scale, sentences);
        const ExplorerLayout L = layout_explorer(in);
        const std::vector<Rect> all = panes(L);
        // The main area may scroll: its content is content_h tall.
        Rect scrolled = in.work;
        scrolled.h = std::max(in.work.h, L.main.y - in.work.y + L.content_h);
        std::ostringstream where_text;
        where_text << w << "x" << h << " font " << scale << " sentences " << sentences;
        const std::string where = where_text.str();
        for (size_t i = 0; i < all.size(); ++i) {
          EXPECT_TRUE(inside(all[i], scrolled)) << where << ": " << str(all[i]);
          EXPECT_GT(all[i].w, 0) << where;
          EXPECT_GT(all[i].h, 0) << where;
          for (size_t j = i + 1; j < all.size(); ++j)
            EXPECT_FALSE(overlap(all[i], all[j])) << where << ": " << str(all[i]) << str(all[j]);
        }
      }
}

TEST(ExplorerLayout, ViewNamesRoundTrip) {
  for (int i = 0; i < kViewCount; ++i) {
    ViewId v;
    ASSERT_TRUE(parse_view_name(view_name(static_cast<ViewId>(i)), v));
    EXPECT_EQ(static_cast<int>(v), i);
  }
  std::set<ViewId> views;
  EXPECT_EQ(parse_view_list("lines,formula", views), "");
  EXPECT_EQ(views, (std::set<ViewId>{ViewId::kLines, ViewId::kFormula}));
  EXPECT_EQ(parse_view_list("lines,bogus", views), "bogus");
}

TEST(ThinnedLabels, KeepsEveryKthAndAlwaysTheFocusedWithoutTouching) {
  // Cells of 6 px, labels needing 13: every 3rd, and token 10 (hovered) always.
  const float pitch = 6, size = 13;
  const std::vector<int> shown = thinned_labels(0, 39, 3, {10, 25}, pitch, size);
  EXPECT_TRUE(std::binary_search(shown.begin(), shown.end(), 10));
  EXPECT_TRUE(std::binary_search(shown.begin(), shown.end(), 25));
  for (size_t i = 1; i < shown.size(); ++i)
    EXPECT_GE((shown[i] - shown[i - 1]) * pitch, size) << shown[i - 1] << " and " << shown[i];
  // Without a focus: exactly every 3rd.
  const std::vector<int> plain = thinned_labels(0, 39, 3, {}, pitch, size);
  EXPECT_EQ(plain.size(), 14u);
  for (int i : plain) EXPECT_EQ(i % 3, 0);
  // Out of the visible range, an "always" label is not drawn.
  const std::vector<int> visible = thinned_labels(20, 30, 1, {5}, 20, 15);
  EXPECT_EQ(visible.front(), 20);
}

}  // namespace
}  // namespace attnscope
