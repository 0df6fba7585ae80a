#include "app/views/controls_panel.h"

#include "app/ui/key_bindings.h"
#include "app/views/draw_util.h"
#include "app/views/intervention_controls.h"

#include <algorithm>
#include <iterator>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/ui/colormap.h"
#include "app/ui/theme.h"
#include "app/views/shown_controls.h"

namespace attnscope {

namespace {
void section(const char* title) {
  ImGui::Spacing();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().accent), "%s", title);
  ImGui::Separator();
}
void help(const char* text) {
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}
}  // namespace

bool ControlsPanel::Draw(App& app, UiPrefs& prefs) {
  AppState& st = app.state;
  bool style_changed = false;
  const ThemeColors& colors = theme_colors();

  section("Model");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##model", st.model ? st.model_spec.c_str() : "(no model)")) {
    if (app.models.empty()) app.refresh_model_list();
    for (const ModelListing& m : app.models) {
      bool usable = m.kind != "unsupported";
      std::string item = m.spec + "  (" + (m.title.empty() ? m.kind : m.title) + ")";
      if (ImGui::Selectable(item.c_str(), m.spec == st.model_spec,
                            usable ? 0 : ImGuiSelectableFlags_Disabled))
        app.open_model(m.spec);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s%s%s", m.where.c_str(), m.note.empty() ? "" : "\n", m.note.c_str());
    }
    if (ImGui::Selectable("refresh the list")) app.refresh_model_list();
    ImGui::EndCombo();
  }
  ImGui::SetNextItemWidth(-1);
  bool enter = ImGui::InputTextWithHint("##modelpath", "folder or repo id (gpt2)", &model_field,
                                        ImGuiInputTextFlags_EnterReturnsTrue);
  if ((ImGui::Button("Open") || enter) && !model_field.empty()) app.open_model(model_field);
  help("a model folder, or a repo id already in the Hugging Face cache");
  ImGui::SameLine();
  if (ImGui::Button("Download") && !model_field.empty()) app.download_and_open(model_field);
  help(
      "fetch this repo id (e.g. openai-community/gpt2) from huggingface.co into the cache, then "
      "open it");
  LoadProgress p = app.load_progress();
  if (p.busy) {
    ImGui::ProgressBar(static_cast<float>(p.fraction), ImVec2(-1, 0), p.label.c_str());
    ImGui::TextWrapped("%s", p.what.c_str());
    if (p.label != "lesson" && ImGui::SmallButton("Cancel")) app.cancel_download();
  }
  if (!st.model_error.empty()) {
    text_wrapped_message(st.model_error, colors.error);
  }

  section("Backend");
  const char* backends[] = {"auto", "cpu", "cuda", "opengl"};
  constexpr int kBackends = static_cast<int>(std::size(backends));
  int b = static_cast<int>(std::find(std::begin(backends), std::end(backends), st.backend_choice) -
                           std::begin(backends));
  ImGui::SetNextItemWidth(-1);
  if (ImGui::Combo("##backend", &b, backends, kBackends))
    app.choose_backend(backends[std::clamp(b, 0, kBackends - 1)]);

  section("Layer and head");
  int layers = st.model ? std::max(1, st.model_info.layers) : 1;
  int heads = st.model ? std::max(1, st.model_info.heads) : 1;
  // Counted from 0, as in the CLI, JSON, sessions and figures (and Hugging Face, TransformerLens).
  int layer = st.layer, head = st.head;
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("head ").x);
  if (ImGui::SliderInt("layer", &layer, 0, layers - 1)) st.layer = std::clamp(layer, 0, layers - 1);
  help("\xE2\x86\x90 / \xE2\x86\x92 keys; counted from 0");
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("head ").x);
  if (ImGui::SliderInt("head", &head, 0, heads - 1)) st.head = std::clamp(head, 0, heads - 1);
  help("\xE2\x86\x91 / \xE2\x86\x93 keys; counted from 0");
  DrawInterventionControls(app);  // switch the head off, cut edges (decoders)
  // The lesson model's heads say what they are made of (core/model/lesson, HeadDesign).
  if (st.model && st.model_info.kind == "lesson") {
    const nlohmann::json& options = st.model_info.options;
    const auto roles = options.value("head_roles", nlohmann::json::array());
    const auto recipes = options.value("head_recipes", nlohmann::json::array());
    if (st.head < static_cast<int>(roles.size()) && st.head < static_cast<int>(recipes.size())) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colors.text_dim));
      ImGui::TextWrapped("head %d follows %s: %s", st.head,
                         roles[st.head].get<std::string>().c_str(),
                         recipes[st.head].get<std::string>().c_str());
      ImGui::PopStyleColor();
    }
  }

  DrawShownControls(st);  // one head or an aggregate, sinks, log colours (every view)

  if (!st.model || st.model_info.capabilities.meaning_shift) {
    section("Lesson model");
    bool changed = false;
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("heads ").x);
    changed |= ImGui::SliderFloat("\xCE\xB2", &st.lesson.beta, 0.5f, 20.0f, "%.1f");
    help(
        "sharpness: the logit is \xCE\xB2\xC2\xB7"
        "cos(a, b); higher \xCE\xB2 = more peaked weights");
    changed |= ImGui::Checkbox("exclude self", &st.lesson.mask_self);
    help("a token may not attend to itself (diagonal masked)");
    changed |= ImGui::Checkbox(
        "scale by \xE2\x88\x9A"
        "d\xE2\x82\x96",
        &st.lesson.scale);
    changed |= ImGui::Checkbox("causal mask", &st.lesson.causal);
    help("each token sees only the tokens before it (GPT-style)");
    changed |= ImGui::Checkbox("positional encoding", &st.lesson.positional);
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("heads ").x);
    changed |= ImGui::SliderInt("heads", &st.lesson.heads, 1, 8);
    if (changed) {
      st.lesson.beta = std::clamp(st.lesson.beta, 0.1f, 100.0f);
      st.lesson.heads = std::clamp(st.lesson.heads, 1, 8);
      app.rebuild_lesson_model();
    }
  }

  section("View");
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("colors ").x);
  const auto& maps = colormaps();
  if (ImGui::BeginCombo("colors", maps[st.colormap].name.c_str())) {
    for (int i = 0; i < static_cast<int>(maps.size()); ++i)
      if (ImGui::Selectable(maps[i].name.c_str(), i == st.colormap)) st.colormap = i;
    ImGui::EndCombo();
  }
  ImGui::Checkbox(
      "colors span 0\xE2\x80\x93"
      "1",
      &st.fixed_range);
  help("off: the colors span 0 to the largest weight shown, so small weights stay visible");
  ImGui::Checkbox("second sentence", &st.show_second);
  int theme = prefs.light_theme ? 1 : 0;
  if (ImGui::RadioButton("dark", &theme, 0)) style_changed = true;
  ImGui::SameLine();
  if (ImGui::RadioButton("light (projector)", &theme, 1)) style_changed = true;
  prefs.light_theme = theme == 1;
  ImGui::Text("font %.0f%%", prefs.font_scale * 100);
  ImGui::SameLine();
  if (ImGui::SmallButton("\xE2\x88\x92")) {
    prefs.font_scale = std::max(kMinFontScale, prefs.font_scale - kFontScaleStep);
    style_changed = true;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("+")) {
    prefs.font_scale = std::min(kMaxFontScale, prefs.font_scale + kFontScaleStep);
    style_changed = true;
  }
  help("Ctrl + / Ctrl \xE2\x88\x92");

  section("Screenshot");
  ImGui::RadioButton("1\xC3\x97", &prefs.screenshot_scale, 1);
  ImGui::SameLine();
  ImGui::RadioButton("2\xC3\x97", &prefs.screenshot_scale, 2);
  ImGui::SameLine();
  ImGui::RadioButton("4\xC3\x97", &prefs.screenshot_scale, 4);
  requested_screenshot = ImGui::Button(
      (std::string("Save PNG  (") + shortcut(Action::kScreenshot) + ")").c_str(), ImVec2(-1, 0));
  return style_changed;
}

}  // namespace attnscope
