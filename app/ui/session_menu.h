#pragma once
// File → Save session / Open session / Recent sessions, and what to do with files dropped on the
// window. ImGui has no file dialog: a small popup takes the path (dropping a file on the window
// opens it directly).
#include <string>
#include <vector>

#include "app/app.h"
#include "app/views/controls_panel.h"

namespace attnscope {

struct SessionMenu {
  std::vector<std::string> recent;  // newest first (settings.json "recent_sessions")

  // The menu items, drawn inside the File menu.
  void DrawItems(App& app, UiPrefs& prefs);
  // The path popups; call every frame after the menu bar.
  void DrawPopups(App& app, UiPrefs& prefs);
  // Opens a session and puts it first in the recent list when it opened.
  void Open(App& app, UiPrefs& prefs, const std::string& path);

 private:
  void Remember(const std::string& path);
  bool want_save_popup_ = false, want_open_popup_ = false;
  std::string path_field_;
  std::string pending_open_;  // a recent session chosen in the menu, opened after it closes
};

// A file or folder dropped on the window: a session (.attnscope, or JSON whose "format" is
// attnscope-session/1) is opened as one, a folder as a model; anything else is refused with a
// message in the status bar.
void open_dropped_path(App& app, UiPrefs& prefs, SessionMenu& sessions, const std::string& path);

}  // namespace attnscope
