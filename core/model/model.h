#pragma once
// A model turns text into an AttentionTrace on a backend. Models are immutable once built, so the
// app's worker thread can run one while the UI thread holds another.
#include <functional>
#include <memory>
#include <string>

#include "core/backend/backend.h"
#include "core/model/generation.h"
#include "core/trace/trace.h"
#include "core/util/error.h"

namespace attnscope {

class Model {
 public:
  virtual ~Model() = default;
  virtual ModelInfo info() const = 0;
  // All tokens the forward pass sees, special ones included (marked `special`).
  virtual Tokens tokenize(const std::string& text) const = 0;
  // Tokenize and compute the attention of every layer and head. Never throws for odd text (empty,
  // invalid UTF-8, very long: truncated to the model's limit and recorded in the trace).
  virtual AttentionTrace run(const std::string& text, Backend& backend) const = 0;
  // Continues `text` (info().capabilities.generation says whether this model can). `backend` must
  // outlive the generator. Throws UsageError for models that cannot generate.
  virtual std::unique_ptr<Generator> start_generation(const std::string& text, Backend& backend,
                                                      const GenerationOptions& options) const {
    (void)text;
    (void)backend;
    (void)options;
    throw UsageError("model kind '" + info().kind + "' cannot generate text (decoders can)");
  }
};

// Progress of a long operation (loading, downloading): fraction in [0, 1] and what is happening.
using ProgressFn = std::function<void(double fraction, const std::string& what)>;

}  // namespace attnscope
