#include "app/lesson/lesson_view.h"

#include <algorithm>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/lesson/lesson_copying.h"
#include "app/lesson/lesson_draw.h"
#include "app/lesson/lesson_pictures.h"
#include "app/lesson/lesson_steps.h"
#include "app/ui/sentence_box.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "core/session/session.h"

namespace attnscope {

using namespace lesson;

void lesson_handle_key(App& app, LessonKey key) {
  LessonMode& m = app.state.lesson_mode;
  if (copying_handle_key(app, key)) return;  // step 7's optional page (lesson_copying.h)
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
      // Reveals only: a second Space (or one pressed when nothing was hidden) must never take the
      // numbers away from a class that is reading them.
      m.revealed = true;
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

void lesson_set_predict(App& app, bool on) {
  LessonMode& m = app.state.lesson_mode;
  // Ticked on a step whose numbers are on screen: they stay (the class has seen them), and the
  // next PageDown moves on; the question comes with the next step.
  if (on && !m.predict) m.revealed = true;
  m.predict = on;
}

namespace {

// The window (ImGui units) the lesson's type fits at a font scale of 1: every step lays out
// without overlaps down to this size (tests/gui/gui_lesson_review_test.cpp).
constexpr float kTypeRoomW = 1000, kTypeRoomH = 600;

// The footer's controls flow left to right and wrap onto a new row when the window is narrow.
struct Control {
  enum Kind { kButton, kCheckbox, kHint } kind;
  enum Action { kBack, kNext, kUnscaled, kPositions, kCopying, kPredict, kLeave, kNone } action;
  const char* label;
  float width = 0;
  float x = 0;
  int row = 0;
};

float control_width(const Control& c) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float text = ImGui::CalcTextSize(c.label).x;
  switch (c.kind) {
    case Control::kButton:
      return text + style.FramePadding.x * 2;
    case Control::kCheckbox:
      return ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + text;
    default:
      return text;
  }
}

// Places the controls in rows of `width`; the hint is left out when it would need a row of its
// own. Returns the number of rows.
int flow(std::vector<Control>& controls, float width) {
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  int row = 0;
  float x = 0;
  for (Control& c : controls) {
    c.width = control_width(c);
    if (x > 0 && x + c.width > width) {
      if (c.kind == Control::kHint) {
        c.row = -1;  // not shown
        continue;
      }
      ++row;
      x = 0;
    }
    c.x = x;
    c.row = row;
    x += c.width + spacing;
  }
  return row + 1;
}

}  // namespace

void LessonView::Draw(App& app, const Fonts& fonts, nlohmann::json* layout, float pixel_scale) {
  AppState& st = app.state;
  LessonMode& m = st.lesson_mode;
  const ThemeColors& colors = theme_colors();
  TextRecord record(layout != nullptr);
  lesson_sync(app);
  real.sync(app);
  CopyingPage& page = copying_page(app);
  const bool copying = copying_shown(app);  // step 7's optional page
  if (copying) page.sync();
  busy = real.busy(app) || page.busy();
  ImFont* lf = fonts.lesson;
  ImFont* tf = fonts.lesson_title;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // The lesson's type is made for a window of kTypeRoomW x kTypeRoomH at 100%: a smaller window, or
  // a font scale larger than the window holds, shrinks it to fit (it never grows).
  set_type_fit(1.0f);
  const float font_scale = sz(lf) / kLessonFontSize;
  set_type_fit(
      std::clamp(std::min(avail.x / (kTypeRoomW * font_scale), avail.y / (kTypeRoomH * font_scale)),
                 0.3f, 1.0f));
  const float pad = sz(lf) * 0.5f;

  // Header: "3 / 8" and the title; the step dots on the right.
  const LessonStepText& step = copying ? copying_step_text() : lesson_step_text(m.step);
  char counter[16];
  std::snprintf(counter, sizeof counter, "%d / %d", m.step, kLessonSteps);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float dot = sz(lf) * 0.35f;
  const float dots_w = kLessonSteps * dot * 3.2f;
  const float title_x = at.x + text_w(lf, "8 / 8") + pad * 2;
  // The title in the title font when it fits between the counter and the dots.
  ImFont* title_font = title_x + text_w(tf, step.title) <= at.x + avail.x - dots_w - pad ? tf : lf;
  text(lf, ImVec2(at.x, at.y + (sz(tf) - sz(lf))), colors.text_dim, counter);
  text(title_font, ImVec2(title_x, at.y + (sz(tf) - sz(title_font))), colors.text, step.title);
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
  // The optional page reads its own sentence (said twice by tiny); the steps read sentence 1.
  std::string& sentence = copying ? page.sentence : st.slots[0].text;
  if (sentence_box("##lesson_sentence", "type a sentence", sentence) && !copying) {
    st.slots[0].label.clear();
    app.submit(0);
  }
  text_box_active = ImGui::IsItemActive();
  recorded_item(sentence);
  ImGui::PopFont();
  y = ImGui::GetCursorScreenPos().y + pad * 0.5f;
  // Words the lesson model cannot read (another language): say so, and where to go instead.
  if (const auto& r = st.slots[0].result; !copying && r && r->trace && !r->trace->note.empty()) {
    ImGui::SetCursorScreenPos(ImVec2(at.x, y));
    text_wrapped_message(r->trace->note, colors.warning);
    recorded_item(r->trace->note);
    y = ImGui::GetCursorScreenPos().y + pad * 0.5f;
  }

  // Footer: what the teacher says, and the controls (in as many rows as the width needs).
  const auto& result = st.slots[0].result;
  const AttentionTrace* trace = result && result->trace ? result->trace.get() : nullptr;
  const int focus = focused_token(st, 0);
  std::string say;
  if (copying) {
    say = copying_say(page);
  } else {
    char buf[512];
    const std::string word = trace && focus >= 0 ? label(*trace, focus) : "the word";
    std::snprintf(buf, sizeof buf, step.say, word.c_str());
    say = buf;
  }
  std::vector<Control> controls = {{Control::kButton, Control::kBack, "\xE2\x97\x80 back"},
                                   {Control::kButton, Control::kNext, "next \xE2\x96\xB6"}};
  if (m.step == 4)
    controls.push_back({Control::kCheckbox, Control::kUnscaled,
                        "without \xC3\xB7\xE2\x88\x9A"
                        "d\xE2\x82\x96 (U)"});
  if (m.step == 8)
    controls.push_back({Control::kCheckbox, Control::kPositions, "add positions (P)"});
  if (copying && page.result)
    controls.push_back({Control::kCheckbox, Control::kCopying,
                        page.result->heads.size() == 1 ? "switch off the head that copies (Space)"
                                                       : "switch off the heads that copy (Space)"});
  controls.push_back({Control::kCheckbox, Control::kPredict, "predict first"});
  controls.push_back({Control::kButton, Control::kLeave, "leave the lesson (Esc)"});
  controls.push_back({Control::kHint, Control::kNone,
                      copying ? "PageDown / \xE2\x86\x92 switch off, then next; click a head"
                              : "PageDown / \xE2\x86\x92 next, PageUp / \xE2\x86\x90 back, click a "
                                "row to choose the word"});
  const int control_rows = flow(controls, avail.x);
  const float row_h = ImGui::GetFrameHeightWithSpacing();
  const float say_h = wrapped_h(lf, avail.x, say);
  const float footer_h = pad * 0.5f + say_h + pad * 0.5f + control_rows * row_h;
  const float footer_y = at.y + avail.y - footer_h;
  const float picture_h = footer_y - y - pad;

  const auto& second_result = st.slots[1].result;
  const AttentionTrace* second =
      second_result && second_result->trace ? second_result->trace.get() : nullptr;
  // The worker published every token's meaning shift with the trace (none when the vectors are
  // missing: the model would not have opened either).
  const std::vector<MeaningShift>* shifts = result ? result->meaning_shifts.get() : nullptr;
  const MeaningShift* shift = shifts && focus >= 0 && focus < static_cast<int>(shifts->size())
                                  ? &(*shifts)[focus]
                                  : nullptr;
  const bool hidden = m.predict && !m.revealed && !copying;
  if (hidden) {
    // "Predict first": the question, large, instead of the numbers.
    const float qx = at.x + avail.x * 0.1f, qw = avail.x * 0.8f;
    ImFont* qf = wrapped_h(tf, qw, step.predict) <= picture_h * 0.5f ? tf : lf;
    const float qy = y + picture_h * 0.2f;
    const float qh = wrapped(qf, ImVec2(qx, qy), qw, colors.accent, step.predict);
    wrapped(lf, ImVec2(qx, qy + qh + pad), qw, colors.text_dim,
            "Talk it over, then press Space or PageDown to see.");
  } else if (copying) {
    LessonPictureContext ctx{app, fonts, layout, pixel_scale, trace, second, focus, shift};
    draw_copying_page(ctx, page, ImVec2(at.x, y), ImVec2(avail.x, picture_h));
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

  dl->AddLine(ImVec2(at.x, footer_y), ImVec2(at.x + avail.x, footer_y), colors.panel_line, 2.0f);
  wrapped(lf, ImVec2(at.x, footer_y + pad * 0.5f), avail.x, colors.text, say);
  const float controls_y = at.y + avail.y - control_rows * row_h + ImGui::GetStyle().ItemSpacing.y;
  for (const Control& c : controls) {
    if (c.row < 0) continue;
    ImGui::SetCursorScreenPos(ImVec2(at.x + c.x, controls_y + c.row * row_h));
    bool on = c.action == Control::kUnscaled    ? m.unscaled
              : c.action == Control::kPositions ? m.positions
              : c.action == Control::kCopying   ? page.all() != 0 && page.off == page.all()
                                                : m.predict;
    bool clicked = false;
    if (c.kind == Control::kHint) {
      ImGui::AlignTextToFramePadding();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.text_dim), "%s", c.label);
    } else if (c.kind == Control::kButton) {
      clicked = ImGui::Button(c.label);
    } else {
      clicked = ImGui::Checkbox(c.label, &on);
    }
    recorded_item(c.label);
    if (!clicked) continue;
    switch (c.action) {
      case Control::kBack:
        lesson_handle_key(app, LessonKey::kPrevious);
        break;
      case Control::kNext:
        lesson_handle_key(app, LessonKey::kNext);
        break;
      case Control::kUnscaled:
        lesson_handle_key(app, LessonKey::kUnscaled);
        break;
      case Control::kPositions:
        lesson_handle_key(app, LessonKey::kPositions);
        break;
      case Control::kCopying:
        page.off = on ? page.all() : 0;
        break;
      case Control::kPredict:
        lesson_set_predict(app, on);
        break;
      case Control::kLeave:
        lesson_handle_key(app, LessonKey::kLeave);
        break;
      case Control::kNone:
        break;
    }
  }

  if (layout) {
    nlohmann::json controls_json = nlohmann::json::array();
    for (const Control& c : controls)
      if (c.row >= 0) controls_json.push_back(c.label);
    layout->push_back(
        {{"view", "lesson"},
         {"step", m.step},
         {"page", copying ? "copying" : ""},
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
         {"footer_y", footer_y * pixel_scale},
         {"controls", controls_json},
         {"window",
          {{"x", at.x * pixel_scale},
           {"y", at.y * pixel_scale},
           {"w", avail.x * pixel_scale},
           {"h", avail.y * pixel_scale}}},
         {"texts", record.json(pixel_scale)}});
  }
}

}  // namespace attnscope
