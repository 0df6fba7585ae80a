#pragma once
// GPT-2's forward pass on token ids (no tokenizer here: gpt2_model.cpp adds it). Causal decoder,
// learned positions, pre-LayerNorm, gelu (tanh approximation), final ln_f, LM head tied to wte.
#include <filesystem>
#include <vector>

#include "core/model/model.h"
#include "core/model/transformer/transformer_blocks.h"

namespace attnscope {

struct Gpt2Config {
  int layers = 12;
  int heads = 12;
  int d_model = 768;
  int d_ff = 3072;
  int positions = 1024;  // n_positions: the longest sequence
  int vocab = 50257;
  float ln_eps = 1e-5f;
  Gelu gelu = Gelu::kTanh;
};

struct Gpt2Weights {
  Tensor wte;  // [vocab x d]  token embeddings, also the LM head
  Tensor wpe;  // [positions x d]
  std::vector<TransformerLayerWeights> layers;
  LayerNormWeights ln_f;
};

// What a forward pass computes besides the trace (for tests and tools).
struct Gpt2Outputs {
  Matrix final_hidden;    // [n x d] after ln_f
  RowVector last_logits;  // [vocab] next-token logits of the last position
};

class Gpt2Network {
 public:
  // config.json + model.safetensors of `folder`. Throws ModelError.
  static Gpt2Network load(const std::filesystem::path& folder, const ProgressFn& progress = {});
  Gpt2Network(Gpt2Config config, Gpt2Weights host_weights);

  const Gpt2Config& config() const { return config_; }

  // Every layer's and head's attention for `ids` (at most config().positions of them, each below
  // vocab; else UsageError), plus the top-`top_k` next-token predictions of the last position (ids
  // and probabilities; the text is the tokenizer's job). tokens/text are left empty.
  AttentionTrace forward_ids(const std::vector<int>& ids, Backend& backend, int top_k = 10,
                             Gpt2Outputs* outputs = nullptr) const;

 private:
  Gpt2Config config_;
  std::shared_ptr<const Gpt2Weights> host_;
  PerBackendWeights<Gpt2Weights> device_;
};

}  // namespace attnscope
