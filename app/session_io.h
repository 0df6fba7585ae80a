#pragma once
// Between the app's state and a session file (core/session/session.h): what is captured, and how
// an opened session is applied. A session is checked completely before anything changes, so a bad
// file leaves the app as it was.
#include <string>

#include "app/app.h"
#include "app/views/controls_panel.h"
#include "core/session/session.h"

namespace attnscope {

Session capture_session(const App& app, const UiPrefs& prefs);
// Throws SessionError (and changes nothing) when the session names something this app does not
// have (a colormap); otherwise applies it: the model is opened off the UI thread, as from the
// controls.
void apply_session(App& app, UiPrefs& prefs, const Session& session);

// Reads `path` and applies it; on success remembers the path in app.state.session_path and says so
// in the status bar, on failure shows the one-line error there and keeps the state. Returns true
// on success.
bool open_session_file(App& app, UiPrefs& prefs, const std::string& path);
bool save_session_file(App& app, const UiPrefs& prefs, const std::string& path);

}  // namespace attnscope
