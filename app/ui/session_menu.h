#pragma once
// File → Open session (Ctrl+O), Save session (Ctrl+S: to the session's own file, else as below),
// Save session as (Ctrl+Shift+S), Recent sessions, and what to do with files dropped on the
// window. The path comes from the desktop's file dialog (zenity or kdialog, app/ui/file_dialog.h)
// when there is one, else from a small popup with a typed path; saving over an existing file asks
// first ("Replace …?"), unless the desktop's dialog asked already.
#include <string>
#include <vector>

#include "app/app.h"
#include "app/ui/file_dialog.h"
#include "app/views/controls_panel.h"

namespace attnscope {

struct SessionMenu {
  std::vector<std::string> recent;  // newest first (settings.json "recent_sessions")

  // The menu items, drawn inside the File menu.
  void DrawItems(App& app, UiPrefs& prefs);
  // The path popups, the file dialog's answer and the replace question; call every frame after
  // the menu bar.
  void DrawPopups(App& app, UiPrefs& prefs);
  // Opens a session and puts it first in the recent list when it opened.
  void Open(App& app, UiPrefs& prefs, const std::string& path);
  // Ctrl+O, Ctrl+S and Ctrl+Shift+S (and their menu items).
  void RequestOpen(App& app);
  void RequestSave(App& app, UiPrefs& prefs);
  void RequestSaveAs(App& app);
  // A file dialog is open (a headless run waits for it).
  bool busy() const { return dialog_.running(); }
  // The file the "Replace …?" question is about now ("" when none is asked), for the layout file.
  const std::string& replace_asked() const { return confirm_path_; }

 private:
  void Remember(const std::string& path);
  // Saves to `path`, asking first when it exists and nobody asked yet (`confirmed`).
  void SaveChecked(App& app, UiPrefs& prefs, const std::string& path, bool confirmed);
  void Save(App& app, UiPrefs& prefs, const std::string& path);
  bool want_save_popup_ = false, want_open_popup_ = false, want_confirm_popup_ = false;
  std::string path_field_;
  std::string pending_open_;  // a recent session chosen in the menu, opened after it closes
  FileDialog dialog_;
  bool dialog_saves_ = false;  // what the open dialog is for
  std::string confirm_path_;   // the "Replace …?" question's file
};

// A file or folder dropped on the window: a session (.attnscope, or JSON whose "format" is
// attnscope-session/1) is opened as one, another .json or a .safetensors as a stored trace (as
// `attnscope view FILE`), a folder as a model; anything else is refused with a message in the
// status bar.
void open_dropped_path(App& app, UiPrefs& prefs, SessionMenu& sessions, const std::string& path);

// The "Replace …?" question as a modal popup named `id` (opened by the caller with
// ImGui::OpenPopup): 1 when Replace was chosen (or Enter), -1 Cancel (or Escape), 0 not yet.
int draw_replace_question(const char* id, const std::string& path);

}  // namespace attnscope
