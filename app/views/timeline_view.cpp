#include "app/views/timeline_view.h"

#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "core/session/session.h"

namespace attnscope {

namespace {

// What the generation is doing, in a few words.
std::string status_line(const GenerationState& g, bool generating) {
  char buf[160];
  if (generating || g.running)
    std::snprintf(buf, sizeof buf, "generating %d / %d \xC2\xB7 %.0f ms per token", g.steps,
                  g.max_new_tokens, g.step_ms);
  else if (g.stopped)
    std::snprintf(buf, sizeof buf, "stopped after %d new token%s", g.steps,
                  g.steps == 1 ? "" : "s");
  else if (g.end_of_text)
    std::snprintf(buf, sizeof buf, "%d new token%s, then end of text", g.steps,
                  g.steps == 1 ? "" : "s");
  else
    std::snprintf(buf, sizeof buf, "%d new token%s", g.steps, g.steps == 1 ? "" : "s");
  return buf;
}

void predictions_tooltip(const AttentionTrace& trace, int token) {
  if (token < 0 || token >= static_cast<int>(trace.token_predictions.size())) return;
  const auto& preds = trace.token_predictions[token];
  if (preds.empty()) return;
  ImGui::BeginTooltip();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  std::string title = "\"";  // piece by piece: GCC 12's -Wrestrict (bug 105329) on "…" + s + "…"
  title += token_label(trace, token, 20);
  title += "\" was chosen from";
  shaped_text(title, text);
  for (size_t k = 0; k < std::min<size_t>(preds.size(), 5); ++k) {
    char percent[24];
    std::snprintf(percent, sizeof percent, "  %5.1f%%  ", preds[k].probability * 100.0);
    shaped_text(percent + bytes_label(preds[k].text, 20), text);
  }
  ImGui::EndTooltip();
}
}  // namespace

void TimelineView::Draw(App& app, ViewContext& ctx, float width) {
  hovered = false;
  AppState& st = app.state;
  if (!st.model || !st.model_info.capabilities.generation) return;
  SlotState& s = st.slots[ctx.slot];
  const ThemeColors& colors = theme_colors();
  const ImVec4 dim = ImGui::ColorConvertU32ToFloat4(colors.text_dim);
  const float font = ImGui::GetFontSize();
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  ImGui::PushID("timeline");
  ImGui::PushID(ctx.slot);

  // Controls: Generate / Stop, N, temperature, seed.
  const bool generating = app.generating(ctx.slot);
  if (generating) {
    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(colors.warning));
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0, 0, 0, 1));
    if (ImGui::Button("\xE2\x96\xA0 Stop")) app.stop_generation(ctx.slot);
    ImGui::PopStyleColor(2);
  } else if (ImGui::Button("\xE2\x96\xB6 Generate")) {
    app.generate(ctx.slot);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "continue the text token by token; every view shows the newest token's row as it "
        "comes\n(editing the text or changing the model cancels it)");
  GenerationOptions& o = s.generation;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 2.6f);
  if (ImGui::InputInt("new tokens", &o.max_new_tokens, 0, 0))
    o.max_new_tokens = std::clamp(o.max_new_tokens, 1, kSessionMaxGenerateTokens);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("how many new tokens at most (1-%d)", kSessionMaxGenerateTokens);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 3.0f);
  if (ImGui::DragFloat("temperature", &o.temperature, 0.02f, 0.0f, kSessionMaxTemperature, "%.2f"))
    o.temperature = std::clamp(o.temperature, 0.0f, kSessionMaxTemperature);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("0 takes the most likely token; above 0 samples (drag to change)");
  if (o.temperature > 0.0f) {
    int seed = static_cast<int>(o.seed);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 3.5f);
    if (ImGui::DragInt("seed", &seed, 0.2f, 0, static_cast<int>(kSessionMaxSeed)))
      o.seed = static_cast<std::uint64_t>(std::clamp(seed, 0, static_cast<int>(kSessionMaxSeed)));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 2.6f);
    if (ImGui::InputInt("top-k", &o.top_k, 0, 0)) o.top_k = std::clamp(o.top_k, 0, kSessionMaxTopK);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("sample among the k most likely tokens only; 0: among every token");
  }
  const GenerationState* g = s.result && s.result->trace.get() == ctx.trace && s.result->generation
                                 ? &*s.result->generation
                                 : nullptr;
  if (g) {
    ImGui::SameLine();
    ImGui::TextColored(dim, "%s", status_line(*g, generating).c_str());
  }

  // The generated tokens, the focused step marked; a slider to step along them.
  nlohmann::json chips = nlohmann::json::array();
  int selected = -1;
  if (g && g->steps > 0 && ctx.trace) {
    const int first = g->prompt_tokens;
    const int steps = std::min(g->steps, static_cast<int>(ctx.trace->tokens.size()) - first);
    if (ctx.focus >= first && ctx.focus < first + steps) selected = ctx.focus - first;
    // Steps count from 0, like tokens, layers and heads everywhere.
    int step = s.locked_token >= first ? s.locked_token - first : steps - 1;
    if (ImGui::ArrowButton("##back", ImGuiDir_Left)) app.step_timeline(ctx.slot, -1);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::min(width * 0.35f, font * 14));
    if (ImGui::SliderInt("##step", &step, 0, std::max(0, steps - 1), "step %d")) {
      s.locked_token = first + std::clamp(step, 0, steps - 1);
      s.follow_generation = step >= steps - 1;
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Shift+\xE2\x86\x90/\xE2\x86\x92 steps (or \xE2\x86\x90/\xE2\x86\x92 "
          "with the pointer over the timeline)");
    ImGui::SameLine();
    if (ImGui::ArrowButton("##forward", ImGuiDir_Right)) app.step_timeline(ctx.slot, +1);
    ImGui::SameLine();
    // Chips in a strip that scrolls sideways when they do not fit.
    const float strip_h = font * 1.5f + ImGui::GetStyle().ScrollbarSize;
    ImGui::BeginChild("##chips", ImVec2(0, strip_h), false,
                      ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float pad = font * 0.25f;
    for (int k = 0; k < steps; ++k) {
      const int token = first + k;
      std::string label = token_label(*ctx.trace, token, 16);
      const ImVec2 ts = text_layer().measure(label, font);
      const ImVec2 a = ImGui::GetCursorScreenPos();
      const ImVec2 b(a.x + ts.x + 2 * pad, a.y + font * 1.3f);
      ImGui::InvisibleButton(("##chip" + std::to_string(k)).c_str(), ImVec2(b.x - a.x, b.y - a.y));
      if (ImGui::IsItemClicked()) {
        s.locked_token = token;
        s.follow_generation = k == steps - 1;
      }
      if (ImGui::IsItemHovered()) {
        st.focus.hover(ctx.slot, token);
        predictions_tooltip(*ctx.trace, token);
      }
      const bool is_selected = k == selected;
      dl->AddRectFilled(a, b, is_selected ? colors.accent : colors.token_bg, font * 0.2f);
      dl->AddRect(a, b, colors.accent, font * 0.2f, 0, 1.0f);
      const DrawnText drawn = text_layer().draw(
          dl, ImVec2(a.x + pad, a.y + font * 0.15f), label, font,
          is_selected ? (theme_is_light() ? IM_COL32(255, 255, 255, 255) : IM_COL32(0, 0, 0, 255))
                      : colors.text);
      // Keep the chosen chip in sight: the newest while following, any other once chosen.
      if (is_selected && ((s.follow_generation && g->running) || selected != scrolled_to))
        ImGui::SetScrollHereX(0.5f);
      if (ctx.layout)
        chips.push_back({{"step", k},
                         {"token", token},
                         {"text", label},
                         {"x", a.x * ctx.pixel_scale},
                         {"y", a.y * ctx.pixel_scale},
                         {"w", (b.x - a.x) * ctx.pixel_scale},
                         {"h", (b.y - a.y) * ctx.pixel_scale},
                         {"label", label_json(token, label, drawn, ctx.pixel_scale)}});
      ImGui::SameLine(0, font * 0.3f);
    }
    ImGui::NewLine();
    ImGui::EndChild();
    scrolled_to = selected;
  }
  ImGui::PopID();
  ImGui::PopID();
  const ImVec2 bottom_right(top_left.x + width, ImGui::GetCursorScreenPos().y);
  hovered = ImGui::IsMouseHoveringRect(top_left, bottom_right) &&
            ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows);
  if (ctx.layout && g)
    ctx.layout->push_back({{"view", "timeline"},
                           {"slot", ctx.slot},
                           {"prompt_tokens", g->prompt_tokens},
                           {"steps", g->steps},
                           {"max_new_tokens", g->max_new_tokens},
                           {"running", g->running},
                           {"stopped", g->stopped},
                           {"end_of_text", g->end_of_text},
                           {"selected_step", selected},  // from 0; -1: none focused
                           {"focus", ctx.focus},
                           {"chips", chips}});
}

}  // namespace attnscope
