#pragma once
// A model turns text into an AttentionTrace on a backend. Models are immutable once built, so the
// app's worker thread can run one while the UI thread holds another.
#include <functional>
#include <memory>
#include <optional>
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
  // Encoder–decoders (info().capabilities.cross_attention): the encoder reads `source`, the
  // decoder `target` (tokenized as the target side: decoder_start_token_id first, then its ids with
  // the tokenizer's </s>), or, with no target, the greedy output (at most `max_new_tokens` tokens,
  // ending at </s>). The trace's tokens/attention are the encoder's and `decoder` holds the
  // decoder's self-attention and cross-attention. run(text) of such a model is
  // run_translation(text, std::nullopt). Throws UsageError for other models.
  virtual AttentionTrace run_translation(const std::string& source,
                                         const std::optional<std::string>& target, Backend& backend,
                                         int max_new_tokens = 64) const {
    (void)source;
    (void)target;
    (void)backend;
    (void)max_new_tokens;
    throw UsageError("model kind '" + info().kind +
                     "' has no decoder to translate with (encoder–decoders such as bart, marian "
                     "and t5 do)");
  }
};

// Progress of a long operation (loading, downloading): fraction in [0, 1] and what is happening.
using ProgressFn = std::function<void(double fraction, const std::string& what)>;

}  // namespace attnscope
