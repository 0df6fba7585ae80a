#include "app/views/meaning_view.h"

#include <algorithm>
#include <cstdio>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "app/views/next_token_view.h"

namespace attnscope {

namespace {
void neighbor_list(ViewContext& ctx, const char* title, const std::vector<Neighbor>& list,
                   float width) {
  const ThemeColors& colors = theme_colors();
  ImGui::BeginGroup();
  shaped_text(title, colors.accent);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Columns: word | similarity bar | number, sized to what is shown.
  float word_w = 0;
  const float font = ImGui::GetFontSize();
  for (const Neighbor& nb : list) word_w = std::max(word_w, text_layer().measure(nb.word, font).x);
  ImGui::PushFont(ctx.fonts.mono);
  const float number_w = ImGui::CalcTextSize("0.00").x;
  ImGui::PopFont();
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  word_w = std::min(word_w, width * 0.55f);
  const float bar_max = std::max(10.0f, width - word_w - number_w - 3 * gap);
  for (const Neighbor& nb : list) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    float h = ImGui::GetTextLineHeight();
    float bar = std::clamp(nb.similarity, 0.0f, 1.0f) * bar_max;
    ImGui::PushClipRect(p, ImVec2(p.x + word_w, p.y + h), true);
    text_layer().draw(dl, p, nb.word, font, colors.text);
    ImGui::PopClipRect();
    float bx = p.x + word_w + gap;
    dl->AddRectFilled(ImVec2(bx, p.y + 3), ImVec2(bx + bar, p.y + h - 3),
                      (colors.arc & 0x00FFFFFF) | 0x90000000, 2.0f);
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.2f", nb.similarity);
    ImGui::PushFont(ctx.fonts.mono);
    dl->AddText(ImVec2(bx + bar + gap, p.y + (h - ImGui::GetFontSize()) / 2), colors.text, buf);
    ImGui::PopFont();
    ImGui::Dummy(ImVec2(width, h));
  }
  ImGui::EndGroup();
}
}  // namespace

void MeaningView::Draw(ViewContext& ctx) {
  const auto dim = ImGui::ColorConvertU32ToFloat4(theme_colors().text_dim);
  // A generated token in focus (the timeline's step): the top predictions it was chosen from.
  if (ctx.trace && ctx.focus >= 0 &&
      ctx.focus < static_cast<int>(ctx.trace->token_predictions.size()) &&
      !ctx.trace->token_predictions[ctx.focus].empty()) {
    std::vector<Neighbor> chosen_from;
    for (const Prediction& p : ctx.trace->token_predictions[ctx.focus])
      chosen_from.push_back({bytes_label(p.text, 16), p.probability});
    // Appended piece by piece: GCC 12 warns (-Wrestrict, bug 105329) on "…" + string + "…".
    std::string title = "\"";
    title += token_label(*ctx.trace, ctx.focus, 16);
    title += "\" was chosen from";
    neighbor_list(ctx, title.c_str(), chosen_from, ImGui::GetContentRegionAvail().x);
    return;
  }
  // A decoder's next token at the focus, before → after the interventions (app/probe_jobs.h).
  if (draw_next_token(ctx)) return;
  if (ctx.trace && ctx.trace->model.capabilities.predictions && !ctx.trace->predictions.empty()) {
    // A language model (GPT-2, Llama, …): what it predicts next, the other half of the story.
    std::vector<Neighbor> next;
    for (const Prediction& p : ctx.trace->predictions)
      next.push_back({bytes_label(p.text, 16), p.probability});
    neighbor_list(ctx, "after the last token, the model predicts", next,
                  ImGui::GetContentRegionAvail().x);
    return;
  }
  if (!ctx.trace || !ctx.trace->model.capabilities.meaning_shift) {
    ImGui::PushStyleColor(ImGuiCol_Text, dim);
    ImGui::TextWrapped("The meaning shift is shown for the lesson model.");
    ImGui::PopStyleColor();
    return;
  }
  if (ctx.focus < 0 || ctx.focus >= static_cast<int>(ctx.trace->tokens.size())) {
    ImGui::PushStyleColor(ImGuiCol_Text, dim);
    ImGui::TextWrapped("Hover or click a token to see how its meaning shifts in context.");
    ImGui::PopStyleColor();
    return;
  }
  const auto& result = ctx.app.slots[ctx.slot].result;
  const std::string error = result ? result->meaning_error : std::string();
  const std::vector<MeaningShift>* shifts =
      result && result->trace.get() == ctx.trace ? result->meaning_shifts.get() : nullptr;
  static const MeaningShift kNone;
  const MeaningShift& shift =
      shifts && ctx.focus < static_cast<int>(shifts->size()) ? (*shifts)[ctx.focus] : kNone;
  std::string word = token_label(*ctx.trace, ctx.focus, 20);
  if (!error.empty()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().error), "%s", error.c_str());
    return;
  }
  if (shift.static_neighbors.empty() && shift.context_neighbors.empty()) {
    ImGui::TextColored(dim, "No neighbours for \"%s\" (an unknown word has no vector).",
                       word.c_str());
    return;
  }
  float width =
      std::max(120.0f, ImGui::GetContentRegionAvail().x / 2 - ImGui::GetStyle().ItemSpacing.x);
  std::string a = "\"" + word + "\" alone", b = "\"" + word + "\" in this sentence";
  neighbor_list(ctx, a.c_str(), shift.static_neighbors, width);
  ImGui::SameLine();
  neighbor_list(ctx, b.c_str(), shift.context_neighbors, width);
}

}  // namespace attnscope
