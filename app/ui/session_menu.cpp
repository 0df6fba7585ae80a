#include "app/ui/session_menu.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/lesson/lesson_steps.h"
#include "app/session_io.h"
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

void SessionMenu::DrawItems(App& app, UiPrefs&) {
  if (ImGui::MenuItem("Open session\xE2\x80\xA6")) {
    want_open_popup_ = true;
    path_field_ = recent.empty() ? default_session_path(app) : recent.front();
  }
  if (ImGui::BeginMenu("Recent sessions", !recent.empty())) {
    for (const std::string& r : std::vector<std::string>(recent))
      if (ImGui::MenuItem(r.c_str())) pending_open_ = r;
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Save session\xE2\x80\xA6")) {
    want_save_popup_ = true;
    path_field_ = default_session_path(app);
  }
}

void SessionMenu::DrawPopups(App& app, UiPrefs& prefs) {
  if (!pending_open_.empty()) {
    std::string path = std::move(pending_open_);
    pending_open_.clear();
    Open(app, prefs, path);
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
      if (saving ? save_session_file(app, prefs, path_field_)
                 : open_session_file(app, prefs, path_field_))
        Remember(path_field_);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
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
