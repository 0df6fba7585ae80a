#include "app/session_io.h"

#include <algorithm>

#include "app/lesson/lesson_steps.h"
#include "app/ui/colormap.h"
#include "core/model/intervention.h"
#include "core/trace/trace_model.h"

namespace attnscope {

Session capture_session(const App& app, const UiPrefs& prefs) {
  const AppState& st = app.state;
  const LessonMode& lesson = st.lesson_mode;
  Session s;
  // In the lesson, the step's own options are temporary: save what the explorer had.
  s.model = lesson.active ? (lesson.saved_model_spec.empty() ? "lesson" : lesson.saved_model_spec)
                          : st.model_spec;
  // A stored trace (`view FILE`, a dropped trace) is saved as "trace:" and its file's path.
  const Model* model = lesson.active ? lesson.saved_model.get() : st.model.get();
  if (const auto* stored = dynamic_cast<const TraceModel*>(model)) {
    s.model = std::string(kTraceSpecPrefix) +
              (stored->path().empty() ? stored->source() : stored->path().string());
  }
  s.backend = st.backend_choice;
  s.lesson = lesson.active ? lesson.saved_options : st.lesson;
  for (int i = 0; i < kSessionSlots; ++i) {
    s.texts[i].text = st.slots[i].text;
    s.texts[i].target = st.slots[i].target;
    s.texts[i].label = st.slots[i].label;
    s.texts[i].selected_token = st.slots[i].locked_token;
    s.texts[i].selected_queries = st.slots[i].selected_queries;
    s.texts[i].knockout = format_knockouts(st.slots[i].knockouts);
    const GenerationOptions& g = st.slots[i].generation;
    s.texts[i].generate_tokens = g.max_new_tokens;
    s.texts[i].temperature = g.temperature;
    s.texts[i].top_k = g.top_k;
    s.texts[i].seed = static_cast<std::int64_t>(g.seed);
  }
  s.show_second = st.show_second;
  if (lesson.active) {
    s.texts[1].text = lesson.saved_text2;
    s.texts[1].label = lesson.saved_label2;
    s.texts[1].selected_token = -1;
    s.show_second = lesson.saved_show_second;
  }
  s.mode = lesson.active ? "lesson" : "explore";
  s.layer = st.layer;
  s.head = st.head;
  s.active_slot = std::clamp(st.focus.active_slot, 0, kSessionSlots - 1);
  s.lesson_step = lesson.step;
  s.lesson_unscaled = lesson.unscaled;
  s.lesson_predict = lesson.predict;
  s.theme = prefs.light_theme ? "light" : "dark";
  s.colormap = colormaps()[st.colormap].name;
  s.fixed_range = st.fixed_range;
  s.font_scale = prefs.font_scale;
  s.left_panel = prefs.left_panel;
  s.top_k = st.top_k;
  s.focus_view = prefs.focus_slot >= 0 ? view_name(prefs.focus_view) : "";
  s.focus_slot = std::max(0, prefs.focus_slot);
  for (ViewId v : prefs.tabs) s.tabs.push_back(view_name(v));
  s.panel = st.model_view ? "model" : "sentences";
  s.aggregate = st.shown.aggregate;
  s.hide_first = st.shown.hide_first;
  s.hide_special = st.shown.hide_special;
  s.query_combine = st.shown.query_sum ? "sum" : "mean";
  s.weighting = st.shown.value_weighted ? "value-norm" : "raw";
  s.log_scale = st.shown.log_scale;
  s.log_floor = st.shown.log_floor;
  s.overlay = st.overlay;
  s.overlay_heads = st.overlay_heads;
  s.model_sort = st.model_sort;
  s.model_filter = st.model_filter;
  s.model_filter_min = st.model_filter_min;
  s.ablate = format_head_list(st.interventions.ablated);
  s.ablate_mode = ablation_mode_name(st.interventions.mode);
  s.model_marks = st.model_colour;
  s.target = st.interventions.target;
  return s;
}

void apply_session(App& app, UiPrefs& prefs, const Session& s) {
  // Check first, change after.
  const auto& maps = colormaps();
  auto map = std::find_if(maps.begin(), maps.end(),
                          [&](const Colormap& c) { return c.name == s.colormap; });
  if (map == maps.end()) {
    std::string names;
    for (const Colormap& c : maps) names += (names.empty() ? "\"" : " or \"") + c.name + "\"";
    throw SessionError("key \"display.colormap\": expected " + names + ", found \"" + s.colormap +
                       "\"");
  }

  AppState& st = app.state;
  if (st.lesson_mode.active) leave_lesson(app);
  prefs.light_theme = s.theme == "light";
  prefs.font_scale = s.font_scale;
  prefs.left_panel = s.left_panel;
  st.top_k = s.top_k;
  prefs.focus_slot = -1;
  if (ViewId view; !s.focus_view.empty() && parse_view_name(s.focus_view, view))
    prefs.focus_slot = s.focus_slot, prefs.focus_view = view;
  // The tabs it chose; a session from before tabs that overlays heads shows the lines.
  prefs.tabs.clear();
  for (const std::string& name : s.tabs)
    if (ViewId view; parse_view_name(name, view)) prefs.tabs.insert(view);
  if (s.tabs.empty() && s.overlay) prefs.tabs.insert(ViewId::kLines);
  prefs.select_tabs = !prefs.tabs.empty();
  st.colormap = static_cast<int>(map - maps.begin());
  st.fixed_range = s.fixed_range;
  st.show_second = s.show_second;
  for (int i = 0; i < kSessionSlots && s.has_texts; ++i) {
    SlotState& slot = st.slots[i];
    slot.text = s.texts[i].text;
    slot.target = s.texts[i].target;
    slot.label = s.texts[i].label;
    slot.locked_token = s.texts[i].selected_token;  // kept in range when the trace arrives
    slot.selected_queries = s.texts[i].selected_queries;
    slot.knockouts.clear();  // checked by read_session
    if (!s.texts[i].knockout.empty()) slot.knockouts = parse_knockouts(s.texts[i].knockout);
    slot.preferred_word.clear();
    slot.generation.max_new_tokens = s.texts[i].generate_tokens;
    slot.generation.temperature = s.texts[i].temperature;
    slot.generation.top_k = s.texts[i].top_k;
    slot.generation.seed = static_cast<std::uint64_t>(s.texts[i].seed);
  }
  st.layer = s.layer;  // clamped to the model once it is open
  st.head = s.head;
  st.focus.active_slot = s.active_slot;
  st.model_view = s.panel == "model";
  st.model_view_slot = s.active_slot;
  st.shown.aggregate = s.aggregate;
  st.shown.hide_first = s.hide_first;
  st.shown.hide_special = s.hide_special;
  st.shown.query_sum = s.query_combine == "sum";
  st.shown.value_weighted = s.weighting == "value-norm";
  st.shown.log_scale = s.log_scale;
  st.shown.log_floor = s.log_floor;
  st.overlay = s.overlay;
  st.overlay_heads = s.overlay_heads;
  std::sort(st.overlay_heads.begin(), st.overlay_heads.end());
  st.model_sort = s.model_sort;
  st.model_filter = s.model_filter;
  st.model_filter_min = s.model_filter_min;
  st.model_colour = s.model_marks;
  st.interventions.ablated.clear();
  if (!s.ablate.empty()) st.interventions.ablated = parse_head_list(s.ablate);
  st.interventions.mode = s.ablate_mode == "mean" ? AblationMode::kMean : AblationMode::kZero;
  st.interventions.target = s.target;
  st.interventions.target_input = s.target >= 0 ? std::to_string(s.target) : "";
  app.keep_interventions_for_next_model();  // the session's model, once it loads
  st.lesson = s.lesson;
  st.lesson_mode.unscaled = s.lesson_unscaled;
  st.lesson_mode.predict = s.lesson_predict;
  if (st.backend_choice != s.backend) app.choose_backend(s.backend);
  if (s.mode == "lesson") {
    st.model_spec = s.model;  // restored when the lesson ends
    enter_lesson(app, s.lesson_step);
    st.lesson_mode.saved_model_spec = s.model;
  } else {
    st.lesson_mode.step = s.lesson_step;
    if (s.model.rfind(kTraceSpecPrefix, 0) == 0)
      app.open_trace(s.model.substr(std::string(kTraceSpecPrefix).size()));
    else
      app.open_model(s.model);  // the lesson model is rebuilt with the session's options
  }
}

bool open_session_file(App& app, UiPrefs& prefs, const std::string& path) {
  try {
    Session s = read_session(path);
    try {
      apply_session(app, prefs, s);
    } catch (const SessionError& e) {
      throw SessionError("session '" + path + "': " + e.what());
    }
    app.state.session_path = path;
    app.state.message = "opened session " + path;
    app.state.message_is_error = false;
    return true;
  } catch (const std::exception& e) {
    app.state.message = e.what();
    app.state.message_is_error = true;
    return false;
  }
}

bool save_session_file(App& app, const UiPrefs& prefs, const std::string& path) {
  try {
    write_session(path, capture_session(app, prefs));
    app.state.session_path = path;
    app.state.message = "saved session " + path;
    app.state.message_is_error = false;
    return true;
  } catch (const std::exception& e) {
    app.state.message = e.what();
    app.state.message_is_error = true;
    return false;
  }
}

}  // namespace attnscope
