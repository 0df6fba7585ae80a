// The model view's effect and dla (issue 27, model_view.h): a target token picked from the
// predictions or typed, the effect map filling in from the worker with its progress and a
// Cancel, and what each thumbnail shows of it (sort, a coloured strip, its number). Heads switched
// off (Alt+click) are crossed out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <imgui_stdlib.h>

#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "app/views/model_view.h"

namespace attnscope {

namespace {
bool is_effect_key(const std::string& name) {
  return name == "effect" || name == "dla";
}

// A typed target: a vocabulary id ("1234") or text whose first ordinary token is the target.
int parse_target(const AppState& st, const std::string& input) {
  if (input.empty()) return -1;
  char* end = nullptr;
  const long id = std::strtol(input.c_str(), &end, 10);
  if (end && *end == '\0') return id >= 0 && id < (1L << 30) ? static_cast<int>(id) : -2;
  if (!st.model) return -2;
  for (const Token& t : st.model->tokenize(input))
    if (!t.special) return t.id;
  return -2;
}
}  // namespace

const Matrix* ModelView::EffectValues(const ViewContext& ctx, const std::string& which) const {
  if (!is_effect_key(which) || !ctx.probe || !ctx.probe->effects || !ctx.probe->error.empty())
    return nullptr;
  const Matrix& m = which == "effect" ? ctx.probe->effect : ctx.probe->dla;
  if (m.rows() != ctx.trace->layers() || m.cols() != ctx.trace->heads()) return nullptr;
  return &m;
}

void ModelView::DrawEffectsBar(ViewContext& ctx) {
  AppState& st = ctx.app;
  const ThemeColors& colors = theme_colors();
  const float font = ImGui::GetFontSize();
  if (!ctx.toggle_ablation) return;  // encoders, the lesson model: nothing to switch off
  ImGui::SameLine();                 // on the toolbar's line: the grid keeps its height
  ImGui::SetNextItemWidth(font * 7);
  const char* colour = st.model_colour.empty() ? "no marks" : st.model_colour.c_str();
  if (ImGui::BeginCombo("mark##model", colour)) {
    if (ImGui::Selectable("no marks", st.model_colour.empty())) st.model_colour.clear();
    if (ImGui::Selectable("effect", st.model_colour == "effect")) st.model_colour = "effect";
    help_tooltip("log p(target) with the head switched off minus with it on: red helps");
    if (ImGui::Selectable("dla", st.model_colour == "dla")) st.model_colour = "dla";
    help_tooltip("direct logit attribution: what the head writes towards the target's logit");
    ImGui::EndCombo();
  }
  help_tooltip("colour each head by its effect on the target, or its direct logit attribution");
  if (!st.interventions.ablated.empty()) {
    ImGui::SameLine();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d off: all back on",
                  static_cast<int>(st.interventions.ablated.size()));
    if (ImGui::SmallButton(buf)) {
      ctx.clear_interventions();
    }
  }
  const bool wanted = is_effect_key(st.model_sort) || !st.model_colour.empty();
  if (!wanted) return;
  // The target: the top prediction, one clicked in the Next token tab, or typed here (a line of
  // its own).
  ImGui::TextUnformatted("target");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 6);
  if (ImGui::InputTextWithHint("##target", "top", &st.interventions.target_input,
                               ImGuiInputTextFlags_EnterReturnsTrue)) {
    const int id = parse_target(st, st.interventions.target_input);
    if (id == -2) {
      std::string message = "no token \"";  // appended: GCC 12's -Wrestrict (bug 105329)
      message += st.interventions.target_input;
      message += "\" in this model's vocabulary";
      st.message = std::move(message);
      st.message_is_error = true;
    } else {
      st.interventions.target = id;
      st.interventions.effects_cancelled = false;
    }
  }
  help_tooltip("a token id or a word (Enter); empty: the top prediction");
  const ProbeResult* r = ctx.probe && ctx.probe->effects ? ctx.probe.get() : nullptr;
  if (r && !r->error.empty()) {
    text_wrapped_message(r->error, colors.error);
    return;
  }
  if (r) {
    ImGui::SameLine();
    std::string what = "\"";  // appended: GCC 12's -Wrestrict (bug 105329) on "…" + s + "…"
    what += bytes_label(r->target.text, 14);
    what += '"';
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s after #%d: p %.3f", what.c_str(), r->effects_at,
                  r->target.probability);
    ImGui::TextUnformatted(buf);
    if (r->target_after >= 0) {  // what the heads switched off and the edges cut do to it
      ImGui::SameLine(0, 0);
      std::snprintf(buf, sizeof buf, " \xE2\x86\x92 %.3f with them off", r->target_after);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.error), "%s", buf);
    }
  }
  if (st.interventions.effects_cancelled) {
    ImGui::SameLine();
    if (ImGui::SmallButton("compute the effects")) st.interventions.effects_cancelled = false;
    return;
  }
  const double done = r ? r->effects_done : 0.0;
  if (done < 1.0) {
    ImGui::SameLine();
    char label[48];
    std::snprintf(label, sizeof label, "effects %d%%", static_cast<int>(done * 100));
    ImGui::ProgressBar(static_cast<float>(done), ImVec2(font * 8, 0), label);
    ImGui::SameLine();
    if (ImGui::SmallButton("Cancel")) st.interventions.effects_cancelled = true;
  }
}

void ModelView::DrawHeadMarks(ViewContext& ctx, ImDrawList* dl, int l, int h, ImVec2 a, ImVec2 b,
                              const Matrix* marks, float marks_max) {
  const ThemeColors& colors = theme_colors();
  if (marks && std::isfinite((*marks)(l, h)) && marks_max > 0) {
    // Red: the head helps the target (its effect is negative, its dla positive); blue: it hurts.
    const float v = (*marks)(l, h);
    const bool helps = ctx.app.model_colour == "effect" ? v < 0 : v > 0;
    const float strength = std::min(1.0f, std::abs(v) / marks_max);
    const ImU32 c = helps ? IM_COL32(215, 48, 39, 255) : IM_COL32(49, 104, 189, 255);
    const float t = std::max(3.0f, (b.x - a.x) * 0.12f);
    dl->AddRectFilled(a, ImVec2(b.x, a.y + t), with_alpha(c, 0.15f + 0.85f * strength));
    dl->AddRect(a, b, with_alpha(c, strength), 0, 0, std::max(1.5f, t * 0.5f * strength));
  }
  if (ctx.app.interventions.ablated.empty()) return;
  const auto& ab = ctx.app.interventions.ablated;
  if (std::find(ab.begin(), ab.end(), HeadRef{l, h}) == ab.end()) return;
  // Switched off: veiled and crossed out.
  dl->AddRectFilled(a, b, with_alpha(ImGui::GetColorU32(ImGuiCol_WindowBg), 0.55f));
  const float w = std::max(2.0f, (b.x - a.x) * 0.06f);
  dl->AddLine(a, b, colors.error, w);
  dl->AddLine(ImVec2(b.x, a.y), ImVec2(a.x, b.y), colors.error, w);
}

}  // namespace attnscope
