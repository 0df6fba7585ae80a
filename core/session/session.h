#pragma once
// A session: what the app shows, saved to a `.attnscope` file and opened again (File → Save
// session / Open session, `attnscope --session FILE`, or dropped on the window). JSON:
//
//   {"format": "attnscope-session/1",
//    "model": "lesson", "backend": "auto",
//    "lesson": {"beta": 5, "mask_self": true, "scale": true, "causal": false,
//               "positional": false, "heads": 1, "mask_unknown": true, "head_design": "roles"},
//    "texts": [{"text": "…", "label": "river", "selected_token": 4}, {"text": "…"}],
//    "show_second": true,
//    "view": {"mode": "explore", "layer": 0, "head": 0, "active_slot": 0,
//             "lesson_step": 1, "lesson_unscaled": false, "lesson_predict": false},
//    "display": {"theme": "light", "colormap": "viridis", "fixed_range": false,
//                "font_scale": 1.0, "log_scale": false, "log_floor": 0.001}}
//
// What the views draw (issue 12), all optional: "view" may add "panel" ("sentences" | "model":
// the model view of every layer × head), "aggregate" ("" for one head, or a name of
// core/trace/aggregate.h: "mean", "max", "layers-mean", "rollout" …), "hide_first" and
// "hide_special" (booleans: those keys hidden, rows renormalised), "query_combine" ("mean" |
// "sum"), "overlay" (boolean) and "overlay_heads" (head indices of the lines view's overlay),
// "model_sort" and "model_filter" (a head summary key of core/analysis/head_summary.h, "" for the
// model's order / every head) and "model_filter_min" (the filter's threshold), "top_k" (the lines'
// and arcs' strongest keys per query, 1-20), "focus_view" ("" or the view filling the window:
// "heatmap", "arcs", "lines", "meaning", "formula", "model") and "focus_slot" (its sentence,
// 0-based), "tabs" (the views chosen in the tab regions: any of the focus_view names but "");
// "weighting" ("raw" | "value-norm": Show → weighted by ‖value‖, core/analysis/value_weighting.h);
// "ablate" (heads switched off, "3.2,1.0"), "ablate_mode" ("zero" | "mean"), "model_marks"
// ("" | "effect" | "dla"; "model_sort" may also be "effect" or "dla") and "target" (the token id
// effect and dla measure, -1: the top prediction); a text may add "knockout" (its cut edges,
// "2:5>1,2.3:5>1" as on the command line); "lens" is a view name too;
// "display" may add "left_panel" (the controls on the left shown); a text may add
// "selected_queries" (token indices, several selected queries) and "generation" (the Generate
// button's settings: {"tokens": N, "temperature": T, "top_k": K, "seed": S}).
//
// layer, head, selected_token and lesson_step are 0-based except lesson_step (1–8, as the lesson
// numbers its steps). Every key but "format" is optional (a missing one keeps its default);
// readers ignore keys they do not know. A session is untrusted input: read_session checks every
// key's type and range and throws SessionError naming the file, the key, what was expected and
// what was found, before anything is applied.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/model/lesson/lesson_model.h"
#include "core/util/error.h"

namespace attnscope {

inline constexpr const char* kSessionFormat = "attnscope-session/1";
inline constexpr int kSessionSlots = 2;
inline constexpr int kLessonSteps = 8;
// Limits that keep a hostile file from costing memory or time: the file size, each text's size,
// and the nesting depth of the JSON (a deeply nested document would exhaust the stack).
inline constexpr std::size_t kSessionMaxBytes = 4u << 20;
inline constexpr std::size_t kSessionMaxTextBytes = 1u << 20;
inline constexpr int kSessionMaxDepth = 16;

struct SessionError : Error {
  using Error::Error;
};

struct SessionText {
  std::string text;
  std::string label;                  // a preset's sense ("river"), may be empty
  int selected_token = -1;            // the clicked (locked) token, -1: none
  std::vector<int> selected_queries;  // several selected query tokens (may be empty)
  // The Generate button's settings (decoders); the defaults are the app's.
  int generate_tokens = 16;
  float temperature = 0.0f;   // 0: greedy
  int top_k = 0;              // 0: every token
  std::int64_t seed = 0;      // 0 to kSessionMaxSeed
  std::string knockout = "";  // edges cut in this text, as `predict --knockout` ("2:5>1,2.3:5>1")
  // Encoder–decoders: the target sentence the decoder reads ("": the model's own translation).
  std::string target = "";
};

struct Session {
  std::string model = "lesson";  // a model spec (shared/DESIGN.md): lesson, a folder, a repo id
  std::string backend = "auto";  // auto | cpu | cuda | opengl
  LessonOptions lesson;
  std::array<SessionText, kSessionSlots> texts;
  bool has_texts = true;  // false when the file has no "texts": the app keeps its sentences
  bool show_second = true;
  // View.
  std::string mode = "explore";  // explore | lesson
  int layer = 0, head = 0, active_slot = 0;
  int lesson_step = 1;           // 1..kLessonSteps
  bool lesson_unscaled = false;  // step 4: the "without ÷√d_k" toggle
  bool lesson_predict = false;   // "predict first": numbers hidden until revealed
  // Display.
  std::string theme = "dark";  // dark | light
  std::string colormap = "viridis";
  bool fixed_range = false;
  float font_scale = 1.0f;
  bool left_panel = true;
  int top_k = 5;                  // lines and arcs: each query's k strongest keys
  std::string focus_view;         // "" or the view filling the window (focus mode)
  int focus_slot = 0;             // its sentence
  std::vector<std::string> tabs;  // the views chosen in the tab regions (empty: the defaults)
  // What the views draw (app/views/shown_matrix.h).
  std::string panel = "sentences";  // sentences | model
  std::string aggregate;            // "": one head
  bool hide_first = false, hide_special = false;
  std::string query_combine = "mean";  // mean | sum
  std::string weighting = "raw";       // raw | value-norm
  bool log_scale = false;
  float log_floor = 1e-3f;
  bool overlay = false;            // the lines view overlays several heads
  std::vector<int> overlay_heads;  // which ones
  // The model view's sort and filter: head summary keys ("": model order / every head).
  std::string model_sort, model_filter;
  float model_filter_min = 0.5f;
  // What attention does (issue 27): heads switched off ("3.2,1.0", as `predict --ablate`), zero
  // or mean, the model view's marks ("" | "effect" | "dla"; model_sort may be either too) and the
  // target token id they measure (-1: the top prediction).
  std::string ablate, ablate_mode = "zero", model_marks;
  int target = -1;
};
inline constexpr std::size_t kSessionMaxSelectedQueries = 4096;
// The Generate button's ranges (the timeline view's controls and a session's "generation").
inline constexpr int kSessionMaxGenerateTokens = 512;
inline constexpr float kSessionMaxTemperature = 2.0f;
inline constexpr int kSessionMaxTopK = 1 << 20;
inline constexpr int kSessionMaxArcsTopK = 20;  // the lines' and arcs' top-k slider
inline constexpr std::int64_t kSessionMaxSeed = std::int64_t{1} << 30;

std::string session_to_json(const Session& session);
// Parses a session document; `file` names it in errors ("session 'x.attnscope': …").
Session parse_session(const std::string& document, const std::string& file);
// Reads and parses a file (refusing files over kSessionMaxBytes before reading them).
Session read_session(const std::filesystem::path& path);
// Writes atomically (core/util/atomic_file.h); throws Error when it cannot.
void write_session(const std::filesystem::path& path, const Session& session);

}  // namespace attnscope
