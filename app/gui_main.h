#pragma once
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "app/ui/layout.h"

namespace attnscope {

class Model;

struct GuiOptions {
  std::string model = "lesson";
  // A model already opened (`view FILE`: the stored trace, read and validated before the window
  // opens); shown under the label `model`. Null: open `model` as a spec.
  std::shared_ptr<const Model> model_instance;
  std::optional<std::string> text;   // first sentence; default: the "bank" example
  std::optional<std::string> text2;  // second sentence (shown side by side)
  // Encoder–decoders: the first sentence's target (empty or absent: the model's own translation).
  std::optional<std::string> target;
  std::string backend = "auto";
  std::string screenshot;   // non-empty: render, write this PNG, exit
  int scale = 1;            // screenshot scale: 1, 2 or 4
  int frames = 3;           // frames rendered before the screenshot
  std::string layout_file;  // optional JSON of where cells/labels were drawn (tests)
  std::string window_size;  // "WIDTHxHEIGHT" in screen units; empty: remembered or 1600x1000
  std::string theme;        // "dark" | "light"; empty: remembered
  std::string weighting;    // "raw" | "value-norm" (Show → weighted by ‖value‖); empty: as is
  float font_scale = 0;     // the presentation scale (0.5..2.5); 0: remembered
  // Heads switched off and sentence 1's edges cut at start (--ablate, --ablate-mode, --knockout;
  // core/model/intervention.h's syntax), as Alt+click and Ctrl+click would.
  std::string ablate, ablate_mode, knockout;
  // Start with this view of sentence `focus_slot` filling the window (--focus VIEW[:SENTENCE]).
  std::optional<ViewId> focus;
  int focus_slot = 0;
  bool hide_panel = false;  // start with the left panel hidden (--no-panel)
  std::set<ViewId> tabs;    // select these views' tabs at start (--tabs formula,lines)
  // Testing aid (hidden option): once the first traces are shown, clear sentence 1, focus its text
  // box and type these characters through ImGui's input queue, one per frame; with --layout the
  // published trace is reported at exit.
  std::string type_keys;
  // Testing aid (hidden option): in a headless run, the pointer rests at this point ("X,Y" in
  // screen units), so hover effects (tooltip, focus) show up in the screenshot and layout.
  std::string hover;
  // Testing aid (hidden option): at the end of a headless run, File > Export view… writes the
  // view `export_view_as` (a figure view: heatmap, lines, arcs …) of sentence 1 to this file
  // (.svg, .pdf or .png), as the window shows it.
  std::string export_view;
  std::string export_view_as = "heatmap";
  std::string session;  // a session file to open (`--session FILE`)
  int lesson_step = 0;  // 1..8: start in the guided lesson at this step (`--lesson [STEP]`)
  // Do not serve the trace socket scripts hand this window traces through (app/ipc/).
  bool no_socket = false;
  // Testing aids (hidden options): once the traces are shown, press these keys one by one
  // ("pagedown,right,u,…"; each waits for the recompute it causes), and open this path as if it
  // had been dropped on the window.
  std::string keys;
  std::string drop;
  // Testing aid (hidden option): sentence 1's heatmap zoomed and panned, "ZOOM,ROW,COL[,DROW,DCOL]"
  // (the last two: cells panned every frame, for the frame-time benchmark).
  std::string heatmap_view;
  // Testing aid (hidden option): once the traces are shown, press Generate on sentence 1 with this
  // many new tokens (greedy); scripted keys wait until the generation ended.
  int generate = 0;
  // Testing aid (hidden option): once the traces are shown, focus sentence 1's text box (its text
  // kept, the cursor at its end) and create this file when the box has the keyboard, so a test
  // driving the visible window with real key events (xdotool) knows when to type.
  std::string ready_file;
  // Testing aid (hidden option): once the app settled (model loaded, traces shown), the number of
  // frames drawn since, rewritten after every frame. Scripts that drive the visible window with
  // real X events wait on it between events (a few frames each) instead of fixed sleeps, which a
  // machine busy with other work overruns.
  std::string frame_file;
};

// Opens the window (or renders headless for --screenshot). Returns the process exit code.
int run_gui(const GuiOptions& options);

}  // namespace attnscope
