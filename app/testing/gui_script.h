#pragma once
// The test harness of the GUI, apart from the frame loop: the hidden options that drive a headless
// run (--type-keys, --keys, --drop, --generate) as a small state machine the loop calls at fixed
// points of each frame, and the layout file (--layout, "attnscope-layout/1") written at the end.
// run_gui (app/gui_main.cpp) owns the window and the frame; this owns what a test scripted.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/gui_main.h"

struct ImGuiIO;

namespace attnscope {

class App;
struct MainWindow;
struct UiPrefs;

// A key press as GLFW reported it (key code, modifier bits).
struct KeyPress {
  int key;
  int mods;
};

// The keys of --keys ("pagedown,right,shift+left,u"), as GLFW key codes with modifiers; throws
// UsageError naming an unknown key.
std::vector<KeyPress> parse_scripted_keys(const std::string& list);

// The hidden --heatmap-view Z,ROW,COL[,DROW,DCOL] (a testing and benchmark aid): sentence 1's
// heatmap viewport once its trace is shown, and how many cells it pans every frame (bouncing at
// the edges, like a user sweeping across the matrix).
struct HeatmapScript {
  double zoom = 1.0, row = 0.0, col = 0.0, pan_rows = 0.0, pan_cols = 0.0;
};
// Parses "Z,ROW,COL[,DROW,DCOL]"; returns false when it is not that.
bool parse_heatmap_script(const std::string& text, HeatmapScript& out);

// Splits UTF-8 text into code points (invalid bytes become U+FFFD) for ImGui's input queue.
std::vector<unsigned> code_points(const std::string& s);

class GuiScript {
 public:
  explicit GuiScript(const GuiOptions& options);

  // Something scripted is still to happen: the loop must not sleep between frames.
  bool busy() const { return typing_ != Typing::kNone; }
  // How long an idle window waits for an event before it draws anyway: 0.5 s, or 0.05 s with
  // --frame-file, whose reader counts frames to know that the X events it sent were read (a
  // count the idle timer alone would take seconds to reach).
  double idle_wait_seconds() const { return frame_file_.empty() ? 0.5 : 0.05; }
  // Before ImGui::NewFrame: the next typed character, one per frame.
  void before_new_frame(ImGuiIO& io);
  // Before the views are drawn: steers sentence 1's heatmap (--heatmap-view).
  void steer_views(const App& app, MainWindow& main_window);
  // After App::update: once everything is computed, a dropped path, then --generate, then the next
  // scripted key, one per settled frame (`views_busy`: MainWindow::busy()).
  void inject(App& app, int frame, bool views_busy, std::vector<KeyPress>& presses,
              std::vector<std::string>& dropped);
  // Every scripted step has happened (the headless run may capture and exit).
  bool inputs_done() const;
  // After the frame was drawn: advances the typing state machine; `frame_ms` is this frame's time.
  void after_frame(App& app, MainWindow& main_window, int frame, double frame_ms);
  // The typing never reached a computed trace (a headless run then exits 1).
  bool typing_unfinished() const { return typing_ != Typing::kNone && typing_ != Typing::kDone; }

  // The "typing" object of the layout file (present only with --type-keys).
  nlohmann::json typing_report(const App& app) const;

 private:
  enum class Typing { kNone, kWaitSettle, kFocusing, kTyping, kWaitPublish, kDone };
  using Clock = std::chrono::steady_clock;

  std::string type_keys_;
  std::vector<unsigned> characters_;
  std::vector<KeyPress> keys_;
  std::string drop_;
  int generate_tokens_ = 0;  // --generate N (0: none)
  std::string ready_file_;   // --ready-file: written once sentence 1's box has the keyboard
  enum class Ready { kNone, kWaitSettle, kFocusing, kDone } ready_ = Ready::kNone;
  std::string frame_file_;  // --frame-file: frames drawn since the app settled
  long settled_frames_ = -1;

  Typing typing_ = Typing::kNone;
  int typed_ = 0, keys_injected_ = 0, frames_after_ = 0;
  Clock::time_point typing_started_ = Clock::now();
  double typing_ms_ = 0.0;         // from the first keystroke to the last
  double typing_frame_max_ = 0.0;  // the slowest frame from the first keystroke to the publish
  std::uint64_t jobs_before_ = 0;
  size_t keys_pressed_ = 0;
  bool dropped_ = true;
  bool generated_ = true;  // the --generate request was made (or none was asked for)
  bool has_heatmap_script_ = false, heatmap_applied_ = false;
  HeatmapScript heatmap_;
};

// Everything the layout file reports about the run besides the app's own state.
struct LayoutReport {
  int scale = 1, width = 0, height = 0, frames = 0;
  std::vector<double> frame_times, ui_times;  // ms: whole frame to the end of GL; UI build only
  nlohmann::json views;                       // what the views recorded in the last frame
};

// Writes the --layout file ("attnscope-layout/1"); throws Error when it cannot be written.
void write_layout_file(const std::string& path, const App& app, const UiPrefs& prefs,
                       const MainWindow& main_window, LayoutReport report, const GuiScript& script,
                       const GuiOptions& options);

}  // namespace attnscope
