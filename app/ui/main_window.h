#pragma once
// The window's views: the menu bar, the controls on the left, each sentence's header (text box,
// tinted sentence, timeline), its heatmap and its other views in tab regions, placed by the
// explorer layout (app/ui/layout.h: reflow, focus mode and the collapsed panel are one function
// of the window, the font and the sentences), the status bar at the bottom; the model view and
// the guided lesson instead of the sentences when chosen. Keys and menus act through Perform.
#include <array>
#include <set>

#include <nlohmann/json.hpp>

#include "app/app.h"
#include "app/lesson/lesson_view.h"
#include "app/render/heatmap_renderer.h"
#include "app/ui/export_view_dialog.h"
#include "app/ui/fonts.h"
#include "app/ui/key_bindings.h"
#include "app/ui/layout.h"
#include "app/ui/session_menu.h"
#include "app/views/arcs_view.h"
#include "app/views/controls_panel.h"
#include "app/views/formula_view.h"
#include "app/views/heatmap_view.h"
#include "app/views/lens_view.h"
#include "app/views/meaning_view.h"
#include "app/views/model_view.h"
#include "app/views/sentence_view.h"
#include "app/views/seq2seq_view.h"
#include "app/views/shown_matrix.h"
#include "app/views/status_bar.h"
#include "app/views/timeline_view.h"

namespace attnscope {

struct MainWindow {
  std::array<HeatmapView, kSlots> heatmaps;
  std::array<SentenceView, kSlots> sentences;
  std::array<ArcsView, kSlots> arcs;           // the arc diagram and the lines (BertViz columns)
  std::array<TimelineView, kSlots> timelines;  // Generate and the generated tokens (decoders)
  std::array<FormulaView, kSlots> formulas;
  std::array<MeaningView, kSlots> meanings;
  std::array<LensView, kSlots> lenses;
  // Encoder–decoder traces: encoder / decoder / cross-attention for the heatmap and the arcs.
  std::array<Seq2SeqView, kSlots> seq2seq;
  ModelView model_view;                              // every layer × head (the "Model view" tab)
  std::array<ShownMatrixCache, kSlots> shown_cache;  // what each sentence's views draw
  ControlsPanel controls;
  StatusBar status;
  ExportViewDialog export_view;  // File > Export view…
  LessonView lesson;             // the guided lesson, drawn instead of the explorer while it runs
  SessionMenu sessions;          // File → sessions, recent list
  int focus_text_box = -1;  // give this slot's text box keyboard focus next frame (scripted typing)
  bool text_box_active[kSlots] = {false, false};
  // Where the layout put the panes last frame (the layout file's "window"; with --layout only).
  nlohmann::json window_layout;
  // Each sentence box as drawn last (app/ui/sentence_box.h's entry), for the layout file.
  nlohmann::json text_box_layout[kSlots];

  // Draws everything; `layout` (nullable) collects where cells and labels went. Returns true when
  // the theme or the font scale changed.
  bool Draw(App& app, const Fonts& fonts, ColormapRenderer& renderer, UiPrefs& prefs,
            float frame_ms, nlohmann::json* layout, float pixel_scale);
  // What a key or a menu item asks for (app/ui/key_bindings.h).
  void Perform(Action action, App& app, UiPrefs& prefs);
  // A view is preparing something off the UI thread (a long trace's shown matrix, the model view's
  // summaries and thumbnails, the lesson's real model).
  bool busy() const {
    for (const ShownMatrixCache& c : shown_cache)
      if (c.pending()) return true;
    return (model_view.waiting && model_view_shown) || (lesson.busy && lesson_shown) ||
           settle_frames > 0;
  }
  // A desktop file dialog (a child process, polled each frame) is open: a headless run waits for
  // its answer; a visible window just keeps polling at its idle rate.
  bool waiting_for_dialog() const { return sessions.busy() || export_view.busy(); }
  // What keys, menus or buttons asked for this frame (the frame loop clears them before the keys).
  bool wants_screenshot = false;
  bool wants_quit = false;
  bool wants_fullscreen_toggle = false;
  // File > Back to …: what the window showed before a script sent a trace (app/ipc/); its
  // label, empty when there is nothing to go back to, and whether it was chosen.
  std::string back_label;
  bool wants_back = false;
  // The sentence whose generation timeline is under the pointer (-1: none): ←/→ step it then.
  int timeline_hovered_slot() const {
    for (int s = 0; s < kSlots; ++s)
      if (timelines[s].hovered) return s;
    return -1;
  }

 private:
  // Where the explorer went this frame, and what the next frame's layout needs to know.
  std::array<float, kSlots> header_h = {0, 0};  // measured content of each sentence header
  int hovered_slot = -1;                        // the view under the pointer (F focuses it)
  ViewId hovered_view = ViewId::kHeatmap;
  int hovered_slot_now = -1;
  ViewId hovered_view_now = ViewId::kHeatmap;
  // Frames to wait after the panes changed (a tab bar selects its tab, a new child window takes
  // the pointer, one frame each): a headless capture waits them out, so --hover acts on the
  // views it sees.
  int settle_frames = 3;
  std::string panes_drawn;  // what the explorer drew last frame (its change restarts it)
  std::string panes_drawn_now;
  bool tabs_model_view = false;   // the tab selected last frame
  bool model_view_shown = false;  // the model view was drawn last frame
  bool lesson_shown = false;      // the lesson was drawn last frame

  void DrawMenu(App& app, UiPrefs& prefs, bool& style_changed);
  void DrawExplorer(App& app, const Fonts& fonts, ColormapRenderer& renderer, UiPrefs& prefs,
                    nlohmann::json* layout, float pixel_scale, float status_h);
  void DrawHeader(App& app, ViewContext& ctx, const Rect& rect);
  // Encoder–decoders: the target sentence's box under the source's.
  void DrawTargetBox(App& app, int slot);
  void DrawHeatmapPane(ViewContext& ctx, ColormapRenderer& renderer, UiPrefs& prefs,
                       const Rect& rect);
  void DrawRegion(ViewContext& ctx, ColormapRenderer& renderer, UiPrefs& prefs,
                  const TabRegion& region, int index);
  void DrawFocused(App& app, ViewContext& ctx, ColormapRenderer& renderer, UiPrefs& prefs,
                   const Rect& rect);
  // One view's content in the space left at the cursor.
  void DrawView(ViewId view, ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size);
  // A pane's one-line title: double-click or its button focuses the view. `title` may be cut
  // (with the whole of it in a tooltip) but never wraps.
  // Returns true when it was asked to focus (or, focused, to come back).
  bool PaneTitle(ViewContext& ctx, ViewId view, const std::string& title, bool focused);
  bool DrawPanelTabs(App& app);  // "Sentences" | "Model view"; true when the model view is on
  void DrawLesson(App& app, const Fonts& fonts, nlohmann::json* layout, float pixel_scale);
  void NoteHover(int slot, ViewId view);  // the pointer is over this view (this frame)
};

}  // namespace attnscope
