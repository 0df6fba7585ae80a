#pragma once
// Generation, one step at a time: a decoder continues a text token by token, each step reusing the
// keys and values of every earlier position (a KV cache), so step k costs one token's work. The app
// drives a Generator from its worker and shows each step as it comes; `attnscope generate` runs it
// to the end and writes the whole trace.
#include <cstdint>
#include <vector>

#include "core/trace/trace.h"

namespace attnscope {

struct GenerationOptions {
  int max_new_tokens = 20;
  float temperature =
      0.0f;                // 0 = greedy (the most likely token); > 0 samples from softmax(logits/T)
  int top_k = 0;           // sample among the k most likely tokens only; 0 = all
  std::uint64_t seed = 0;  // the same seed, model and text give the same tokens
  int predictions = 10;    // how many of the top next tokens each step reports
};

struct GenerationStep {
  Token token;                          // the new token (generated = true, offsets into the text)
  std::vector<Prediction> predictions;  // the model's top next tokens it was chosen from (T = 1)
  // attention[layer][head]: the new token's row over every position so far, itself included.
  std::vector<std::vector<RowVector>> attention;
  bool end_of_text = false;  // the token is an end-of-sequence token: generation stops
};

class Generator {
 public:
  virtual ~Generator() = default;
  // The prompt's trace, grown by every step so far: tokens (generated ones marked), text, the full
  // [n x n] attention of every layer and head, token_predictions, and the next-token predictions.
  virtual const AttentionTrace& trace() const = 0;
  // True after max_new_tokens steps or an end-of-sequence token.
  virtual bool done() const = 0;
  // Chooses the next token, runs it through the model (one token's work) and appends it to trace().
  // Throws UsageError when done().
  virtual GenerationStep step() = 0;
};

}  // namespace attnscope
