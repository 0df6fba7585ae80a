#include "app/app.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/analysis/value_weighting.h"
#include "core/backend/select.h"
#include "core/model/hf/download.h"
#include "core/trace/trace_model.h"
#include "core/util/error.h"

namespace attnscope {

int focused_token(const AppState& app, int s) {
  const auto& result = app.slots[s].result;
  if (!result || !result->trace) return -1;
  int t = app.focus.token(app.slots[s], s);
  return t >= 0 && t < static_cast<int>(result->trace->tokens.size()) ? t : -1;
}

App::App() {
  state.slots[0].text = kDefaultText1;
  state.slots[1].text = kDefaultText2;
  state.slots[0].preferred_word = state.slots[1].preferred_word = "bank";
  state.slots[0].label = "river";
  state.slots[1].label = "money";
  try {
    presets = lesson_presets();
  } catch (const std::exception& e) {
    models_error = e.what();
  }
}

void App::refresh_model_list() {
  try {
    models = list_models();
  } catch (const std::exception& e) {
    models_error = e.what();
  }
}

void App::set_text(int slot, const std::string& text) {
  state.slots[slot].text = text;
  submit(slot);
}

void App::submit(int slot) {
  SlotState& s = state.slots[slot];
  ComputeJob job{state.model, state.backend, s.text, s.next_id++, std::nullopt};
  job.weighting = job_weighting();
  job.interventions = interventions(slot);
  if (!s.target.empty()) job.target = s.target;  // encoder–decoders (else ignored)
  s.submitted_id = job.id;
  if (!state.model) return;  // computed once a model arrives
  worker_.submit(slot, std::move(job));
}

std::uint64_t App::submit_lesson_job(int worker_slot, std::shared_ptr<const Model> model,
                                     const std::string& text) {
  ComputeJob job{std::move(model), state.backend, text, next_lesson_job_id_++, std::nullopt};
  job.summarize = true;
  const std::uint64_t id = job.id;
  worker_.submit(worker_slot, std::move(job));
  return id;
}

void App::submit_all() {
  for (int s = 0; s < kSlots; ++s) submit(s);
}

bool App::settled() const {
  if (!state.model) return false;
  for (int s = 0; s < kSlots; ++s) {
    auto r = worker_.result(s);
    if (!r || r->id != state.slots[s].submitted_id || worker_.generating(s)) return false;
    if (worker_.probing(s)) return false;  // the next token, lens or effect map is on its way
  }
  return true;
}

Interventions App::interventions(int slot) const {
  Interventions iv;
  if (!state.model || !intervenable(*state.model)) return iv;
  const InterventionState& is = state.interventions;
  const ModelInfo& info = state.model_info;
  for (const HeadRef& h : is.ablated)
    if (h.layer < info.layers && h.head < info.heads) iv.ablate.push_back(h);
  iv.ablate_mode = is.mode;
  // Cut edges follow the token positions they were cut between; the worker leaves out those
  // beyond the text (kept here: an edit that removes a token and brings it back restores them).
  for (const EdgeKnockout& k : state.slots[slot].knockouts)
    if (k.layer < info.layers && k.head < info.heads) iv.knockout.push_back(k);
  return iv;
}

void App::drop_foreign_interventions() {
  const ModelInfo& info = state.model_info;
  std::string dropped;
  std::erase_if(state.interventions.ablated, [&](const HeadRef& h) {
    const bool out = h.layer >= info.layers || h.head >= info.heads || !intervenable(*state.model);
    if (out) dropped += " L" + std::to_string(h.layer) + ".H" + std::to_string(h.head);
    return out;
  });
  for (SlotState& slot : state.slots)
    std::erase_if(slot.knockouts, [&](const EdgeKnockout& k) {
      const bool out =
          k.layer >= info.layers || k.head >= info.heads || !intervenable(*state.model);
      if (out)
        dropped += " L" + std::to_string(k.layer) + ":" + std::to_string(k.query) + ">" +
                   std::to_string(k.key);
      return out;
    });
  if (dropped.empty()) return;
  // Appended piece by piece: GCC 12's -Wrestrict (bug 105329) on "…" + s + "…".
  std::string message = "not in ";
  message += info.name;
  message += " (";
  message += std::to_string(info.layers);
  message += " layers \xC3\x97 ";
  message += std::to_string(info.heads);
  message += " heads";
  if (!intervenable(*state.model)) message += ", and it cannot be intervened on";
  message += "), left out:";
  message += dropped;
  state.message = std::move(message);
  state.message_is_error = true;
}

void App::toggle_ablation(int layer, int head) {
  std::vector<HeadRef>& a = state.interventions.ablated;
  const HeadRef h{layer, head};
  if (auto it = std::find(a.begin(), a.end(), h); it != a.end()) {
    a.erase(it);
  } else {
    a.push_back(h);
    std::sort(a.begin(), a.end(), [](const HeadRef& x, const HeadRef& y) {
      return x.layer != y.layer ? x.layer < y.layer : x.head < y.head;
    });
  }
  submit_all();
}

void App::toggle_knockout(int slot, const EdgeKnockout& edge) {
  std::vector<EdgeKnockout>& ks = state.slots[slot].knockouts;
  const auto same = [&](const EdgeKnockout& k) {
    return k.layer == edge.layer && k.head == edge.head && k.query == edge.query &&
           k.key == edge.key;
  };
  if (auto it = std::find_if(ks.begin(), ks.end(), same); it != ks.end())
    ks.erase(it);
  else
    ks.push_back(edge);
  submit(slot);
}

void App::clear_interventions() {
  state.interventions.ablated.clear();
  for (SlotState& s : state.slots) s.knockouts.clear();
  submit_all();
}

bool App::wants_effects() const {
  const AppState& st = state;
  return st.model_view && !st.interventions.effects_cancelled &&
         (st.model_sort == "effect" || st.model_sort == "dla" || !st.model_colour.empty());
}

int App::effects_position(int slot) const {
  const auto& r = state.slots[slot].result;
  if (!r || !r->trace || r->trace->tokens.empty()) return -1;
  const int locked = state.slots[slot].locked_token;
  const int n = static_cast<int>(r->trace->tokens.size());
  return locked >= 0 && locked < n ? locked : n - 1;
}

void App::submit_probes() {
  for (int s = 0; s < kSlots; ++s) {
    const auto& r = state.slots[s].result;
    // Decoders only, on a computed prompt (a generation's trace is the generator's own).
    if (!state.model || !intervenable(*state.model) || !r || !r->trace || r->generation ||
        r->trace->tokens.empty() || (s == 1 && !state.show_second))
      continue;
    ProbeJob job;
    job.model = state.model;
    job.backend = state.backend;
    job.text = r->text;
    job.interventions = r->interventions;  // what the views show
    job.at = focused_token(state, s);
    job.effects = wants_effects() && s == (state.show_second ? state.model_view_slot : 0);
    job.effects_at = effects_position(s);
    job.target = state.interventions.target;
    // Equal jobs are not sent again: the hover moving within a token, every frame.
    std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(job.model.get())) + "/" +
                      std::to_string(reinterpret_cast<std::uintptr_t>(job.backend.get())) + "/" +
                      interventions_key(job.interventions) + "/" + std::to_string(job.at) + "/" +
                      std::to_string(job.effects) + "/" + std::to_string(job.effects_at) + "/" +
                      std::to_string(job.target) + "/" + job.text;
    if (key == probe_key_[s]) continue;
    probe_key_[s] = std::move(key);
    job.id = state.slots[s].next_id++;
    worker_.submit_probe(s, std::move(job));
  }
}

void App::generate(int slot) {
  SlotState& s = state.slots[slot];
  if (!state.model || !state.model_info.capabilities.generation) return;
  ComputeJob job{state.model, state.backend, s.text, s.next_id++, std::nullopt};
  job.generate = s.generation;
  job.weighting = job_weighting();
  s.submitted_id = job.id;
  s.follow_generation = true;
  worker_.submit(slot, std::move(job));
}

void App::step_timeline(int slot, int delta) {
  SlotState& s = state.slots[slot];
  if (!s.result || !s.result->trace || !s.result->generation) return;
  const GenerationState& g = *s.result->generation;
  if (g.steps == 0) return;
  // The focused step: the locked token if it is a generated one, else the newest.
  int step = s.locked_token >= g.prompt_tokens ? s.locked_token - g.prompt_tokens : g.steps - 1;
  step = std::clamp(step + delta, 0, g.steps - 1);
  s.locked_token = g.prompt_tokens + step;
  s.follow_generation = step == g.steps - 1;
}

void App::open_model(const std::string& spec) {
  std::string label = spec.empty() ? "lesson" : spec;
  if (label == "lesson") {
    rebuild_lesson_model();
    return;
  }
  loader_.request(
      label, [spec](const ProgressFn& progress) { return attnscope::open_model(spec, progress); });
}

void App::open_trace(const std::string& path) {
  const std::string label = "trace " + std::filesystem::path(path).filename().string();
  loader_.request(label, [path](const ProgressFn&) -> std::shared_ptr<const Model> {
    return open_trace_model(path);
  });
}

void App::use_model(std::shared_ptr<const Model> model, const std::string& label) {
  loader_.request(label, [model](const ProgressFn&) { return model; });
}

void App::download_and_open(const std::string& repo_id) {
  cancel_->store(true);  // a download still running for an older request stops
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel = cancel_;
  loader_.request(repo_id, [repo_id, cancel](const ProgressFn& progress) {
    DownloadRequest request;
    request.repo_id = repo_id;
    DownloadResult result =
        download_model(request, download_progress_adapter(progress), cancel.get());
    return attnscope::open_model(result.folder.string(), progress);
  });
}

void App::cancel_download() {
  cancel_->store(true);
}

void App::rebuild_lesson_model() {
  LessonOptions options = state.lesson;
  loader_.request("lesson", [options](const ProgressFn&) { return make_lesson_model(options); });
}

void App::choose_backend(const std::string& choice) {
  state.backend_choice = choice;
  state.backend_note.clear();
  try {
    SelectedBackend sel = select_backend(parse_backend_choice(choice));
    state.backend = sel.backend;
    state.backend_note = sel.fallback_reason;
  } catch (const std::exception& e) {
    // `cuda` or `opengl` asked for and unavailable: say why and keep computing on the CPU.
    state.backend_note = e.what();
    state.backend = select_backend(BackendChoice::kCpu).backend;
  }
  submit_all();
}

void App::apply_preset(const PresetPair& preset) {
  state.slots[0].text = preset.text1;
  state.slots[1].text = preset.text2;
  state.slots[0].label = preset.sense1;
  state.slots[1].label = preset.sense2;
  state.show_second = true;  // a pair is shown side by side
  for (SlotState& s : state.slots) {
    s.preferred_word = preset.word;
    s.locked_token = -1;
  }
  submit_all();
}

std::string App::job_weighting() const {
  return state.shown.value_weighted ? kValueNormWeighting : kRawWeighting;
}

void App::update() {
  // Show → weighted by ‖value‖ changed (the panel, a session): the traces are computed again,
  // weighted as it says.
  if (state.shown.value_weighted != submitted_value_weighted_) {
    submitted_value_weighted_ = state.shown.value_weighted;
    submit_all();
  }
  if (auto loaded = loader_.take_result()) {
    if (loaded->model) {
      state.model = loaded->model;
      state.model_info = loaded->info;
      state.model_spec = loaded->label;
      state.model_error.clear();
      // Heads and edges of the previous model mean nothing in this one; the first model keeps
      // those asked for at start (--ablate, --knockout), if it has them.
      if (loader_.progress().busy) {
        // A newer load is on its way (a session opened at startup): the interventions are for
        // that one; nothing is kept or dropped for this one.
      } else if (!keep_interventions_) {
        state.interventions.ablated.clear();
        state.interventions.target = -1;
        state.interventions.target_input.clear();
        for (SlotState& slot : state.slots) slot.knockouts.clear();
      } else {
        drop_foreign_interventions();
        keep_interventions_ = false;
      }
      const ModelInfo& info = state.model_info;
      // While a newer load is on its way (a session opened at startup, while the default model
      // was still loading), keep the layer and head it asked for: clamping them to this model
      // would lose them. The views draw nothing for a layer outside the trace meanwhile.
      if (!loader_.progress().busy) {
        state.layer = std::min(state.layer, std::max(0, info.layers - 1));
        state.head = std::min(state.head, std::max(0, info.heads - 1));
      }
      if (auto* stored = dynamic_cast<const TraceModel*>(state.model.get())) {
        // A stored trace shows its own text, once.
        SlotState& s = state.slots[0];
        s.text = stored->trace().text;
        s.label = stored->source();
        s.preferred_word.clear();
        s.locked_token = -1;
        state.show_second = false;
      }
      submit_all();
    } else {
      state.model_error = "could not open " + loaded->label + ": " + loaded->error;
    }
  }
  for (int s = 0; s < kSlots; ++s) {
    auto r = worker_.result(s);
    if (r != state.slots[s].result) {
      state.slots[s].result = r;
      if (r && r->interventions_refused) {
        // An edge cut or a head switched off that the model refused: taken back, with its reason.
        state.interventions.ablated = r->interventions.ablate;
        state.slots[s].knockouts = r->interventions.knockout;
        state.message = r->error;
        state.message_is_error = true;
        submit(s);
      }
      on_trace(s);
    }
  }
  // The hover of the previous frame drives this frame's focus; views set a new one while drawing.
  state.focus.last_hover_slot = state.focus.hover_slot;
  state.focus.last_hover_token = state.focus.hover_token;
  state.focus.hover_slot = state.focus.hover_token = -1;
  submit_probes();  // after the focus of this frame is known
}

void App::on_trace(int slot) {
  SlotState& s = state.slots[slot];
  if (!s.result || !s.result->trace) return;
  const Tokens& tokens = s.result->trace->tokens;
  // A generation in progress: the focus follows the newest token (its row in every view) until
  // the user steps back along the timeline.
  if (const auto& g = s.result->generation; g && g->steps > 0 && s.follow_generation) {
    s.locked_token = static_cast<int>(tokens.size()) - 1;
    return;
  }
  // Keep a locked token in range; otherwise focus the preset's ambiguous word if present.
  if (s.locked_token >= static_cast<int>(tokens.size())) s.locked_token = -1;
  if (s.locked_token < 0 && !s.preferred_word.empty()) {
    // Match the word as typed (the token's span of the text), so "Ġbank" (GPT-2) and "bank"
    // (BERT, lower-cased) are found too.
    const std::string& text = s.result->trace->text;
    auto lower = [](std::string w) {
      for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return w;
    };
    const std::string want = lower(s.preferred_word);
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
      const Token& t = tokens[i];
      std::string span = t.start >= 0 && t.end <= static_cast<int>(text.size()) && t.start < t.end
                             ? text.substr(t.start, t.end - t.start)
                             : t.text;
      size_t a = span.find_first_not_of(" \t\n"), b = span.find_last_not_of(" \t\n");
      span = a == std::string::npos ? "" : span.substr(a, b - a + 1);
      if (lower(span) == want || t.text == s.preferred_word) {
        s.locked_token = i;
        break;
      }
    }
  }
}

}  // namespace attnscope
