#include "app/lesson/lesson_view.h"

#include <algorithm>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/lesson/lesson_draw.h"
#include "app/lesson/lesson_pictures.h"
#include "app/lesson/lesson_steps.h"
#include "app/ui/imgui_text.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "core/session/session.h"

namespace attnscope {

using namespace lesson;

void lesson_handle_key(App& app, LessonKey key) {
  LessonMode& m = app.state.lesson_mode;
  switch (key) {
    case LessonKey::kNext:
      // In "predict first" mode the first press reveals, the next one moves on (a clicker has
      // only two buttons).
      if (m.predict && !m.revealed)
        m.revealed = true;
      else
        lesson_go_to(app, m.step + 1);
      break;
    case LessonKey::kPrevious:
      lesson_go_to(app, m.step - 1);
      break;
    case LessonKey::kFirst:
      lesson_go_to(app, 1);
      break;
    case LessonKey::kLast:
      lesson_go_to(app, kLessonSteps);
      break;
    case LessonKey::kReveal:
      m.revealed = !m.revealed;
      break;
    case LessonKey::kUnscaled:
      if (m.step == 4) m.unscaled = !m.unscaled;
      break;
    case LessonKey::kPositions:
      if (m.step == 8) lesson_set_positions(app, !m.positions);
      break;
    case LessonKey::kLeave:
      leave_lesson(app);
      break;
  }
}

void LessonView::Draw(App& app, const Fonts& fonts, nlohmann::json* layout, float pixel_scale) {
  AppState& st = app.state;
  LessonMode& m = st.lesson_mode;
  const ThemeColors& colors = theme_colors();
  lesson_sync(app);
  real.sync(app);
  busy = real.busy(app);
  ImFont* lf = fonts.lesson;
  ImFont* tf = fonts.lesson_title;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float pad = sz(lf) * 0.5f;

  // Header: "3 / 8" and the title; the step dots on the right.
  const LessonStepText& step = lesson_step_text(m.step);
  char counter[16];
  std::snprintf(counter, sizeof counter, "%d / %d", m.step, kLessonSteps);
  text(lf, ImVec2(at.x, at.y + (sz(tf) - sz(lf))), colors.text_dim, counter);
  const float title_x = at.x + text_w(lf, "8 / 8") + pad * 2;
  text(tf, ImVec2(title_x, at.y), colors.text, step.title);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float dot = sz(lf) * 0.35f;
  for (int k = 1; k <= kLessonSteps; ++k) {
    ImVec2 c(at.x + avail.x - (kLessonSteps - k + 0.5f) * dot * 3.2f, at.y + sz(tf) * 0.6f);
    if (k == m.step)
      dl->AddCircleFilled(c, dot, colors.accent);
    else
      dl->AddCircle(c, dot, colors.text_dim, 0, 2.0f);
  }
  float y = at.y + sz(tf) + pad;

  // The live sentence, retypable at any step.
  ImGui::SetCursorScreenPos(ImVec2(at.x, y));
  ImGui::PushFont(lf);
  ImGui::SetNextItemWidth(avail.x);
  if (focus_text_box >= 0) {
    ImGui::SetKeyboardFocusHere();
    focus_text_box = -1;
  }
  if (input_text_with_hint("##lesson_sentence", "type a sentence", st.slots[0].text)) {
    st.slots[0].label.clear();
    app.submit(0);
  }
  text_box_active = ImGui::IsItemActive();
  ImGui::PopFont();
  y = ImGui::GetCursorScreenPos().y + pad * 0.5f;
  // Words the lesson model cannot read (another language): say so, and where to go instead.
  if (const auto& r = st.slots[0].result; r && r->trace && !r->trace->note.empty()) {
    ImGui::SetCursorScreenPos(ImVec2(at.x, y));
    text_wrapped_message(r->trace->note, colors.warning);
    y = ImGui::GetCursorScreenPos().y + pad * 0.5f;
  }

  // Footer: what the teacher says, and the controls.
  const float footer_h = sz(lf) * 2.5f + ImGui::GetFrameHeight() + pad * 2.5f;
  const float picture_h = at.y + avail.y - footer_h - y - pad;

  const auto& result = st.slots[0].result;
  const AttentionTrace* trace = result && result->trace ? result->trace.get() : nullptr;
  const auto& second_result = st.slots[1].result;
  const AttentionTrace* second =
      second_result && second_result->trace ? second_result->trace.get() : nullptr;
  const int focus = focused_token(st, 0);
  // The worker published every token's meaning shift with the trace (none when the vectors are
  // missing: the model would not have opened either).
  const std::vector<MeaningShift>* shifts = result ? result->meaning_shifts.get() : nullptr;
  const MeaningShift* shift = shifts && focus >= 0 && focus < static_cast<int>(shifts->size())
                                  ? &(*shifts)[focus]
                                  : nullptr;
  const bool hidden = m.predict && !m.revealed;
  if (hidden) {
    // "Predict first": the question, large, instead of the numbers.
    ImGui::SetCursorScreenPos(ImVec2(at.x + avail.x * 0.1f, y + picture_h * 0.25f));
    ImGui::PushFont(tf);
    ImGui::PushTextWrapPos(at.x + avail.x * 0.9f);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colors.accent));
    ImGui::TextWrapped("%s", step.predict);
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    ImGui::SetCursorScreenPos(ImVec2(at.x + avail.x * 0.1f, ImGui::GetCursorScreenPos().y + pad));
    ImGui::PushFont(lf);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.text_dim),
                       "Talk it over, then press Space or PageDown to see.");
    ImGui::PopFont();
  } else {
    // Steps 7 and 8 show the real model too when one was loaded before the lesson.
    const auto real_result = real.result(app, 0), real_reversed = real.result(app, 1);
    const LessonRealShown shown{
        real.info,
        real.positions,
        real_result && real_result->head_summaries ? real_result->trace.get() : nullptr,
        real_reversed ? real_reversed->trace.get() : nullptr,
        real_result ? real_result->head_summaries.get() : nullptr,
        !real.error.empty() || !real_result ? real.error : real_result->error};
    LessonPictureContext ctx{app, fonts, layout, pixel_scale, trace, second, focus, shift};
    if (real.model && (m.step == 7 || m.step == 8)) ctx.real = &shown;
    draw_lesson_picture(ctx, m.step, ImVec2(at.x, y), ImVec2(avail.x, picture_h));
  }

  const float footer_y = at.y + avail.y - footer_h;
  dl->AddLine(ImVec2(at.x, footer_y), ImVec2(at.x + avail.x, footer_y), colors.panel_line, 2.0f);
  char say[512];
  const std::string word = trace && focus >= 0 ? label(*trace, focus) : "the word";
  std::snprintf(say, sizeof say, step.say, word.c_str());
  ImGui::SetCursorScreenPos(ImVec2(at.x, footer_y + pad * 0.5f));
  ImGui::PushFont(lf);
  ImGui::PushTextWrapPos(at.x + avail.x);
  ImGui::TextWrapped("%s", say);
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  ImGui::SetCursorScreenPos(ImVec2(at.x, at.y + avail.y - ImGui::GetFrameHeight()));
  if (ImGui::Button("\xE2\x97\x80 back")) lesson_handle_key(app, LessonKey::kPrevious);
  ImGui::SameLine();
  if (ImGui::Button("next \xE2\x96\xB6")) lesson_handle_key(app, LessonKey::kNext);
  ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.text_dim),
                     "PageDown / \xE2\x86\x92 next, PageUp / \xE2\x86\x90 back, click a row to "
                     "choose the word");
  ImGui::SameLine();
  if (m.step == 4) {
    bool without = m.unscaled;
    if (ImGui::Checkbox("without \xC3\xB7\xE2\x88\x9A"
                        "d\xE2\x82\x96 (U)",
                        &without))
      lesson_handle_key(app, LessonKey::kUnscaled);
    ImGui::SameLine();
  }
  if (m.step == 8) {
    bool pos = m.positions;
    if (ImGui::Checkbox("add positions (P)", &pos)) lesson_handle_key(app, LessonKey::kPositions);
    ImGui::SameLine();
  }
  ImGui::Checkbox("predict first", &m.predict);
  ImGui::SameLine();
  if (ImGui::Button("leave the lesson (Esc)")) lesson_handle_key(app, LessonKey::kLeave);

  if (layout) {
    layout->push_back(
        {{"view", "lesson"},
         {"step", m.step},
         {"title", step.title},
         {"say", say},
         {"predict", m.predict},
         {"revealed", m.revealed},
         {"unscaled", m.unscaled},
         {"positions", m.positions},
         {"focus", focus},
         {"tokens", trace ? static_cast<int>(trace->tokens.size()) : 0},
         {"heads", trace ? trace->heads() : 0},
         {"positional", trace ? trace->model.options.value("positional", false) : false},
         {"real_model", real.model ? real.info.name : std::string()},
         {"font_px", sz(lf) * pixel_scale},
         {"title_px", sz(tf) * pixel_scale},
         {"footer_y", footer_y * pixel_scale}});
  }
}

}  // namespace attnscope
