#pragma once
// Lays the views out: menu bar, controls on the left, the two sentences side by side (each with its
// text box, tinted sentence, heatmap, BertViz columns and arc diagram), the formula and meaning
// panels below, the status bar at the bottom.
#include <array>

#include <nlohmann/json.hpp>

#include "app/app.h"
#include "app/lesson/lesson_view.h"
#include "app/render/heatmap_renderer.h"
#include "app/ui/export_view_dialog.h"
#include "app/ui/fonts.h"
#include "app/ui/session_menu.h"
#include "app/views/arcs_view.h"
#include "app/views/controls_panel.h"
#include "app/views/formula_view.h"
#include "app/views/heatmap_view.h"
#include "app/views/meaning_view.h"
#include "app/views/model_view.h"
#include "app/views/sentence_view.h"
#include "app/views/shown_matrix.h"
#include "app/views/status_bar.h"
#include "app/views/timeline_view.h"

namespace attnscope {

struct MainWindow {
  std::array<HeatmapView, kSlots> heatmaps;
  std::array<SentenceView, kSlots> sentences;
  std::array<ArcsView, kSlots> arcs;
  std::array<TimelineView, kSlots> timelines;  // Generate and the generated tokens (decoders)
  FormulaView formula;
  MeaningView meaning;
  ModelView model_view;                              // every layer × head (the "Model view" tab)
  std::array<ShownMatrixCache, kSlots> shown_cache;  // what each sentence's views draw
  ControlsPanel controls;
  StatusBar status;
  ExportViewDialog export_view;  // File > Export view…
  LessonView lesson;             // the guided lesson, drawn instead of the explorer while it runs
  SessionMenu sessions;          // File → sessions, recent list
  int focus_text_box = -1;  // give this slot's text box keyboard focus next frame (scripted typing)
  bool text_box_active[kSlots] = {false, false};
  // Where each sentence box was drawn last (x, y, w, h in framebuffer pixels), for the layout file.
  float text_box_rect[kSlots][4] = {};

  // Draws everything; `layout` (nullable) collects where cells and labels went. Returns true when
  // the theme or the font scale changed.
  bool Draw(App& app, const Fonts& fonts, ColormapRenderer& renderer, UiPrefs& prefs,
            float frame_ms, nlohmann::json* layout, float pixel_scale);
  // A view is preparing something off the UI thread (a long trace's shown matrix, the model view's
  // summaries and thumbnails, the lesson's real model).
  bool busy() const {
    for (const ShownMatrixCache& c : shown_cache)
      if (c.pending()) return true;
    return (model_view.waiting && tabs_model_view) || (lesson.busy && lesson_shown);
  }
  bool wants_screenshot = false;  // menu or button asked for one this frame
  bool wants_quit = false;
  bool wants_fullscreen_toggle = false;
  // The sentence whose generation timeline is under the pointer (-1: none): ←/→ step it then.
  int timeline_hovered_slot() const {
    for (int s = 0; s < kSlots; ++s)
      if (timelines[s].hovered) return s;
    return -1;
  }

 private:
  void DrawSlot(App& app, const Fonts& fonts, ColormapRenderer& renderer, int slot, ImVec2 size,
                nlohmann::json* layout, float pixel_scale);
  bool DrawPanelTabs(App& app);  // "Sentences" | "Model view"; true when the model view is on
  bool tabs_model_view = false;  // the tab selected last frame
  bool lesson_shown = false;     // the lesson was drawn last frame
  void DrawPictures(ViewContext& ctx, ColormapRenderer& renderer, int slot, float width);
  void DrawMenu(App& app, UiPrefs& prefs, bool& style_changed);
  void DrawLesson(App& app, const Fonts& fonts, nlohmann::json* layout, float pixel_scale);
};

}  // namespace attnscope
