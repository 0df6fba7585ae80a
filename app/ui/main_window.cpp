#include "app/ui/main_window.h"

#include <algorithm>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/lesson/lesson_steps.h"
#include "app/render/text_layer.h"
#include "app/ui/colormap.h"
#include "app/ui/sentence_box.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "app/views/next_token_view.h"

namespace attnscope {

namespace {
constexpr ImGuiWindowFlags kPanelFlags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                         ImGuiWindowFlags_NoSavedSettings |
                                         ImGuiWindowFlags_NoBringToFrontOnFocus;
constexpr float kPanePadding = 4.0f;  // inside each pane's frame

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
  ctx.probe = app.probe_result(slot);
  ctx.probe_pending = app.probing(slot);
  if (st.model && intervenable(*st.model)) {
    ctx.toggle_ablation = [&app](int layer, int head) { app.toggle_ablation(layer, head); };
    ctx.toggle_knockout = [&app, slot](const EdgeKnockout& e) { app.toggle_knockout(slot, e); };
    ctx.clear_interventions = [&app] { app.clear_interventions(); };
  }
  return ctx;
}

ImVec2 top_left(const Rect& r) {
  return ImVec2(r.x, r.y);
}
ImVec2 extent(const Rect& r) {
  return ImVec2(std::max(1.0f, r.w), std::max(1.0f, r.h));
}
nlohmann::json rect_json(const Rect& r, float s) {
  return {{"x", r.x * s}, {"y", r.y * s}, {"w", r.w * s}, {"h", r.h * s}};
}

// A child window at `r` (absolute screen rectangle), framed, padded, no scrollbar by default.
bool begin_pane(const char* id, const Rect& r, ImGuiWindowFlags flags = 0, bool border = true) {
  ImGui::SetCursorScreenPos(top_left(r));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(kPanePadding, kPanePadding));
  const bool open = ImGui::BeginChild(id, extent(r), border, flags);
  ImGui::PopStyleVar();
  return open;
}

const char* view_tab_title(ViewId view, const ViewContext& ctx) {
  if (view == ViewId::kMeaning && ctx.trace && !ctx.trace->model.capabilities.meaning_shift)
    return "Next token";
  return view_title(view);
}

std::string slot_id(const char* what, int slot, int index = 0) {
  return std::string("##") + what + std::to_string(slot) + "_" + std::to_string(index);
}
}  // namespace

void MainWindow::Perform(Action action, App& app, UiPrefs& prefs) {
  AppState& st = app.state;
  const bool model = st.model != nullptr;
  const int layers = std::max(1, st.model_info.layers), heads = std::max(1, st.model_info.heads);
  const auto lesson_key = [&](LessonKey key) { lesson_handle_key(app, key); };
  switch (action) {
    case Action::kLayerNext:
    case Action::kLayerPrevious: {
      const int d = action == Action::kLayerNext ? +1 : -1;
      if (const int t = timeline_hovered_slot(); t >= 0)
        app.step_timeline(t, d);  // the pointer is over a generation timeline
      else if (model)
        st.layer = std::clamp(st.layer + d, 0, layers - 1);
      break;
    }
    case Action::kHeadNext:
    case Action::kHeadPrevious:
      if (model)
        st.head = std::clamp(st.head + (action == Action::kHeadNext ? 1 : -1), 0, heads - 1);
      break;
    case Action::kTimelineNext:
    case Action::kTimelinePrevious: {
      // The sentence in focus, else the one that generated.
      int slot = st.show_second ? st.focus.active_slot : 0;
      const auto& r = st.slots[slot].result;
      if (!(r && r->generation)) slot = 1 - slot;
      if (model) app.step_timeline(slot, action == Action::kTimelineNext ? +1 : -1);
      break;
    }
    case Action::kFontLarger:
      prefs.font_scale = std::min(kMaxFontScale, prefs.font_scale + kFontScaleStep);
      break;
    case Action::kFontSmaller:
      prefs.font_scale = std::max(kMinFontScale, prefs.font_scale - kFontScaleStep);
      break;
    case Action::kScreenshot:
      wants_screenshot = true;
      break;
    case Action::kSaveSession:
      sessions.RequestSave(app, prefs);
      break;
    case Action::kSaveSessionAs:
      sessions.RequestSaveAs(app);
      break;
    case Action::kOpenSession:
      sessions.RequestOpen(app);
      break;
    case Action::kQuit:
      wants_quit = true;
      break;
    case Action::kFullscreen:
      wants_fullscreen_toggle = true;
      break;
    case Action::kLesson:
      if (st.lesson_mode.active) {
        leave_lesson(app);
      } else {
        enter_lesson(app, st.lesson_mode.step);
        prefs.light_theme = true;  // the projector theme
      }
      break;
    case Action::kFocusView:
      if (prefs.focus_slot >= 0) {
        prefs.focus_slot = -1;
      } else if (st.model_view) {
        prefs.focus_slot = st.show_second ? std::clamp(st.model_view_slot, 0, 1) : 0;
        prefs.focus_view = ViewId::kModel;
      } else if (hovered_slot >= 0) {
        prefs.focus_slot = hovered_slot, prefs.focus_view = hovered_view;
      } else {
        prefs.focus_slot = st.show_second ? st.focus.active_slot : 0;
        prefs.focus_view = ViewId::kHeatmap;
      }
      break;
    case Action::kLeaveFocus:
      prefs.focus_slot = -1;
      break;
    case Action::kTogglePanel:
      prefs.left_panel = !prefs.left_panel;
      break;
    case Action::kLessonNext:
      lesson_key(LessonKey::kNext);
      break;
    case Action::kLessonPrevious:
      lesson_key(LessonKey::kPrevious);
      break;
    case Action::kLessonFirst:
      lesson_key(LessonKey::kFirst);
      break;
    case Action::kLessonLast:
      lesson_key(LessonKey::kLast);
      break;
    case Action::kLessonReveal:
      lesson_key(LessonKey::kReveal);
      break;
    case Action::kLessonUnscaled:
      lesson_key(LessonKey::kUnscaled);
      break;
    case Action::kLessonPositions:
      lesson_key(LessonKey::kPositions);
      break;
    case Action::kLessonLeave:
      lesson_key(LessonKey::kLeave);
      break;
  }
}

void MainWindow::DrawMenu(App& app, UiPrefs& prefs, bool& style_changed) {
  if (!ImGui::BeginMainMenuBar()) return;
  const auto item = [&](const char* label, Action action, bool selected = false) {
    if (ImGui::MenuItem(label, shortcut(action), selected)) {
      Perform(action, app, prefs);
      style_changed = true;
    }
  };
  if (ImGui::BeginMenu("File")) {
    sessions.DrawItems(app, prefs);
    ImGui::Separator();
    item("Save screenshot", Action::kScreenshot);
    if (ImGui::MenuItem("Export view\xE2\x80\xA6")) export_view.open_requested = true;
    if (!back_label.empty() && ImGui::MenuItem((std::string("Back to ") + back_label).c_str()))
      wants_back = true;
    item("Quit", Action::kQuit);
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
      std::string label = p.word + "  (" + p.sense1 + " / " + p.sense2 + ")";
      if (ImGui::MenuItem(label.c_str())) app.apply_preset(p);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s", p.text1.c_str(), p.text2.c_str());
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Light (projector) theme", nullptr, prefs.light_theme)) {
      prefs.light_theme = !prefs.light_theme;
      style_changed = true;
    }
    item("Larger text", Action::kFontLarger);
    item("Smaller text", Action::kFontSmaller);
    item("Left panel", Action::kTogglePanel, prefs.left_panel);
    item("Focus the view under the pointer", Action::kFocusView, prefs.focus_slot >= 0);
    item("Fullscreen", Action::kFullscreen, prefs.fullscreen);
    item("Guided lesson (presentation)", Action::kLesson, app.state.lesson_mode.active);
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
    ImGui::TextUnformatted("Double-click a view's title (or press F over it) to fill the window.");
    ImGui::Separator();
    if (ImGui::BeginTable("##keys", 2)) {
      for (const KeyBinding& b : key_bindings()) {
        if (!b.what) continue;  // another key for an action already listed
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(b.keys);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(b.what);
      }
      ImGui::EndTable();
    }
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

void MainWindow::NoteHover(int slot, ViewId view) {
  hovered_slot_now = slot;
  hovered_view_now = view;
}

bool MainWindow::PaneTitle(ViewContext& ctx, ViewId view, const std::string& title, bool focused) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const char* button = focused ? "Back (Esc)" : "Focus (F)";
  const float button_w = ImGui::CalcTextSize(button).x + style.FramePadding.x * 2;
  const float room = ImGui::GetContentRegionAvail().x - button_w - style.ItemSpacing.x;
  const std::string shown = fit_text(title, room);  // one line: a number never breaks
  text_dim("%s", shown.c_str());
  bool request = ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left);
  if (shown != title && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", title.c_str());
  ImGui::SameLine(std::max(0.0f, ImGui::GetWindowContentRegionMax().x - button_w));
  const std::string id = std::string(button) + "##" + view_name(view) + std::to_string(ctx.slot);
  request |= ImGui::SmallButton(id.c_str());
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(focused ? "back to every view (Esc)"
                              : "this view fills the window (F; double-click a title)");
  return request;
}

void MainWindow::DrawView(ViewId view, ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size) {
  switch (view) {
    case ViewId::kHeatmap:
      if (seq2seq[ctx.slot].shows_decoder(ctx))
        seq2seq[ctx.slot].DrawHeatmap(ctx, size);
      else
        heatmaps[ctx.slot].Draw(ctx, renderer, size);
      break;
    case ViewId::kArcs:
      if (seq2seq[ctx.slot].shows_decoder(ctx))
        seq2seq[ctx.slot].DrawArcs(ctx, size);
      else
        arcs[ctx.slot].DrawArcDiagram(ctx, size);
      break;
    case ViewId::kLines:
      if (seq2seq[ctx.slot].shows_decoder(ctx))
        seq2seq[ctx.slot].DrawArcs(ctx, size);
      else
        arcs[ctx.slot].DrawColumns(ctx, size);
      break;
    case ViewId::kMeaning:
      meanings[ctx.slot].Draw(ctx);
      break;
    case ViewId::kFormula:
      formulas[ctx.slot].Draw(ctx);
      break;
    case ViewId::kLens:
      lenses[ctx.slot].Draw(ctx);
      break;
    case ViewId::kModel:
      model_view.Draw(ctx, renderer, size);
      break;
    case ViewId::kCount:
      break;
  }
}

void MainWindow::DrawTargetBox(App& app, int slot) {
  SlotState& s = app.state.slots[slot];
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().accent),
                     "Target (optional \xE2\x80\x94 empty: the model's own translation)");
  ImGui::SetNextItemWidth(-1);
  if (sentence_box(slot == 0 ? "##target0" : "##target1", "the model's own translation",
                   s.target)) {
    app.submit(slot);
    app.state.focus.active_slot = slot;
  }
}

void MainWindow::DrawHeader(App& app, ViewContext& ctx, const Rect& rect) {
  AppState& st = app.state;
  const int slot = ctx.slot;
  SlotState& s = st.slots[slot];
  const ThemeColors& colors = theme_colors();
  // It scrolls only when its content (measured last frame) is taller than its place.
  begin_pane(slot_id("header", slot).c_str(), rect,
             header_h[slot] > rect.h + 0.5f ? 0 : ImGuiWindowFlags_NoScrollbar, false);
  // "Sentence 1 (river)" before its box, on one line.
  ImGui::AlignTextToFramePadding();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.accent), "Sentence %d", slot + 1);
  if (!s.label.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.text_dim), "(%s)", s.label.c_str());
  }
  ImGui::SameLine();
  if (focus_text_box == slot) {
    ImGui::SetKeyboardFocusHere();
    focus_text_box = -1;
  }
  ImGui::SetNextItemWidth(-1);
  SentenceBoxDrawn box;  // shaped: Arabic joined and right to left, also while it is edited
  if (sentence_box(slot == 0 ? "##text0" : "##text1", "type a sentence", s.text, &box)) {
    s.label.clear();
    app.submit(slot);
    st.focus.active_slot = slot;
  }
  text_box_active[slot] = box.editing;
  text_box_layout[slot] = sentence_box_json(box, ctx.pixel_scale);
  if (st.model_info.capabilities.cross_attention) DrawTargetBox(app, slot);
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
  sentences[slot].Draw(ctx, width, false);
  seq2seq[slot].DrawSentences(ctx, width);  // encoder–decoders: both sentences, the translation
  timelines[slot].Draw(app, ctx, width);
  header_h[slot] = ImGui::GetCursorPosY() + kPanePadding;  // the next frame's layout
  if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) st.focus.active_slot = slot;
  ImGui::EndChild();
}

void MainWindow::DrawHeatmapPane(ViewContext& ctx, ColormapRenderer& renderer, UiPrefs& prefs,
                                 const Rect& rect) {
  begin_pane(slot_id("heatmap", ctx.slot).c_str(), rect, ImGuiWindowFlags_NoScrollbar);
  // The title states what is drawn: head or aggregate, hidden sinks, log colours, queries.
  std::string title = ctx.shown ? ctx.shown->title + " \xC2\xB7 rows: queries, columns: keys"
                      : ctx.shown_pending ? "computing\xE2\x80\xA6"
                                          : "(nothing to show)";
  if (ctx.shown && ctx.shown_pending)  // a long trace's head is being computed off the UI thread
    title = "computing the new choice\xE2\x80\xA6 (this is the previous one) \xC2\xB7 " + title;
  // Interventions (issue 27): this head switched off, edges cut in this sentence.
  if (const auto& r = ctx.app.slots[ctx.slot].result; r && !r->interventions.empty()) {
    const AppState& st = ctx.app;
    if (st.shown.aggregate.empty() && r->interventions.ablates(st.layer, st.head))
      title = "SWITCHED OFF \xC2\xB7 " + title;
    title += " \xC2\xB7 with ";
    title += interventions_summary(r->interventions, 3);
  }
  if (seq2seq[ctx.slot].shows_decoder(ctx)) title = seq2seq[ctx.slot].title(ctx);
  if (PaneTitle(ctx, ViewId::kHeatmap, title, false))
    prefs.focus_slot = ctx.slot, prefs.focus_view = ViewId::kHeatmap;
  seq2seq[ctx.slot].DrawSelector(ctx);  // encoder–decoders: which attention, the decoder's head
  DrawView(ViewId::kHeatmap, ctx, renderer, ImGui::GetContentRegionAvail());
  if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) {
    NoteHover(ctx.slot, ViewId::kHeatmap);
    ctx.app.focus.active_slot = ctx.slot;
  }
  ImGui::EndChild();
}

void MainWindow::DrawRegion(ViewContext& ctx, ColormapRenderer& renderer, UiPrefs& prefs,
                            const TabRegion& region, int index) {
  begin_pane(slot_id("region", ctx.slot, index).c_str(), region.rect, ImGuiWindowFlags_NoScrollbar);
  ViewId shown = region.views.front();
  if (ImGui::BeginTabBar(slot_id("tabs", ctx.slot, index).c_str())) {
    for (ViewId v : region.views) {
      ImGuiTabItemFlags flags = 0;
      if (prefs.select_tabs && prefs.tabs.count(v)) flags |= ImGuiTabItemFlags_SetSelected;
      const std::string label = std::string(view_tab_title(v, ctx)) + "##" + view_name(v);
      const bool open = ImGui::BeginTabItem(label.c_str(), nullptr, flags);
      if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
        prefs.focus_slot = ctx.slot, prefs.focus_view = v;
      if (!open) continue;
      shown = v;
      panes_drawn_now += std::to_string(ctx.slot) + view_name(v) + ";";
      // Numbers and matrices scroll sideways; the pictures fit their pane.
      const bool scrolls = v == ViewId::kFormula || v == ViewId::kMeaning || v == ViewId::kLens;
      ImGui::BeginChild(
          "##content", ImVec2(0, 0), false,
          scrolls ? ImGuiWindowFlags_HorizontalScrollbar : ImGuiWindowFlags_NoScrollbar);
      DrawView(v, ctx, renderer, ImGui::GetContentRegionAvail());
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    for (ViewId v : region.views) prefs.tabs.erase(v);  // this region's choice, for sessions
    prefs.tabs.insert(shown);
    if (ImGui::TabItemButton("Focus (F)", ImGuiTabItemFlags_Trailing))
      prefs.focus_slot = ctx.slot, prefs.focus_view = shown;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("this view fills the window (F; Esc: back)");
    ImGui::EndTabBar();
  }
  if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) {
    NoteHover(ctx.slot, shown);
    ctx.app.focus.active_slot = ctx.slot;
  }
  ImGui::EndChild();
  if (ctx.layout) {
    nlohmann::json views = nlohmann::json::array();
    for (ViewId v : region.views) views.push_back(view_name(v));
    window_layout["regions"].push_back({{"slot", ctx.slot},
                                        {"index", index},
                                        {"views", views},
                                        {"selected", view_name(shown)},
                                        {"box", rect_json(region.rect, ctx.pixel_scale)}});
  }
}

void MainWindow::DrawFocused(App& app, ViewContext& ctx, ColormapRenderer& renderer, UiPrefs& prefs,
                             const Rect& rect) {
  const ViewId view = prefs.focus_view;
  panes_drawn_now += std::string("focus:") + view_name(view) + std::to_string(ctx.slot) + ";";
  begin_pane("##focused", rect, ImGuiWindowFlags_NoScrollbar);
  std::string title =
      std::string(view_tab_title(view, ctx)) + " \xC2\xB7 sentence " + std::to_string(ctx.slot + 1);
  if (ctx.shown && (view == ViewId::kHeatmap || view == ViewId::kArcs || view == ViewId::kLines))
    title += " \xC2\xB7 " + (seq2seq[ctx.slot].shows_decoder(ctx) ? seq2seq[ctx.slot].title(ctx)
                                                                  : ctx.shown->title);
  if (PaneTitle(ctx, view, title, true)) prefs.focus_slot = -1;
  const bool scrolls =
      view == ViewId::kFormula || view == ViewId::kMeaning || view == ViewId::kLens;
  ImGui::BeginChild("##content", ImVec2(0, 0), false,
                    scrolls ? ImGuiWindowFlags_HorizontalScrollbar : ImGuiWindowFlags_NoScrollbar);
  DrawView(view, ctx, renderer, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
  if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) NoteHover(ctx.slot, view);
  ImGui::EndChild();
  (void)app;
}

void MainWindow::DrawExplorer(App& app, const Fonts& fonts, ColormapRenderer& renderer,
                              UiPrefs& prefs, nlohmann::json* layout, float scale, float status_h) {
  AppState& st = app.state;
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGuiViewport* vp = ImGui::GetMainViewport();
  const float font = ImGui::GetFontSize();
  const int sentences = st.show_second ? 2 : 1;
  if (prefs.focus_slot >= sentences) prefs.focus_slot = -1;  // that sentence was closed
  const bool focus_model = prefs.focus_slot >= 0 && prefs.focus_view == ViewId::kModel;
  if (focus_model && !st.model_view) prefs.focus_slot = -1;
  if (prefs.focus_slot >= 0 && !focus_model && st.model_view) prefs.focus_slot = -1;

  LayoutInput in;
  in.work = {vp->WorkPos.x, vp->WorkPos.y, vp->WorkSize.x, vp->WorkSize.y - status_h};
  in.window_h = vp->Size.y;
  in.font = font;
  in.base_font = font / std::max(0.1f, prefs.font_scale);
  in.sidebar = prefs.left_panel;
  in.sentences = sentences;
  in.top_strip = ImGui::GetFrameHeight() + style.ItemSpacing.y;  // "Sentences | Model view"
  in.focus_slot = prefs.focus_slot;
  in.focus_view = prefs.focus_view;
  const float title_h = ImGui::GetFrameHeight() + style.ItemSpacing.y;
  for (int s = 0; s < sentences; ++s) {
    ViewContext ctx = make_context(app, fonts, s, nullptr, scale, shown_cache[s]);
    const HeatmapChrome c = heatmaps[s].Chrome(ctx);
    in.chrome_w[s] = c.width() + 2 * kPanePadding + 2;
    in.chrome_h[s] = c.height() + title_h + 2 * kPanePadding + 2;
    in.header_h[s] = header_h[s];
  }
  ExplorerLayout L = layout_explorer(in);
  if (L.content_h > L.main.h + 1) {  // the sentences scroll: keep clear of the scrollbar
    in.work.w -= style.ScrollbarSize;
    L = layout_explorer(in);
  }
  if (layout) {
    nlohmann::json panes = nlohmann::json::array();
    for (size_t s = 0; s < L.slots.size(); ++s)
      panes.push_back({{"slot", s},
                       {"header", rect_json(L.slots[s].header, scale)},
                       {"heatmap", rect_json(L.slots[s].heatmap, scale)},
                       {"beside", L.slots[s].beside},
                       {"grid_side", L.slots[s].grid_side * scale}});
    window_layout = {{"sidebar", rect_json(L.sidebar, scale)},
                     {"main", rect_json(L.main, scale)},
                     {"side_by_side", L.side_by_side},
                     {"focus", L.focus},
                     {"focus_view", L.focus ? view_name(prefs.focus_view) : ""},
                     {"focus_slot", prefs.focus_slot},
                     {"focus_box", rect_json(L.focus_rect, scale)},
                     {"font_scale", prefs.font_scale},
                     {"font_size", font * scale},
                     {"slots", panes},
                     {"regions", nlohmann::json::array()}};
  }

  if (L.focus) {
    ImGui::SetNextWindowPos(top_left(L.main));
    ImGui::SetNextWindowSize(extent(L.main));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::Begin("##main", nullptr, kPanelFlags);
    ImGui::PopStyleVar();
    ViewContext ctx =
        make_context(app, fonts, prefs.focus_slot, layout, scale, shown_cache[prefs.focus_slot]);
    DrawFocused(app, ctx, renderer, prefs, L.focus_rect);
    ImGui::End();
    return;
  }
  if (!L.sidebar.empty()) {
    ImGui::SetNextWindowPos(top_left(L.sidebar));
    ImGui::SetNextWindowSize(extent(L.sidebar));
    ImGui::Begin("##controls", nullptr, kPanelFlags & ~ImGuiWindowFlags_NoScrollbar);
    controls.Draw(app, prefs);
    if (controls.requested_screenshot) wants_screenshot = true;
    ImGui::End();
  }
  const Rect main_area{L.main.x, L.main.y - in.top_strip, L.main.w, L.main.h + in.top_strip};
  ImGui::SetNextWindowPos(top_left(main_area));
  ImGui::SetNextWindowSize(extent(main_area));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::Begin("##main", nullptr, kPanelFlags);
  ImGui::PopStyleVar();
  ImGui::SetCursorScreenPos(ImVec2(main_area.x + font * 0.4f, main_area.y + 2));
  model_view_shown = DrawPanelTabs(app);
  panes_drawn_now += model_view_shown ? "model;" : "sentences;";
  if (model_view_shown) {
    const int slot = st.show_second ? std::clamp(st.model_view_slot, 0, 1) : 0;
    ViewContext ctx = make_context(app, fonts, slot, layout, scale, shown_cache[slot]);
    // Its own header says what it shows; F (or View → Focus) lets it fill the window.
    begin_pane("##model", L.main, ImGuiWindowFlags_NoScrollbar, false);
    DrawView(ViewId::kModel, ctx, renderer, ImGui::GetContentRegionAvail());
    ImGui::EndChild();
    ImGui::End();
    return;
  }
  // The sentences scroll when the window is too small for their grids (two at 800x600): the
  // panes are placed in a child the size of the main area, shifted by its scroll.
  ImGui::SetCursorScreenPos(top_left(L.main));
  const bool scrolls = L.content_h > L.main.h + 1;  // then the layout left room for the bar
  ImGui::BeginChild(
      "##slots", ImVec2(L.main.w + (scrolls ? style.ScrollbarSize : 0), std::max(1.0f, L.main.h)),
      false, scrolls ? 0 : ImGuiWindowFlags_NoScrollbar);
  const float dy = -ImGui::GetScrollY();
  const auto shifted = [dy](Rect r) {
    r.y += dy;
    return r;
  };
  for (int s = 0; s < static_cast<int>(L.slots.size()); ++s) {
    const SlotLayout& slot = L.slots[s];
    ViewContext ctx = make_context(app, fonts, s, layout, scale, shown_cache[s]);
    DrawHeader(app, ctx, shifted(slot.header));
    DrawHeatmapPane(ctx, renderer, prefs, shifted(slot.heatmap));
    for (int r = 0; r < static_cast<int>(slot.regions.size()); ++r) {
      TabRegion region = slot.regions[r];
      region.rect = shifted(region.rect);
      DrawRegion(ctx, renderer, prefs, region, r);
    }
  }
  ImGui::SetCursorPos(ImVec2(0, L.content_h - 1));  // the scrolled content's extent
  ImGui::Dummy(ImVec2(1, 1));
  ImGui::EndChild();
  prefs.select_tabs = false;  // applied (ImGui selects a tab the frame its flag is given)
  ImGui::End();
}

bool MainWindow::Draw(App& app, const Fonts& fonts, ColormapRenderer& renderer, UiPrefs& prefs,
                      float frame_ms, nlohmann::json* layout, float scale) {
  bool style_changed = false;
  DrawMenu(app, prefs, style_changed);
  sessions.DrawPopups(app, prefs);
  lesson_shown = app.state.lesson_mode.active;
  // The status bar grows upwards over the panels with a long message: leave it that room.
  const float status_h = std::max(ImGui::GetFontSize() + 8, status.height());
  hovered_slot_now = -1;
  if (app.state.lesson_mode.active)
    DrawLesson(app, fonts, layout, scale), panes_drawn_now = "lesson";
  else
    DrawExplorer(app, fonts, renderer, prefs, layout, scale, status_h);
  hovered_slot = hovered_slot_now, hovered_view = hovered_view_now;
  settle_frames = panes_drawn_now != panes_drawn ? 3 : std::max(0, settle_frames - 1);
  panes_drawn = std::move(panes_drawn_now);
  panes_drawn_now.clear();
  status.Draw(app, frame_ms, ImGui::GetFontSize() + 8);  // one line's height; it grows itself
  if (!app.state.lesson_mode.active) export_view.Draw(app, prefs, "");
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
  const float status_h = std::max(ImGui::GetFontSize() + 8, status.height());
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(ImVec2(vp->WorkSize.x, vp->WorkSize.y - status_h));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(24, 14));
  ImGui::Begin("##lesson", nullptr, kPanelFlags | ImGuiWindowFlags_NoScrollbar);
  lesson.Draw(app, fonts, layout, scale);
  ImGui::End();
  ImGui::PopStyleVar();
}

}  // namespace attnscope
