#pragma once
// The application's non-GL core: state, the compute worker, the model loader, and the actions the
// controls call (open a model, change options, load a preset). The frame loop lives in
// gui_main.cpp, the drawing in ui/main_window.cpp and views/.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/app_state.h"
#include "app/model_loader.h"
#include "app/worker.h"
#include "core/model/lesson/lesson_model.h"
#include "core/model/registry.h"

namespace attnscope {

// The built-in example the app opens on.
inline constexpr const char* kDefaultText1 =
    "she sat on the bank of the river and watched the water";
inline constexpr const char* kDefaultText2 = "he went to the bank to deposit his money";

class App {
 public:
  AppState state;
  std::vector<ModelListing> models;  // list_models(), refreshed on demand
  std::vector<PresetPair> presets;   // lesson_presets() (empty when the asset is missing)
  std::string models_error;

  App();
  ~App() { cancel_download(); }  // a download in flight stops instead of delaying the exit
  // Once per frame before drawing: applies a finished model load, picks up published traces.
  void update();

  // Actions.
  void set_text(int slot, const std::string& text);  // also resubmits
  void submit(int slot);
  void submit_all();
  void open_model(const std::string& spec);  // off the UI thread; keeps the current one meanwhile
  void rebuild_lesson_model();               // after a lesson option changed
  // A stored trace file (attnscope-trace/1 JSON or safetensors) shown as the model: read off the
  // UI thread; a bad file is reported and the current model stays.
  void open_trace(const std::string& path);
  // A model opened elsewhere (`view FILE` reads the trace before the window opens).
  void use_model(std::shared_ptr<const Model> model, const std::string& label);
  // Fetches a repo id from the Hugging Face hub into the cache, then opens it (off the UI thread,
  // with progress); cancel_download() stops it, leaving the partial file for a later resume.
  void download_and_open(const std::string& repo_id);
  void cancel_download();
  void choose_backend(const std::string& choice);
  void apply_preset(const PresetPair& preset);
  // Generation timeline (decoders): continue slot's text with its GenerationOptions, step by step
  // on the worker (each step is published as it comes); stop it before its next step; move the
  // focus `delta` steps along the generated tokens (clamped).
  void generate(int slot);
  void stop_generation(int slot) { worker_.stop_generation(slot); }
  bool generating(int slot) const { return worker_.generating(slot); }
  void step_timeline(int slot, int delta);
  void refresh_model_list();
  // The guided lesson's real model (app/lesson/lesson_real.h) on the worker's extra slots
  // kSlots..kWorkerSlots-1, with head summaries: returns the job's id (results answer it).
  std::uint64_t submit_lesson_job(int worker_slot, std::shared_ptr<const Model> model,
                                  const std::string& text);
  std::shared_ptr<const ComputeResult> lesson_job_result(int worker_slot) const {
    return worker_.result(worker_slot);
  }

  // What attention does (issue 27). The interventions slot's jobs apply: the heads switched off
  // and the slot's cut edges that lie inside its newest trace. Toggling one resubmits; an edge cut
  // the model refuses (its row would have no key left) is taken back with the model's message.
  Interventions interventions(int slot) const;
  void toggle_ablation(int layer, int head);
  void toggle_knockout(int slot, const EdgeKnockout& edge);
  void clear_interventions();
  // The interventions set now (a session, --ablate) are for the model being opened: its load
  // keeps those it has instead of clearing them all.
  void keep_interventions_for_next_model() { keep_interventions_ = true; }
  // The next token, lens and effect map of a sentence (app/probe_jobs.h), kept up to date with its
  // text, interventions and focus by update().
  std::shared_ptr<const ProbeResult> probe_result(int slot) const {
    return worker_.probe_result(slot);
  }
  bool probing(int slot) const { return worker_.probing(slot); }
  // The model view sorts or colours by effect or dla (and the user has not stopped the map).
  bool wants_effects() const;
  // The position the effect map and dla are for: the locked token of the model view's sentence,
  // else its last token.
  int effects_position(int slot) const;

  LoadProgress load_progress() const { return loader_.progress(); }
  bool computing() const {
    return worker_.busy(0) || worker_.busy(1) || worker_.probing(0) || worker_.probing(1);
  }
  std::uint64_t computed_jobs() const { return worker_.completed(); }
  // True once every slot's newest submitted job has a published result (a generation: its last
  // step).
  bool settled() const;

 private:
  void on_trace(int slot);
  // Heads and edges (asked for at start) that the model just loaded lacks: dropped, and said.
  void drop_foreign_interventions();
  void submit_probes();  // the probe job each sentence needs now, when it changed
  std::array<std::string, kSlots> probe_key_;
  bool keep_interventions_ = true;    // the first model keeps what the command line asked for  //
                                      // what each slot's newest probe job asked
  std::string job_weighting() const;  // "value-norm" when Show → weighted by ‖value‖ is on
  Worker worker_;
  bool submitted_value_weighted_ = false;  // what the jobs in flight were asked to weigh
  ModelLoader loader_;
  std::uint64_t next_lesson_job_id_ = 1;
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace attnscope
