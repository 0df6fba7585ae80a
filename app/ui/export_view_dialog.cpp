#include "app/ui/export_view_dialog.h"

#include <ctime>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/figure/figure_export.h"
#include "app/figure/figure_views.h"
#include "app/ui/imgui_compat.h"
#include "app/ui/settings.h"
#include "core/util/error.h"

namespace attnscope {

void export_current_view(const App& app, const UiPrefs& prefs, int slot, const std::string& view,
                         const std::string& path) {
  const auto& result = app.state.slots[slot].result;
  if (!result || !result->trace)
    throw Error("nothing to export yet: sentence " + std::to_string(slot + 1) + " has no trace");
  const FigureExporter& exporter = figure_exporter_for(path);
  FigureRequest request;
  request.trace = result->trace.get();
  request.layer = app.state.layer;
  request.head = app.state.head;
  request.colormap = app.state.colormap;
  request.light = prefs.light_theme;
  request.focus = focused_token(app.state, slot);
  request.fixed_range = app.state.fixed_range;
  request.aggregate = app.state.shown.aggregate;
  request.options = app.state.shown;
  // The same lines and arcs as the window: its top-k and the sentence's selected queries.
  request.top_k = app.state.top_k;
  request.queries = app.state.slots[slot].selected_queries;
  const Figure fig = build_figure(view, request);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  exporter.write(fig, path, static_cast<float>(std::max(2, prefs.screenshot_scale)));
}

void ExportViewDialog::Draw(App& app, const UiPrefs& prefs, const std::string& screenshot_folder) {
  const auto& views = figure_views();
  const auto& formats = figure_exporters();
  auto suggested = [&] {
    std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    const std::filesystem::path folder = screenshot_folder.empty()
                                             ? default_screenshot_folder()
                                             : std::filesystem::path(screenshot_folder);
    return (folder /
            ("attnscope-" + views[view].name + "-" + stamp + "." + formats[format].extension))
        .string();
  };
  if (open_requested) {
    ImGui::OpenPopup("Export view");
    open_requested = false;
    path = suggested();
    error.clear();
    confirmed_path_.clear();
    asking_replace_ = false;
  }
  // The desktop's save dialog answers (polled every frame; the window never waits for it).
  const FileDialog::State answer = dialog_.Poll();
  if (answer == FileDialog::State::kChosen) {
    path = dialog_.path();
    confirmed_path_ = dialog_.confirmed_overwrite() ? path : "";
    asking_replace_ = false;
  } else if (answer == FileDialog::State::kFailed) {
    error = dialog_.error() + "; type the path instead";
  }
  if (!ImGui::BeginPopupModal("Export view", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  const auto do_export = [&] {
    try {
      export_current_view(app, prefs, slot, views[view].name, path);
      app.state.message = "saved " + path;
      app.state.message_is_error = false;
      ImGui::CloseCurrentPopup();
    } catch (const std::exception& e) {
      error = e.what();
    }
  };
  if (asking_replace_) {
    // Exporting over a file asks first; Cancel goes back to the form and keeps the file.
    const std::filesystem::path p(path);
    ImGui::Text("Replace \xE2\x80\x9C%s\xE2\x80\x9D?", p.filename().string().c_str());
    ImGui::TextDisabled("It already exists in %s; replacing it overwrites its contents.",
                        p.parent_path().string().c_str());
    if (ImGui::Button("Replace")) {
      asking_replace_ = false;
      do_export();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || imgui_compat::key_pressed(ImGuiKey_Escape, false))
      asking_replace_ = false;
    ImGui::EndPopup();
    return;
  }
  bool renamed = false;
  ImGui::TextUnformatted(
      "A figure of what the window shows (layer, head or aggregate, colormap, focus, top-k).");
  if (ImGui::BeginCombo("view", views[view].name.c_str())) {
    for (int i = 0; i < static_cast<int>(views.size()); ++i)
      if (ImGui::Selectable(views[i].name.c_str(), i == view)) view = i, renamed = true;
    ImGui::EndCombo();
  }
  for (int i = 0; i < static_cast<int>(formats.size()); ++i) {
    if (i) ImGui::SameLine();
    if (ImGui::RadioButton(formats[i].extension.c_str(), format == i)) format = i, renamed = true;
  }
  if (app.state.show_second) {
    ImGui::RadioButton("sentence 1", &slot, 0);
    ImGui::SameLine();
    ImGui::RadioButton("sentence 2", &slot, 1);
  } else {
    slot = 0;
  }
  if (renamed) {
    // Keep the folder and name the user chose, with the new view's name and extension.
    std::filesystem::path p(path);
    if (p.filename().string().rfind("attnscope-", 0) == 0)
      path = (p.parent_path() / std::filesystem::path(suggested()).filename()).string();
    else
      path = p.replace_extension(formats[format].extension).string();
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 30);
  if (ImGui::InputText("file", &path)) confirmed_path_.clear();
  ImGui::SameLine();
  ImGui::BeginDisabled(dialog_.running());
  if (ImGui::Button("Browse\xE2\x80\xA6")) {
    error.clear();
    const std::string ext = formats[format].extension;
    if (!dialog_.Start(FileDialogKind::kSave, "Export view", path,
                       {{ext + " figures", {"*." + ext}}, {"All files", {"*"}}}))
      error = "no file dialog here (zenity or kdialog): type the path";
  }
  ImGui::EndDisabled();
  if (!error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.85f, 0.1f, 0.1f, 1));
    ImGui::TextWrapped("%s", error.c_str());
    ImGui::PopStyleColor();
  }
  if (ImGui::Button("Export")) {
    std::error_code ec;
    if (path != confirmed_path_ && std::filesystem::exists(path, ec))
      asking_replace_ = true;
    else
      do_export();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

}  // namespace attnscope
