#include "app/cli/probe_session.h"

#include <cstdio>

#include "core/model/registry.h"
#include "core/util/error.h"

namespace attnscope {

ProbeSession open_probe_session(const std::string& command, const std::string& model_spec,
                                const std::string& text, const std::string& backend) {
  ProbeSession s;
  s.model = open_model(model_spec);
  s.info = s.model->info();
  const Intervenable* iv = intervenable(*s.model);
  if (!iv)
    throw UsageError(command + " needs a decoder (it predicts the next token); '" + s.info.name +
                     "' is a " + s.info.kind + " model");
  s.backend = select_backend(parse_backend_choice(backend));
  if (!s.backend.fallback_reason.empty())
    std::fprintf(stderr, "attnscope: using the CPU: %s\n", s.backend.fallback_reason.c_str());
  s.probe = iv->probe(text, *s.backend.backend);
  return s;
}

int resolve_position(const Probe& probe, int at) {
  const int n = static_cast<int>(probe.tokens().size());
  if (at == -1) return n - 1;
  if (at < 0 || at >= n)
    throw UsageError("--at " + std::to_string(at) + " is out of range: the text has " +
                     std::to_string(n) + " tokens (0-" + std::to_string(n - 1) + ")");
  return at;
}

nlohmann::ordered_json model_json(const ModelInfo& info) {
  return {{"name", info.name}, {"kind", info.kind}, {"layers", info.layers}, {"heads", info.heads}};
}

}  // namespace attnscope
