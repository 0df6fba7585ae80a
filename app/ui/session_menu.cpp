#include "app/ui/session_menu.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/lesson/lesson_steps.h"
#include "app/session_io.h"
#include "app/ui/imgui_compat.h"
#include "app/ui/key_bindings.h"
#include "app/ui/settings.h"
#include "core/util/file_read.h"

namespace attnscope {

namespace {
std::string default_session_path(const App& app) {
  if (!app.state.session_path.empty()) return app.state.session_path;
  const char* home = std::getenv("HOME");
  return (std::filesystem::path(home && *home ? home : ".") / "lesson.attnscope").string();
}

// The first bytes of a JSON file say whether it is a session, whatever its name.
bool looks_like_session(const std::string& path) {
  // Only a regular file is peeked at: a dropped FIFO would block the window here. What is not one
  // goes on to the trace reader, which says what it is.
  if (!regular_file_problem(path).empty()) return false;
  std::ifstream in(path, std::ios::binary);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("attnscope-session/") != std::string::npos;
}

std::vector<FileFilter> session_filters() {
  return {{"attnscope sessions", {"*.attnscope", "*.json"}}, {"All files", {"*"}}};
}
}  // namespace

void SessionMenu::Remember(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  const std::string p = ec ? path : absolute.lexically_normal().string();
  recent.erase(std::remove(recent.begin(), recent.end(), p), recent.end());
  recent.insert(recent.begin(), p);
  if (static_cast<int>(recent.size()) > kMaxRecentSessions) recent.resize(kMaxRecentSessions);
}

void SessionMenu::Open(App& app, UiPrefs& prefs, const std::string& path) {
  if (open_session_file(app, prefs, path)) Remember(path);
}

void SessionMenu::RequestOpen(App& app) {
  if (dialog_.running()) return;  // the open dialog answers first
  const std::string start = recent.empty() ? default_session_path(app) : recent.front();
  if (dialog_.Start(FileDialogKind::kOpen, "Open session", start, session_filters())) {
    dialog_saves_ = false;
    return;
  }
  want_open_popup_ = true;
  path_field_ = start;
}

void SessionMenu::RequestSaveAs(App& app) {
  if (dialog_.running()) return;
  const std::string start = default_session_path(app);
  if (dialog_.Start(FileDialogKind::kSave, "Save session", start, session_filters())) {
    dialog_saves_ = true;
    return;
  }
  want_save_popup_ = true;
  path_field_ = start;
}

void SessionMenu::RequestSave(App& app, UiPrefs& prefs) {
  // A session that came from a file (or was saved) goes back to it, as in every editor.
  if (!app.state.session_path.empty())
    Save(app, prefs, app.state.session_path);
  else
    RequestSaveAs(app);
}

void SessionMenu::Save(App& app, UiPrefs& prefs, const std::string& path) {
  if (save_session_file(app, prefs, path)) Remember(path);
}

void SessionMenu::SaveChecked(App& app, UiPrefs& prefs, const std::string& path, bool confirmed) {
  std::error_code ec;
  if (!confirmed && std::filesystem::exists(path, ec)) {
    confirm_path_ = path;
    want_confirm_popup_ = true;
    return;
  }
  Save(app, prefs, path);
}

void SessionMenu::DrawItems(App& app, UiPrefs& prefs) {
  if (ImGui::MenuItem("Open session\xE2\x80\xA6", shortcut(Action::kOpenSession))) RequestOpen(app);
  if (ImGui::BeginMenu("Recent sessions", !recent.empty())) {
    for (const std::string& r : std::vector<std::string>(recent))
      if (ImGui::MenuItem(r.c_str())) pending_open_ = r;
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Save session", shortcut(Action::kSaveSession))) RequestSave(app, prefs);
  if (ImGui::MenuItem("Save session as\xE2\x80\xA6", shortcut(Action::kSaveSessionAs)))
    RequestSaveAs(app);
}

int draw_replace_question(const char* id, const std::string& path) {
  int answer = 0;
  if (!ImGui::BeginPopupModal(id, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return answer;
  const std::filesystem::path p(path);
  ImGui::Text("Replace \xE2\x80\x9C%s\xE2\x80\x9D?", p.filename().string().c_str());
  ImGui::TextDisabled("It already exists in %s; replacing it overwrites its contents.",
                      p.parent_path().string().c_str());
  // Enter and Escape count from the frame after it appeared (the Enter that typed the path must
  // not answer too), once per press (a held key does not repeat into an answer).
  const bool keys = !ImGui::IsWindowAppearing();
  const auto pressed = [keys](ImGuiKey key) {
    return keys && imgui_compat::key_pressed(key, false);
  };
  if (ImGui::Button("Replace") || pressed(ImGuiKey_Enter) || pressed(imgui_compat::kKeypadEnter))
    answer = 1;
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || pressed(ImGuiKey_Escape)) answer = -1;
  if (answer) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
  return answer;
}

void SessionMenu::DrawPopups(App& app, UiPrefs& prefs) {
  if (!pending_open_.empty()) {
    std::string path = std::move(pending_open_);
    pending_open_.clear();
    Open(app, prefs, path);
  }
  // The desktop's dialog answered (polled every frame: the window never waits for it).
  switch (dialog_.Poll()) {
    case FileDialog::State::kChosen:
      if (dialog_saves_)
        SaveChecked(app, prefs, dialog_.path(), dialog_.confirmed_overwrite());
      else
        Open(app, prefs, dialog_.path());
      break;
    case FileDialog::State::kFailed:  // the typed path instead, with why
      app.state.message = dialog_.error() + "; type the path instead";
      app.state.message_is_error = true;
      (dialog_saves_ ? want_save_popup_ : want_open_popup_) = true;
      path_field_ = dialog_saves_ || recent.empty() ? default_session_path(app) : recent.front();
      break;
    case FileDialog::State::kCancelled:
    case FileDialog::State::kRunning:
    case FileDialog::State::kIdle:
      break;
  }
  if (want_open_popup_) ImGui::OpenPopup("Open session");
  if (want_save_popup_) ImGui::OpenPopup("Save session");
  want_open_popup_ = want_save_popup_ = false;
  for (const bool saving : {false, true}) {
    const char* id = saving ? "Save session" : "Open session";
    if (!ImGui::BeginPopupModal(id, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) continue;
    ImGui::TextUnformatted(saving ? "Save the sentences, model, options and view to:"
                                  : "Open the session file:");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 32);
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    bool enter =
        ImGui::InputText("##session_path", &path_field_, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::Button(saving ? "Save" : "Open") || enter) {
      ImGui::CloseCurrentPopup();
      if (saving)
        SaveChecked(app, prefs, path_field_, false);
      else
        Open(app, prefs, path_field_);
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || imgui_compat::key_pressed(ImGuiKey_Escape))
      ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  // Saving over a file asks; Cancel leaves it as it was.
  if (want_confirm_popup_) ImGui::OpenPopup("Replace the session file?");
  want_confirm_popup_ = false;
  if (!confirm_path_.empty()) {
    const int answer = draw_replace_question("Replace the session file?", confirm_path_);
    if (answer > 0) Save(app, prefs, confirm_path_);
    if (answer < 0) {
      app.state.message = "not saved: " + confirm_path_ + " was kept as it was";
      app.state.message_is_error = false;
    }
    if (answer) confirm_path_.clear();
  }
}

void open_dropped_path(App& app, UiPrefs& prefs, SessionMenu& sessions, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    app.open_model(path);  // a Hugging Face model folder; errors show in the controls
    app.state.message = "opening the model folder " + path;
    app.state.message_is_error = false;
    return;
  }
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".attnscope" || (ext == ".json" && looks_like_session(path))) {
    sessions.Open(app, prefs, path);
    return;
  }
  if (ext == ".json" || ext == ".safetensors") {
    // A stored trace (attnscope-trace/1 JSON or safetensors): read and checked off the UI
    // thread; a bad one is reported in the controls and the current model stays.
    if (app.state.lesson_mode.active) leave_lesson(app);
    app.open_trace(path);
    app.state.message = "opening the trace " + path;
    app.state.message_is_error = false;
    return;
  }
  app.state.message = "cannot open '" + path +
                      "': expected a session (.attnscope), a trace (.json, .safetensors) or a "
                      "model folder";
  app.state.message_is_error = true;
}

}  // namespace attnscope
