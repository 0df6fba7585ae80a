#pragma once
// BERT's encoder on token ids (no tokenizer here: bert_model.cpp adds it), and that of every
// family an EncoderSpec describes (RoBERTa, XLM-R, DistilBERT). Bidirectional, learned positions
// and token types, post-LayerNorm, gelu.
#include <filesystem>
#include <vector>

#include "core/model/bert/encoder_spec.h"
#include "core/model/model.h"
#include "core/model/transformer/transformer_blocks.h"

namespace attnscope {

struct BertWeights {
  Tensor word;      // [vocab x d]
  Tensor position;  // [positions x d]
  Tensor type;      // [type_vocab x d]; none when type_vocab is 0
  LayerNormWeights ln_embeddings;
  std::vector<TransformerLayerWeights> layers;
};

struct BertOutputs {
  Matrix last_hidden;  // [n x d] the encoder's output (HF last_hidden_state)
};

class BertNetwork {
 public:
  // config.json + model.safetensors of `folder`, the family by config.json's model_type (BERT when
  // it names none). Throws ModelError.
  static BertNetwork load(const std::filesystem::path& folder, const ProgressFn& progress = {});
  static BertNetwork load(const std::filesystem::path& folder, const EncoderSpec& spec,
                          const ProgressFn& progress = {});
  BertNetwork(BertConfig config, BertWeights host_weights);

  const BertConfig& config() const { return config_; }

  // Every layer's and head's attention for `ids` (special tokens included, at most
  // config().max_tokens(); else UsageError). `token_types`: one per id, each below
  // config().type_vocab (else UsageError; a family without types takes only 0s); nullptr: one
  // sentence, every type 0.
  AttentionTrace forward_ids(const std::vector<int>& ids, Backend& backend,
                             BertOutputs* outputs = nullptr,
                             const std::vector<int>* token_types = nullptr) const;

 private:
  BertConfig config_;
  std::shared_ptr<const BertWeights> host_;
  // value_grams_[layer][head] = W_O,h·W_O,hᵀ [dh x dh] (float64), W_O,h head h's rows of
  // attention.output.dense in [in x out] form: ‖v·W_O,h‖² = v·G·vᵀ, so a key's value norm costs
  // dh² instead of dh·d (AttentionTrace::value_norms).
  std::vector<std::vector<Eigen::MatrixXd>> value_grams_;
  PerBackendWeights<BertWeights> device_;
};

}  // namespace attnscope
