#pragma once
// File > Export view…: the current view of a sentence as an SVG, PDF or PNG figure, drawn by the
// same figure builders and exporters as `attnscope render` (app/figure/), from what the window
// shows now: the trace, layer, head or aggregate, hidden sinks, log colours, colormap, range,
// focused token, selected queries, the lines' and arcs' top-k and the theme.
#include <string>

#include "app/app.h"
#include "app/ui/file_dialog.h"
#include "app/views/controls_panel.h"

namespace attnscope {

// Writes `view` of sentence `slot` as the app shows it to `path` (format from the extension).
// Throws Error/UsageError with a message for the status bar.
void export_current_view(const App& app, const UiPrefs& prefs, int slot, const std::string& view,
                         const std::string& path);

// The popup: view, format, sentence and file ("Browse…" opens the desktop's save dialog when
// there is one, app/ui/file_dialog.h). Exporting over an existing file asks first ("Replace …?"),
// unless the desktop's dialog asked already; Cancel leaves the file as it was.
struct ExportViewDialog {
  bool open_requested = false;  // set by the menu; the popup opens next frame
  std::string path;             // empty: a name in the screenshot folder
  int view = 0;                 // index into figure_views()
  int format = 0;               // index into figure_exporters()
  int slot = 0;
  std::string error;

  void Draw(App& app, const UiPrefs& prefs, const std::string& screenshot_folder);
  bool busy() const { return dialog_.running(); }  // the desktop's dialog is open

 private:
  FileDialog dialog_;
  std::string confirmed_path_;  // the desktop's dialog already asked about replacing this file
  bool asking_replace_ = false;
};

}  // namespace attnscope
