#pragma once
// The left sidebar: model picker (listed models + a path/repo id field, opened off the UI thread
// with a progress bar), backend, layer and head, every lesson option, colormap, theme, export.
#include <string>

#include "app/app.h"

namespace attnscope {

struct UiPrefs {
  bool light_theme = false;
  float font_scale = 1.0f;
  int screenshot_scale = 1;
  bool fullscreen = false;
};

struct ControlsPanel {
  std::string model_field;            // the path / repo id text field
  bool requested_screenshot = false;  // set when the export button was pressed this frame

  // Returns true when the theme or the font scale changed (the caller rebuilds style and fonts).
  bool Draw(App& app, UiPrefs& prefs);
};

}  // namespace attnscope
