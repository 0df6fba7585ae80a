#include "app/ui/main_window.h"
#include "app/views/draw_util.h"

#include <algorithm>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/lesson/lesson_steps.h"
#include "app/render/text_layer.h"
#include "app/ui/colormap.h"
#include "app/ui/imgui_text.h"
#include "app/ui/theme.h"

namespace attnscope {

namespace {
constexpr ImGuiWindowFlags kPanelFlags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                         ImGuiWindowFlags_NoSavedSettings |
                                         ImGuiWindowFlags_NoBringToFrontOnFocus;

ViewContext make_context(App& app, const Fonts& fonts, int slot, nlohmann::json* layout,
                         float scale, ShownMatrixCache& cache) {
  ViewContext ctx(app.state, fonts);
  ctx.slot = slot;
  ctx.layout = layout;
  ctx.pixel_scale = scale;
  const AppState& st = app.state;
  const auto& result = st.slots[slot].result;
  if (result && result->trace) {
    ctx.trace_ref = result->trace;
    ctx.shown = cache.get(result->trace, st.layer, st.head, st.shown, st.colormap, st.fixed_range,
                          st.slots[slot].selected_queries);
    ctx.shown_pending = cache.pending();
    if (ctx.shown) {
      ctx.weights = &ctx.shown->weights;
      // While a newer matrix is built off the UI thread the views draw the previous one with the
      // tokens of its own trace, never one trace's tokens over another's weights.
      if (ctx.shown->trace) ctx.trace_ref = ctx.shown->trace;
    }
    ctx.trace = ctx.trace_ref.get();
  }
  ctx.focus = focused_token(app.state, slot);
  if (ctx.trace && ctx.focus >= static_cast<int>(ctx.trace->tokens.size())) ctx.focus = -1;
  return ctx;
}
}  // namespace

void MainWindow::DrawMenu(App& app, UiPrefs& prefs, bool& style_changed) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    sessions.DrawItems(app, prefs);
    ImGui::Separator();
    if (ImGui::MenuItem("Save screenshot", "Ctrl+S")) wants_screenshot = true;
    if (ImGui::MenuItem("Export view\xE2\x80\xA6")) export_view.open_requested = true;
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) wants_quit = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Examples")) {
    if (ImGui::MenuItem("bank (river / money) \xE2\x80\x94 built-in")) {
      PresetPair bank;
      bank.word = "bank";
      bank.text1 = kDefaultText1;
      bank.sense1 = "river";
      bank.text2 = kDefaultText2;
      bank.sense2 = "money";
      app.apply_preset(bank);
    }
    if (app.presets.empty())
      ImGui::MenuItem("(no preset pairs: the lesson assets are missing)", nullptr, false, false);
    for (const PresetPair& p : app.presets) {
      std::string item = p.word + "  (" + p.sense1 + " / " + p.sense2 + ")";
      if (ImGui::MenuItem(item.c_str())) app.apply_preset(p);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s", p.text1.c_str(), p.text2.c_str());
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Light (projector) theme", nullptr, prefs.light_theme)) {
      prefs.light_theme = !prefs.light_theme;
      style_changed = true;
    }
    if (ImGui::MenuItem("Larger text", "Ctrl +")) {
      prefs.font_scale = std::min(2.5f, prefs.font_scale + 0.1f);
      style_changed = true;
    }
    if (ImGui::MenuItem("Smaller text", "Ctrl \xE2\x88\x92")) {
      prefs.font_scale = std::max(0.6f, prefs.font_scale - 0.1f);
      style_changed = true;
    }
    if (ImGui::MenuItem("Fullscreen", "F11", prefs.fullscreen)) wants_fullscreen_toggle = true;
    if (ImGui::MenuItem("Guided lesson (presentation)", "F5", app.state.lesson_mode.active)) {
      if (app.state.lesson_mode.active) {
        leave_lesson(app);
      } else {
        enter_lesson(app, app.state.lesson_mode.step);
        if (!prefs.light_theme) style_changed = true;
        prefs.light_theme = true;  // the projector theme
      }
    }
    ImGui::Separator();
    const auto& maps = colormaps();
    for (int i = 0; i < static_cast<int>(maps.size()); ++i)
      if (ImGui::MenuItem(maps[i].name.c_str(), nullptr, app.state.colormap == i))
        app.state.colormap = i;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::TextUnformatted("Type in a text box: attention is recomputed at every keystroke.");
    ImGui::TextUnformatted("Hover a token to focus it everywhere; click to lock it.");
    ImGui::TextUnformatted(
        "\xE2\x86\x90/\xE2\x86\x92 layer, \xE2\x86\x91/\xE2\x86\x93 head, Ctrl+S screenshot, Ctrl "
        "+/\xE2\x88\x92 font, F11 fullscreen.");
    ImGui::TextUnformatted(
        "Decoders: \xE2\x96\xB6 Generate continues the text; Shift+\xE2\x86\x90/\xE2\x86\x92 "
        "(or \xE2\x86\x90/\xE2\x86\x92 over the timeline) steps through the new tokens.");
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

void MainWindow::DrawSlot(App& app, const Fonts& fonts, ColormapRenderer& renderer, int slot,
                          ImVec2 size, nlohmann::json* layout, float scale) {
  AppState& st = app.state;
  SlotState& s = st.slots[slot];
  const ThemeColors& colors = theme_colors();
  ImGui::BeginChild(slot == 0 ? "##slot0" : "##slot1", size, true);
  const float font = ImGui::GetFontSize();
  // Header: which sentence, its sense label.
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.accent), "Sentence %d", slot + 1);
  if (!s.label.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.text_dim), "(%s)", s.label.c_str());
  }
  if (focus_text_box == slot) {
    ImGui::SetKeyboardFocusHere();
    focus_text_box = -1;
  }
  ImGui::SetNextItemWidth(-1);
  if (input_text_with_hint(slot == 0 ? "##text0" : "##text1", "type a sentence", s.text)) {
    s.label.clear();
    app.submit(slot);
    st.focus.active_slot = slot;
  }
  text_box_active[slot] = ImGui::IsItemActive();
  {  // where the box is, for the layout file (the font tests look for its ink)
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    float* r = text_box_rect[slot];
    r[0] = a.x * scale, r[1] = a.y * scale, r[2] = (b.x - a.x) * scale, r[3] = (b.y - a.y) * scale;
  }
  draw_shaped_over_text_box(s.text, text_box_active[slot]);  // Arabic joined, right to left

  ViewContext ctx = make_context(app, fonts, slot, layout, scale, shown_cache[slot]);
  if (!st.model) {
    LoadProgress p = app.load_progress();
    text_wrapped_message(p.busy                   ? "opening " + p.label + "\xE2\x80\xA6"
                         : st.model_error.empty() ? std::string("no model")
                                                  : st.model_error,
                         p.busy ? colors.text_dim : colors.error);
  }
  if (s.result && !s.result->error.empty()) text_wrapped_message(s.result->error, colors.error);
  if (ctx.trace && ctx.trace->truncated_at_byte >= 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, colors.warning);
    ImGui::TextWrapped(
        "The text is longer than the model accepts: only the first %d bytes are used.",
        ctx.trace->truncated_at_byte);
    ImGui::PopStyleColor();
  }
  if (ctx.trace && !ctx.trace->note.empty()) text_wrapped_message(ctx.trace->note, colors.warning);
  const float width = ImGui::GetContentRegionAvail().x;
  sentences[slot].Draw(ctx, width, size.y > font * 34);  // large type when there is room
  timelines[slot].Draw(app, ctx, width);

  DrawPictures(ctx, renderer, slot, width);
  if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) st.focus.active_slot = slot;
  ImGui::EndChild();
}

void MainWindow::DrawPictures(ViewContext& ctx, ColormapRenderer& renderer, int slot, float width) {
  // Heatmap and the BertViz columns side by side, the arc diagram below. Beyond kMaxArcTokens
  // the lines are noise: the heatmap takes the whole area (and zooms).
  const float font = ImGui::GetFontSize();
  const ImGuiStyle& style = ImGui::GetStyle();
  const bool lines = !ctx.weights ||
                     (ctx.weights->rows() <= kMaxArcTokens && ctx.weights->cols() <= kMaxArcTokens);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  // Many tokens: the heatmap needs the height more than the arcs do.
  const bool many = ctx.weights && ctx.weights->rows() > 16;
  const float arc_h =
      lines ? std::clamp(avail.y * (many ? 0.24f : 0.30f), font * 5.5f, font * 11.0f) : 0.0f;
  const float row_h = std::max(font * 8, avail.y - arc_h - (lines ? style.ItemSpacing.y : 0));
  // The view's title states what is drawn: head or aggregate, hidden sinks, log colours, queries.
  const float title_top = ImGui::GetCursorScreenPos().y;
  ImGui::PushTextWrapPos(0.0f);  // a long title wraps instead of running off the pane
  text_dim("%s \xC2\xB7 rows: queries, columns: keys", ctx.shown ? ctx.shown->title.c_str()
                                                       : ctx.shown_pending ? "computing\xE2\x80\xA6"
                                                                           : "(nothing to show)");
  if (ctx.shown && ctx.shown_pending)  // a long trace's head is being computed off the UI thread
    text_dim("computing the new choice\xE2\x80\xA6 (this is the previous one)");
  ImGui::PopTextWrapPos();
  const float pictures_h = row_h - (ImGui::GetCursorScreenPos().y - title_top);  // title lines
  if (!lines) {
    heatmaps[slot].Draw(ctx, renderer, ImVec2(width, pictures_h));
    return;
  }
  // The heatmap takes the width its square grid can use at this height (its labels and colorbar
  // need about five characters more); the columns get the rest, within limits.
  const float columns_w = std::clamp(width - pictures_h - font * 5, font * 9, font * 18);
  heatmaps[slot].Draw(ctx, renderer, ImVec2(width - columns_w - style.ItemSpacing.x, pictures_h));
  ImGui::SameLine();
  arcs[slot].DrawColumns(ctx, ImVec2(columns_w, pictures_h));
  arcs[slot].DrawArcDiagram(ctx, ImVec2(width, arc_h));
}

bool MainWindow::Draw(App& app, const Fonts& fonts, ColormapRenderer& renderer, UiPrefs& prefs,
                      float frame_ms, nlohmann::json* layout, float scale) {
  bool style_changed = false;
  wants_screenshot = wants_quit = wants_fullscreen_toggle = false;
  DrawMenu(app, prefs, style_changed);
  sessions.DrawPopups(app, prefs);
  lesson_shown = app.state.lesson_mode.active;
  if (app.state.lesson_mode.active) {
    DrawLesson(app, fonts, layout, scale);
    status.Draw(app, frame_ms, ImGui::GetFontSize() + 8);
    return style_changed;
  }
  ImGuiViewport* vp = ImGui::GetMainViewport();
  const float font = ImGui::GetFontSize();
  const float status_h = font + 8;
  const float top = vp->WorkPos.y, height = vp->WorkSize.y - status_h;
  const float sidebar_w = std::min(font * 17.5f, vp->WorkSize.x * 0.3f);

  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x, top));
  ImGui::SetNextWindowSize(ImVec2(sidebar_w, height));
  ImGui::Begin("##controls", nullptr, kPanelFlags & ~ImGuiWindowFlags_NoScrollbar);
  style_changed |= controls.Draw(app, prefs);
  if (controls.requested_screenshot) wants_screenshot = true;
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + sidebar_w, top));
  ImGui::SetNextWindowSize(ImVec2(vp->WorkSize.x - sidebar_w, height));
  ImGui::Begin("##main", nullptr, kPanelFlags);
  if (DrawPanelTabs(app)) {
    const int slot = app.state.show_second ? std::clamp(app.state.model_view_slot, 0, 1) : 0;
    ViewContext ctx = make_context(app, fonts, slot, layout, scale, shown_cache[slot]);
    model_view.Draw(ctx, renderer, ImGui::GetContentRegionAvail());
    ImGui::End();
    status.Draw(app, frame_ms, status_h);
    export_view.Draw(app, prefs, "");
    return style_changed;
  }
  ImVec2 avail = ImGui::GetContentRegionAvail();
  const float bottom_h = std::clamp(avail.y * 0.29f, font * 9.0f, font * 22.0f);
  const float slots_h = avail.y - bottom_h - ImGui::GetStyle().ItemSpacing.y;
  const bool two = app.state.show_second;
  const float slot_w = two ? (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2 : avail.x;
  DrawSlot(app, fonts, renderer, 0, ImVec2(slot_w, slots_h), layout, scale);
  if (two) {
    ImGui::SameLine();
    DrawSlot(app, fonts, renderer, 1, ImVec2(slot_w, slots_h), layout, scale);
  }

  // Formula and meaning shift of the active sentence.
  int active = two ? app.state.focus.active_slot : 0;
  const float formula_w = avail.x * 0.72f;
  ImGui::BeginChild("##formula", ImVec2(formula_w, bottom_h), true,
                    ImGuiWindowFlags_HorizontalScrollbar);
  {
    ViewContext ctx = make_context(app, fonts, active, layout, scale, shown_cache[active]);
    formula.Draw(ctx);
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##meaning", ImVec2(0, bottom_h), true);
  {
    ViewContext ctx = make_context(app, fonts, active, layout, scale, shown_cache[active]);
    const bool lesson = !ctx.trace || ctx.trace->model.capabilities.meaning_shift;
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().accent), "%s (sentence %d)",
                       lesson ? "Meaning shift" : "Next token", active + 1);
    meaning.Draw(ctx);
  }
  ImGui::EndChild();
  ImGui::End();

  status.Draw(app, frame_ms, status_h);
  export_view.Draw(app, prefs, "");
  return style_changed;
}

bool MainWindow::DrawPanelTabs(App& app) {
  bool& model = app.state.model_view;
  if (!ImGui::BeginTabBar("##panels")) return model;
  // A session or a double-click may switch panels: select that tab once.
  const bool switched = model != tabs_model_view;
  const ImGuiTabItemFlags sentences_flag = switched && !model ? ImGuiTabItemFlags_SetSelected : 0;
  const ImGuiTabItemFlags model_flag = switched && model ? ImGuiTabItemFlags_SetSelected : 0;
  if (ImGui::BeginTabItem("Sentences", nullptr, sentences_flag)) {
    if (!switched) model = false;
    ImGui::EndTabItem();
  }
  if (ImGui::BeginTabItem("Model view: every layer \xC3\x97 head", nullptr, model_flag)) {
    if (!switched) model = true;
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
  tabs_model_view = model;
  return model;
}

void MainWindow::DrawLesson(App& app, const Fonts& fonts, nlohmann::json* layout, float scale) {
  ImGuiViewport* vp = ImGui::GetMainViewport();
  const float status_h = ImGui::GetFontSize() + 8;
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(ImVec2(vp->WorkSize.x, vp->WorkSize.y - status_h));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(24, 14));
  ImGui::Begin("##lesson", nullptr, kPanelFlags | ImGuiWindowFlags_NoScrollbar);
  lesson.Draw(app, fonts, layout, scale);
  ImGui::End();
  ImGui::PopStyleVar();
}

}  // namespace attnscope
