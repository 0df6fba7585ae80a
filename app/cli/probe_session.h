#pragma once
// What `predict`, `lens` and `heads --effect` share: a model that can be intervened on, the clean
// run of the text on a backend, and the JSON of the model and tokens.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/backend/select.h"
#include "core/model/intervention.h"
#include "core/model/model.h"

namespace attnscope {

struct ProbeSession {
  SelectedBackend backend;  // declared before the probe, which refers to it
  std::shared_ptr<const Model> model;
  std::unique_ptr<Probe> probe;
  ModelInfo info;
};

// Opens `model_spec` and runs `text` once. Throws UsageError (one line, naming `command`) for a
// model that cannot be intervened on (encoders, the lesson model) or a text without tokens.
ProbeSession open_probe_session(const std::string& command, const std::string& model_spec,
                                const std::string& text, const std::string& backend);

// --at: -1 is the last position; anything else must be a position of the text (UsageError).
int resolve_position(const Probe& probe, int at);

// {"name", "kind", "layers", "heads"}
nlohmann::ordered_json model_json(const ModelInfo& info);

}  // namespace attnscope
