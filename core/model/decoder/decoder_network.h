#pragma once
// The forward pass of any decoder a DecoderSpec describes, on token ids (decoder_model.cpp adds the
// tokenizer), with a KV cache: a call runs only the new tokens, attending to every cached one, so
// generating step k costs one token's work.
//
//   x = embed(ids) · embedding_scale (+ wpe[positions] when learned)  [n x hidden]
//   per layer:  h = norm(x)                                          (RMSNorm or LayerNorm)
//               q, k, v = h·Wq (+b), h·Wk (+b), h·Wv (+b)             [n x heads·dh], [n x kv·dh]
//                         (or one h·Wqkv (+b) split in three: GPT-2's c_attn)
//                         (or one h·Wqkv (+b) per head [q|k|v]: GPT-NeoX's query_key_value)
//               q, k = rms_norm per head (qk_norm); rope(q), rope(k)   at positions past..past+n-1
//                      (partial rotary: each head's first rotary_dims dimensions only)
//               cache += k, v;  a = attention(q, cache) · Wo    (query head h uses KV head h/group)
//               x += sandwich ? norm(a) : a
//               h = norm(x);  m = down(act(gate(h)) · up(h))  or  down(act(up(h)))  (plain MLP)
//                     (parallel_residual: h = norm2 of the layer's input x, before a joined it)
//               x += sandwich ? norm(m) : m
//   logits = softcap(norm(x) · lm_headᵀ)                              [rows x vocab]
//
// Weights stay in their file's precision (memory-mapped) until a backend prepares them
// (Backend::prepare_weight widens inside its kernels); the pages of a prepared tensor are handed
// back to the kernel, so a model never costs its file size twice.
#include <filesystem>
#include <memory>
#include <set>
#include <vector>

#include "core/backend/backend.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/hf/checkpoint.h"
#include "core/model/intervention.h"
#include "core/model/model.h"
#include "core/model/transformer/transformer_blocks.h"
#include "core/trace/recomputed_attention.h"

namespace attnscope {

// One layer's weights as read from the file. Norm weights and biases are small float tensors; the
// matrices are views of the file.
struct DecoderLayerFileWeights {
  Tensor input_norm, post_attention_norm, pre_mlp_norm, post_mlp_norm;  // [1 x hidden]
  // LayerNorm's biases of the same norms (NormKind::kLayer), else empty.
  Tensor input_norm_bias, post_attention_norm_bias, pre_mlp_norm_bias, post_mlp_norm_bias;
  Tensor q_norm, k_norm;  // [1 x head_dim]
  // In the file's layout (DecoderFileWeights::linear_out_by_in). q, k, v, or instead qkv: the
  // three side by side, q's columns first (GPT-2's c_attn).
  WeightView q, k, v, qkv, o, gate, up, down;
  Tensor q_bias, k_bias, v_bias, qkv_bias, o_bias, gate_bias, up_bias,
      down_bias;  // [1 x out] or empty
};

struct DecoderFileWeights {
  WeightView embed;      // [vocab x hidden]
  WeightView positions;  // [max_positions x hidden]: learned positions (PositionKind::kLearned)
  WeightView lm_head;    // [vocab x hidden] (the embedding itself when tied)
  Tensor final_norm, final_norm_bias;  // [1 x hidden]; the bias for LayerNorm only
  std::vector<DecoderLayerFileWeights> layers;
  // The layers' matrices are nn.Linear's [out x in] (y = x·Wᵀ), or Conv1D's [in x out] (y = x·W,
  // GPT-2). The embedding and LM head are [vocab x hidden] either way.
  bool linear_out_by_in = true;
  DType dtype = DType::kF32;  // the embedding's (Gemma rounds its √hidden to it)
  std::set<const void*>
      mapped;  // matrices that lie in a file mapping (their pages can be released)
};

// The tensors of `checkpoint` that `spec` needs; throws ModelError naming file, tensor, expected
// and found shape or dtype.
std::shared_ptr<const DecoderFileWeights> read_decoder_weights(const Checkpoint& checkpoint,
                                                               const DecoderSpec& spec,
                                                               const ProgressFn& progress);
// Hands the pages of a prepared matrix back to the kernel (the backend's copy is what runs).
void release_file_pages(const DecoderFileWeights& file, const WeightView& w);

// What a backend runs: matrices prepared by that backend, small tensors in its memory.
struct DecoderLayerWeights {
  Tensor input_norm, post_attention_norm, pre_mlp_norm, post_mlp_norm, q_norm, k_norm;
  Tensor input_norm_bias, post_attention_norm_bias, pre_mlp_norm_bias, post_mlp_norm_bias;
  std::shared_ptr<const PreparedWeight> q, k, v, qkv, o, gate, up, down;
  Tensor q_bias, k_bias, v_bias, qkv_bias, o_bias, gate_bias, up_bias, down_bias;
};
struct DecoderWeights {
  std::vector<DecoderLayerWeights> layers;
  Tensor final_norm, final_norm_bias;
  std::shared_ptr<const PreparedWeight> lm_head;
};

// Keys and values of every position run so far, per layer, in one backend's memory.
class KvCache {
 public:
  int length() const { return length_; }
  const Backend* backend() const { return backend_; }

 private:
  friend class DecoderNetwork;
  const Backend* backend_ = nullptr;
  int length_ = 0, capacity_ = 0;
  std::vector<Tensor> k_, v_;  // [capacity x kv_heads·head_dim] per layer; rows [0, length) used
  // The tokens cached, and the sequence length whose RoPE frequencies rotated their keys: LongRoPE
  // (Phi-3) rotates a longer sequence with other frequencies, and the cache is then run again.
  std::vector<int> ids_;
  int rope_length_ = 0;
};

// What one forward call returns.
struct DecoderOutputs {
  // attention[layer][head]: [n x (past + n)] — the new queries' rows over every key so far.
  std::vector<std::vector<Matrix>> attention;
  // When asked: the formula steps steps[layer * heads + head] for these n queries.
  std::vector<HeadSteps> steps;
  // When asked (keep_attention_inputs): each layer's Q of these n queries and K of every key so
  // far, from which RecomputedAttention gives any head's weights without keeping them all.
  std::vector<AttentionInputs> attention_inputs;
  // [rows x vocab]: the last position's logits, or every new position's (all_logits).
  Matrix logits;
  // When asked (keep_final_hidden): the same rows of the hidden state after the final norm.
  Matrix final_hidden;
  // When asked (keep_residuals): residuals[l] is the residual stream entering layer l, [n x
  // hidden]; residuals[layers] the one leaving the last layer (before the final norm). Layers a
  // resumed call skips have empty matrices.
  std::vector<Matrix> residuals;
  // When asked (keep_context): each layer's heads' weights·V side by side, [n x heads·dh] (after
  // interventions).
  std::vector<Matrix> context;
  // When asked (keep_attention_output): each layer's attention output, the output projection's
  // result with its bias, before any post-attention norm, [n x hidden].
  std::vector<Matrix> attention_output;
  // When asked (keep_value_norms): value_norms[layer][head][j] = ‖v_j · W_O,h‖ for every key j.
  std::vector<std::vector<RowVector>> value_norms;
};

struct DecoderRequest {
  bool all_logits = false;             // logits of every new position (tests), not only the last
  bool keep_attention = true;          // every head's weights (attention)
  bool keep_attention_inputs = false;  // each layer's Q and K instead (long inputs; see trace.h)
  bool keep_steps = false;
  bool keep_vector_steps = false;  // only q, k, v of each head (long inputs; see trace.h)
  bool keep_final_hidden = false;  // the final norm's output (tests against references)
  bool keep_residuals = false;
  bool keep_context = false;
  bool keep_attention_output = false;
  bool keep_value_norms = false;
  // Without all_logits: the row whose logits are returned (-1: the last).
  int logits_row = -1;
  // Interventions (core/model/intervention.h) on a prompt (an empty cache): heads ablated (their
  // weights·V replaced by 0, or by mean_context[layer]'s columns: the clean run's mean over the
  // positions) and edges knocked out (the row recomputed without that key).
  const Interventions* interventions = nullptr;
  const std::vector<RowVector>* mean_context = nullptr;
  // Resume a prompt at layer `start_layer` from `start_residual` [n x hidden], the residual stream
  // entering that layer in an earlier run of the same ids; the layers before it are not run (their
  // cache rows stay unset: the cache serves this call only).
  int start_layer = 0;
  const Matrix* start_residual = nullptr;
};

class DecoderNetwork {
 public:
  // config.json (through `spec`) + the safetensors of `folder`. Throws ModelError naming the file,
  // tensor, the expected and the found shape or dtype.
  static DecoderNetwork load(const std::filesystem::path& folder, DecoderSpec spec,
                             const ProgressFn& progress = {});
  // A network on weights made in memory (benchmarks with random weights of a real model's shape);
  // the views' owners keep the memory alive. Throws ModelError for a spec the network cannot run.
  static DecoderNetwork from_weights(DecoderSpec spec,
                                     std::shared_ptr<const DecoderFileWeights> weights);

  const DecoderSpec& spec() const { return *spec_; }

  // Runs `ids` at positions cache.length() …, appends their keys and values to `cache` (which must
  // be empty or belong to `backend`) and returns what `request` asks for. Throws UsageError for an
  // id outside the vocabulary or a sequence past max_position_embeddings.
  DecoderOutputs forward(const std::vector<int>& ids, KvCache& cache, Backend& backend,
                         const DecoderRequest& request = {}) const;

  // The next-token distribution of a row of logits: the top `k` ids with their probabilities.
  static std::vector<Prediction> top_predictions(const Matrix& logits, int row, int k);

  // Rows of the residual stream [r x hidden] through the final norm, the LM head and any final
  // softcap: [r x vocab] (the logit lens).
  Matrix unembed(const Matrix& residual_rows, Backend& backend) const;
  // Each head's output alone: row h = context_row's head-h columns through the output projection,
  // bias excluded, [heads x hidden].
  Matrix head_outputs(int layer, const RowVector& context_row, Backend& backend) const;
  // A norm's weight (and LayerNorm bias) as floats, for computations on the host.
  struct HostNorm {
    RowVector weight, bias;  // bias empty for RMSNorm
  };
  HostNorm final_norm(Backend& backend) const;
  HostNorm post_attention_norm(int layer, Backend& backend) const;  // sandwich norms only
  // Row `id` of the unembedding (lm_head, or the tied embedding) [hidden].
  RowVector unembedding_row(int id) const;

 private:
  DecoderNetwork(std::shared_ptr<const DecoderSpec> spec,
                 std::shared_ptr<const DecoderFileWeights> file,
                 std::shared_ptr<const Checkpoint> checkpoint);
  std::shared_ptr<const DecoderWeights> weights_for(Backend& backend) const;
  void grow(KvCache& cache, Backend& backend, int needed) const;

  std::shared_ptr<const DecoderSpec> spec_;
  std::shared_ptr<const DecoderFileWeights> file_;
  std::shared_ptr<const Checkpoint> checkpoint_;
  std::shared_ptr<PerBackendWeights<DecoderWeights>> device_;
  // W_O,h·W_O,hᵀ [head_dim x head_dim] of every layer and head, made on first use: ‖v·W_O,h‖² =
  // v·G·vᵀ costs head_dim² per key instead of head_dim·hidden.
  struct ValueGrams;
  std::shared_ptr<ValueGrams> grams_;
  const std::vector<Matrix>& value_grams(int layer) const;
};

}  // namespace attnscope
