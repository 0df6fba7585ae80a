#include "app/testing/gui_script.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <utility>

#include <imgui.h>

#include "app/app.h"
#include "app/render/gl.h"  // glad before GLFW: the key codes
#include "app/session_io.h"
#include "app/ui/colormap.h"
#include "app/ui/fonts.h"
#include "app/ui/imgui_text.h"
#include "app/ui/main_window.h"
#include "core/util/error.h"

namespace attnscope {

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// What each slot shows: the layout file's "traces".
nlohmann::json traces_json(const App& app) {
  nlohmann::json out = nlohmann::json::array();
  for (int s = 0; s < kSlots; ++s) {
    const auto& r = app.state.slots[s].result;
    nlohmann::json t = {{"slot", s}, {"box_text", app.state.slots[s].text}};
    if (r) {
      t["error"] = r->error;
      t["text"] = r->text;
      if (r->trace) {
        nlohmann::json tokens = nlohmann::json::array();
        for (const Token& tok : r->trace->tokens) tokens.push_back(tok.text);
        t["tokens"] = tokens;
        t["trace_text"] = r->trace->text;
        t["compute_ms"] = r->trace->compute_ms;
        t["backend"] = r->trace->backend;                // the backend that computed it
        t["compact"] = r->trace->recomputed != nullptr;  // heads recomputed on demand
      }
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace

std::vector<KeyPress> parse_scripted_keys(const std::string& list) {
  static const std::pair<const char*, int> kNames[] = {{"pagedown", GLFW_KEY_PAGE_DOWN},
                                                       {"pageup", GLFW_KEY_PAGE_UP},
                                                       {"right", GLFW_KEY_RIGHT},
                                                       {"left", GLFW_KEY_LEFT},
                                                       {"up", GLFW_KEY_UP},
                                                       {"down", GLFW_KEY_DOWN},
                                                       {"home", GLFW_KEY_HOME},
                                                       {"end", GLFW_KEY_END},
                                                       {"space", GLFW_KEY_SPACE},
                                                       {"escape", GLFW_KEY_ESCAPE},
                                                       {"f5", GLFW_KEY_F5},
                                                       {"f12", GLFW_KEY_F12},
                                                       {"s", GLFW_KEY_S},
                                                       {"o", GLFW_KEY_O},
                                                       {"u", GLFW_KEY_U},
                                                       {"p", GLFW_KEY_P},
                                                       {"f", GLFW_KEY_F},
                                                       {"b", GLFW_KEY_B},
                                                       {"equal", GLFW_KEY_EQUAL},
                                                       {"minus", GLFW_KEY_MINUS}};
  std::vector<KeyPress> keys;
  std::string name;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] != ',') {
      name += list[i];
      continue;
    }
    if (name.empty()) continue;
    int mods = 0;
    std::string key = name;
    for (bool more = true; more;) {  // modifiers: shift+, ctrl+ (in any order)
      more = false;
      if (key.rfind("shift+", 0) == 0) mods |= GLFW_MOD_SHIFT, key = key.substr(6), more = true;
      if (key.rfind("ctrl+", 0) == 0) mods |= GLFW_MOD_CONTROL, key = key.substr(5), more = true;
    }
    int code = -1;
    for (const auto& [n, c] : kNames)
      if (key == n) code = c;
    if (code < 0) throw UsageError("--keys: unknown key '" + name + "'");
    keys.push_back({code, mods});
    name.clear();
  }
  return keys;
}

bool parse_heatmap_script(const std::string& text, HeatmapScript& out) {
  HeatmapScript s;
  char extra = 0;
  const int n = std::sscanf(text.c_str(), "%lf,%lf,%lf,%lf,%lf%c", &s.zoom, &s.row, &s.col,
                            &s.pan_rows, &s.pan_cols, &extra);
  if ((n != 3 && n != 5) || !(s.zoom >= 1.0) || !std::isfinite(s.row) || !std::isfinite(s.col))
    return false;
  out = s;
  return true;
}

std::vector<unsigned> code_points(const std::string& s) {
  std::vector<unsigned> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    unsigned cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; ok && k < n; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = (d & 0xC0) == 0x80;
      cp = (cp << 6) | (d & 0x3F);
    }
    out.push_back(ok ? cp : 0xFFFD);
    i += ok ? n : 1;
  }
  return out;
}

GuiScript::GuiScript(const GuiOptions& options)
    : type_keys_(options.type_keys),
      characters_(code_points(options.type_keys)),
      keys_(parse_scripted_keys(options.keys)),
      drop_(options.drop),
      generate_tokens_(options.generate),
      ready_file_(options.ready_file),
      ready_(options.ready_file.empty() ? Ready::kNone : Ready::kWaitSettle),
      frame_file_(options.frame_file),
      typing_(options.type_keys.empty() ? Typing::kNone : Typing::kWaitSettle),
      dropped_(options.drop.empty()),
      generated_(options.generate <= 0) {
  has_heatmap_script_ = parse_heatmap_script(options.heatmap_view, heatmap_);
}

void GuiScript::steer_views(const App& app, MainWindow& main_window) {
  if (!has_heatmap_script_) return;
  HeatmapView& view = main_window.heatmaps[0];
  const auto& r = app.state.slots[0].result;
  if (!heatmap_applied_) {
    if (!(r && r->trace)) return;
    view.viewport.zoom = heatmap_.zoom, view.viewport.row0 = heatmap_.row;
    view.viewport.col0 = heatmap_.col;
    heatmap_applied_ = true;
  } else if (view.rows > 0 && (heatmap_.pan_rows != 0 || heatmap_.pan_cols != 0)) {
    HeatmapViewport& v = view.viewport;
    const double before_r = v.row0, before_c = v.col0;
    v.row0 += heatmap_.pan_rows, v.col0 += heatmap_.pan_cols;
    v.clamp(view.rows, view.cols, view.max_zoom);
    if (v.row0 == before_r) heatmap_.pan_rows = -heatmap_.pan_rows;
    if (v.col0 == before_c) heatmap_.pan_cols = -heatmap_.pan_cols;
  }
}

void GuiScript::before_new_frame(ImGuiIO& io) {
  // Scripted typing: one character per frame into the focused text box.
  if (typing_ != Typing::kTyping) return;
  if (typed_ < static_cast<int>(characters_.size())) {
    const unsigned c = characters_[typed_++];
    if (!queue_typed_character(c)) io.AddInputCharacter(c);  // as our GLFW char callback does
    ++keys_injected_;
  } else {
    typing_ = Typing::kWaitPublish;
    typing_ms_ = ms_since(typing_started_);
  }
}

void GuiScript::inject(App& app, int frame, bool views_busy, std::vector<KeyPress>& presses,
                       std::vector<std::string>& dropped) {
  // Scripted keys and drops: once everything is computed (the views' off-thread work included),
  // one per settled frame.
  if (frame < 2 || !app.settled() || views_busy || app.load_progress().busy) return;
  if (!dropped_) {
    dropped.push_back(drop_);
    dropped_ = true;
  } else if (!generated_) {
    app.state.slots[0].generation.max_new_tokens = generate_tokens_;
    app.generate(0);
    generated_ = true;
  } else if (keys_pressed_ < keys_.size()) {
    presses.push_back(keys_[keys_pressed_++]);
  }
}

bool GuiScript::inputs_done() const {
  return (typing_ == Typing::kNone || typing_ == Typing::kDone) && keys_pressed_ == keys_.size() &&
         dropped_ && generated_ && (ready_ == Ready::kNone || ready_ == Ready::kDone);
}

void GuiScript::after_frame(App& app, MainWindow& main_window, int frame, double frame_ms) {
  if (typing_ == Typing::kTyping || typing_ == Typing::kWaitPublish)
    typing_frame_max_ = std::max(typing_frame_max_, frame_ms);
  if (!frame_file_.empty()) {
    if (settled_frames_ < 0 && app.settled() && frame >= 2) settled_frames_ = 0;
    if (settled_frames_ >= 0) {
      // Replaced whole (a reader never sees a half-written number).
      const std::string tmp = frame_file_ + ".tmp";
      std::ofstream(tmp) << ++settled_frames_ << "\n";
      std::rename(tmp.c_str(), frame_file_.c_str());
    }
  }
  if (ready_ == Ready::kWaitSettle && app.settled() && frame >= 2) {
    main_window.focus_text_box = 0;
    ready_ = Ready::kFocusing;
  } else if (ready_ == Ready::kFocusing && main_window.text_box_active[0]) {
    std::ofstream(ready_file_) << "ready\n";
    ready_ = Ready::kDone;
  }
  if (typing_ == Typing::kWaitSettle && app.settled() && frame >= 2) {
    app.set_text(0, "");  // start from an empty box, then type every character
    if (app.state.lesson_mode.active)
      main_window.lesson.focus_text_box = 0;
    else
      main_window.focus_text_box = 0;
    typing_ = Typing::kFocusing;
    jobs_before_ = app.computed_jobs();
  } else if (typing_ == Typing::kFocusing &&
             (app.state.lesson_mode.active ? main_window.lesson.text_box_active
                                           : main_window.text_box_active[0])) {
    typing_ = Typing::kTyping;
    keys_injected_ = 0;
    typing_started_ = Clock::now();
  } else if (typing_ == Typing::kWaitPublish) {
    ++frames_after_;
    const auto& r = app.state.slots[0].result;
    if (r && r->trace && r->text == app.state.slots[0].text && app.settled())
      typing_ = Typing::kDone;
  }
}

nlohmann::json GuiScript::typing_report(const App& app) const {
  return {{"typed", type_keys_},
          {"done", typing_ == Typing::kDone},
          {"keystroke_frames", keys_injected_},
          {"typing_ms", typing_ms_},
          {"frames_to_publish", frames_after_},
          {"frame_ms_max", typing_frame_max_},
          {"jobs_computed", app.computed_jobs() - jobs_before_}};
}

void write_layout_file(const std::string& path, const App& app, const UiPrefs& prefs,
                       const MainWindow& main_window, LayoutReport report, const GuiScript& script,
                       const GuiOptions& options) {
  std::sort(report.frame_times.begin(), report.frame_times.end());
  std::sort(report.ui_times.begin(), report.ui_times.end());
  const auto median = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  nlohmann::json doc = {
      {"format", "attnscope-layout/1"},
      {"scale", report.scale},
      {"width", report.width * report.scale},
      {"height", report.height * report.scale},
      {"theme", prefs.light_theme ? "light" : "dark"},
      {"colormap", colormaps()[app.state.colormap].name},
      {"frames", report.frames},
      {"frame_ms_median", median(report.frame_times)},
      {"ui_ms_median", median(report.ui_times)},
      {"ui_ms_max", report.ui_times.empty()
                        ? 0.0
                        : *std::max_element(report.ui_times.begin(), report.ui_times.end())},
      {"model", app.state.model ? app.state.model_info.name : ""},
      {"model_error", app.state.model_error},
      {"backend", app.state.backend ? app.state.backend->name() : ""},
      {"backend_note", app.state.backend_note},
      {"views", std::move(report.views)},
      {"traces", traces_json(app)},
      {"state", nlohmann::json::parse(session_to_json(capture_session(app, prefs)))},
      {"session_path", app.state.session_path},
      {"message", app.state.message},
      {"recent_sessions", main_window.sessions.recent},
      {"replace_asked", main_window.sessions.replace_asked()}};
  if (!options.type_keys.empty()) doc["typing"] = script.typing_report(app);
  // Font coverage: for every code point the app showed, the font file that drew it in the UI font
  // ("missing" when no font has it), and the atlas it went into.
  nlohmann::json glyphs = nlohmann::json::object(), faces = nlohmann::json::object();
  for (const Fonts::Source& s : Fonts::coverage()) {
    char key[16];
    std::snprintf(key, sizeof key, "U+%04X", s.code_point);
    glyphs[key] = s.file.empty() ? "missing" : s.file;
    if (!s.file.empty()) faces[key] = s.face_index;
  }
  doc["glyphs"] = std::move(glyphs);
  nlohmann::json boxes = nlohmann::json::array();
  for (const nlohmann::json& box : main_window.text_box_layout)
    boxes.push_back(box.is_null() ? nlohmann::json::object() : box);
  doc["text_boxes"] = std::move(boxes);           // the sentence boxes, in framebuffer pixels
  doc["status_bar"] = main_window.status.layout;  // its box, each item's text and box
  doc["window"] = main_window.window_layout;      // sidebar, panes, tab regions, focus mode
  doc["glyph_face_index"] = std::move(faces);
  const Fonts::AtlasStats atlas = Fonts::atlas_stats();
  doc["font_atlas"] = {{"width", atlas.width},
                       {"height", atlas.height},
                       {"glyphs", atlas.glyphs},
                       {"builds", atlas.builds},
                       {"last_build_ms", atlas.last_build_ms},
                       {"max_build_ms", atlas.max_build_ms}};
  std::ofstream out(path);
  out << doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  if (!out) throw Error("cannot write the layout file '" + path + "'");
}

}  // namespace attnscope
