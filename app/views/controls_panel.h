#pragma once
// The left sidebar: model picker (listed models + a path/repo id field, opened off the UI thread
// with a progress bar), backend, layer and head, every lesson option, colormap, theme, export.
#include <set>
#include <string>

#include "app/app.h"
#include "app/ui/layout.h"

namespace attnscope {

// The presentation scale's range (Ctrl +/-, `--font-scale`, settings, sessions).
inline constexpr float kMinFontScale = 0.5f, kMaxFontScale = 2.5f, kFontScaleStep = 0.1f;

struct UiPrefs {
  bool light_theme = false;
  float font_scale = 1.0f;
  int screenshot_scale = 1;
  bool fullscreen = false;
  bool left_panel = true;  // the controls on the left (Ctrl+B), remembered in settings and sessions
  // Focus mode: this sentence's view fills the window (focus_slot -1: none).
  int focus_slot = -1;
  ViewId focus_view = ViewId::kHeatmap;
  // The views chosen in the tab regions (what a session saves), and whether to select them on
  // the next frame (after --tabs or a session; the user's clicks choose them otherwise).
  std::set<ViewId> tabs;
  bool select_tabs = false;
};

struct ControlsPanel {
  std::string model_field;            // the path / repo id text field
  bool requested_screenshot = false;  // set when the export button was pressed this frame

  // Returns true when the theme or the font scale changed (the caller rebuilds style and fonts).
  bool Draw(App& app, UiPrefs& prefs);
};

}  // namespace attnscope
