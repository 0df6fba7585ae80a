#pragma once
// The forward pass of any encoder–decoder a Seq2SeqSpec describes (BART, Marian, T5), on token ids
// (seq2seq_model.cpp adds the tokenizers), written once on the Backend interface so the CPU, CUDA
// and OpenGL run the same code.
//
//   encoder:  x = embed(src) · embedding_scale (+ positions) (+ embedding LayerNorm)
//             per layer: x = sub(x, self-attention over x (+ relative bias))
//                        x = sub(x, mlp)
//             (+ final norm)                                            -> enc [s x d]
//   decoder:  y = embed(tgt) · embedding_scale (+ positions) (+ embedding LayerNorm)
//             per layer: y = sub(y, causal self-attention over y (+ relative bias), KV cache)
//                        y = sub(y, cross-attention: queries from y, keys/values from enc)
//                        y = sub(y, mlp)
//             (+ final norm);  logits = (lm_head_scale · y) · lm_headᵀ (+ final_logits_bias)
//   sub(x, f): pre-norm x + f(norm(x)) (T5), or post-norm norm(x + f(x)) (BART, Marian)
//
// The encoder's output and every decoder layer's cross-attention keys and values are computed once
// per source (Seq2SeqState); the decoder's self-attention keys and values are cached, so a greedy
// step runs one token.
#include <filesystem>
#include <memory>
#include <vector>

#include "core/backend/backend.h"
#include "core/model/model.h"
#include "core/model/seq2seq/seq2seq_spec.h"
#include "core/model/transformer/transformer_blocks.h"

namespace attnscope {

// One attention's weights as read from the file (views of the mapped safetensors) and biases.
struct Seq2SeqAttentionFile {
  WeightView q, k, v, o;                  // nn.Linear [out x in]
  Tensor q_bias, k_bias, v_bias, o_bias;  // [1 x out] or empty (T5)
};

struct Seq2SeqLayerFile {
  Seq2SeqAttentionFile self, cross;  // cross: decoder layers only
  // The norms of the three sublayers (LayerNorm: weight and bias; RMSNorm: weight only).
  Tensor self_norm, self_norm_bias, cross_norm, cross_norm_bias, mlp_norm, mlp_norm_bias;
  // fc1 / wi (wi_1 when gated), wi_0 (gated only), fc2 / wo
  WeightView up, gate, down;
  Tensor up_bias, down_bias;
};

struct Seq2SeqFileWeights {
  WeightView encoder_embed, decoder_embed, lm_head;  // [vocab x d]
  WeightView encoder_positions, decoder_positions;   // learned positions [rows x d]
  Tensor encoder_embed_norm, encoder_embed_norm_bias, decoder_embed_norm, decoder_embed_norm_bias;
  Tensor encoder_final_norm, encoder_final_norm_bias, decoder_final_norm, decoder_final_norm_bias;
  Matrix encoder_relative_bias, decoder_relative_bias;  // T5: [buckets x heads], host
  Tensor final_logits_bias;                             // [1 x decoder_vocab] or empty
  std::vector<Seq2SeqLayerFile> encoder, decoder;
};

// The tensors of the checkpoint in `folder` that `spec` needs; throws ModelError naming the file,
// tensor, expected and found shape or dtype.
std::shared_ptr<const Seq2SeqFileWeights> read_seq2seq_weights(const std::filesystem::path& folder,
                                                               const Seq2SeqSpec& spec);

struct Seq2SeqDeviceWeights;  // the weights prepared by one backend (seq2seq_network.cpp)

// What one source's decoding keeps on one backend: the encoder's output, every decoder layer's
// cross-attention keys and values, and the decoder's self-attention KV cache.
class Seq2SeqState {
 public:
  int sources() const { return sources_; }
  int length() const { return length_; }  // decoder positions run so far
  // Back to no decoder positions, keeping the source's (copies share the cross keys and values).
  void restart() {
    length_ = capacity_ = 0;
    self_k_.clear();
    self_v_.clear();
  }

 private:
  friend class Seq2SeqNetwork;
  const Backend* backend_ = nullptr;
  int sources_ = 0, length_ = 0, capacity_ = 0;
  std::vector<Tensor> cross_k_, cross_v_;  // [s x inner] per decoder layer
  std::vector<Tensor> self_k_, self_v_;    // [capacity x inner] per decoder layer
};

struct Seq2SeqEncoderOutputs {
  std::vector<std::vector<Matrix>> attention;  // [layer][head]: [s x s]
  Matrix hidden;                               // [s x d] (when asked)
};

struct Seq2SeqDecoderOutputs {
  // [layer][head]: the new queries' rows, [n x (past + n)] and [n x s] (when asked).
  std::vector<std::vector<Matrix>> attention, cross_attention;
  Matrix logits;  // [n x vocab] with all_logits, else the last row [1 x vocab]
  Matrix hidden;  // the decoder's output before the LM head, same rows (when asked)
};

class Seq2SeqNetwork {
 public:
  // config.json (through `spec`) + the safetensors of `folder`. Throws ModelError.
  static Seq2SeqNetwork load(const std::filesystem::path& folder, Seq2SeqSpec spec,
                             const ProgressFn& progress = {});

  const Seq2SeqSpec& spec() const { return *spec_; }

  // Runs the encoder over `ids` (at most max_source_tokens, each below vocab; else UsageError) and
  // starts `state` for decoding on `backend`: the encoder's output and the cross-attention keys and
  // values, an empty self-attention cache.
  Seq2SeqEncoderOutputs encode(const std::vector<int>& ids, Seq2SeqState& state, Backend& backend,
                               bool keep_attention = true, bool keep_hidden = false) const;
  // Runs decoder `ids` at positions state.length() …, appending their keys and values to the cache.
  // Throws UsageError past max_target_tokens or for an id outside the decoder's vocabulary.
  Seq2SeqDecoderOutputs decode(const std::vector<int>& ids, Seq2SeqState& state, Backend& backend,
                               bool keep_attention, bool all_logits,
                               bool keep_hidden = false) const;

 private:
  Seq2SeqNetwork(std::shared_ptr<const Seq2SeqSpec> spec,
                 std::shared_ptr<const Seq2SeqFileWeights> file);
  std::shared_ptr<const Seq2SeqDeviceWeights> weights_for(Backend& backend) const;

  std::shared_ptr<const Seq2SeqSpec> spec_;
  std::shared_ptr<const Seq2SeqFileWeights> file_;
  std::shared_ptr<PerBackendWeights<Seq2SeqDeviceWeights>> device_;
};

// T5's relative-position bucket (T5Attention._relative_position_bucket, in float32 as Hugging Face
// computes it) of key position minus query position.
int t5_relative_bucket(int relative_position, bool bidirectional, int num_buckets,
                       int max_distance);

}  // namespace attnscope
