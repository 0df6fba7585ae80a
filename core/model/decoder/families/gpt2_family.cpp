// GPT-2 and its family (model_type "gpt2": gpt2, distilgpt2, gpt2-medium … xl): LayerNorm with bias
// (layer_norm_epsilon) before each block and at the end, learned absolute positions (wpe, up to
// n_positions), a plain MLP up -> gelu (tanh approximation, "gelu_new") -> down, biases on every
// projection, one combined q|k|v projection stored as Conv1D, the LM head tied to the token
// embedding. Its config.json uses GPT-2's own key names (n_layer, n_head, n_embd …). After
// modeling_gpt2.py.
#include <cmath>

#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

DecoderSpec gpt2_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s;
  s.kind = "gpt2";  // also for old configs that name only the architecture (GPT2LMHeadModel)
  s.layers = config_int(config, "n_layer", -1, where);
  s.heads = config_int(config, "n_head", -1, where);
  s.kv_heads = s.heads;
  s.reports_kv_heads = false;
  s.hidden = config_int(config, "n_embd", -1, where);
  if (s.hidden % s.heads != 0)
    throw ModelError(where.string() + ": n_embd (" + std::to_string(s.hidden) +
                     ") is not a multiple of n_head (" + std::to_string(s.heads) + ")");
  s.head_dim = s.hidden / s.heads;
  s.ff = config_int(config, "n_inner", 4 * s.hidden, where);  // null: 4 · n_embd
  s.vocab = config_int(config, "vocab_size", 50257, where);
  s.max_positions =
      config_int(config, "n_positions", config_int(config, "n_ctx", 1024, where), where);
  s.positions = PositionKind::kLearned;
  s.norm = NormKind::kLayer;
  s.norm_eps = config_float(config, "layer_norm_epsilon", 1e-5f, where);
  s.gated_mlp = false;
  const std::string act = config_string(config, "activation_function", "gelu_new", where);
  if (act != "gelu_new" && act != "gelu_pytorch_tanh" && act != "gelu_fast" && act != "gelu")
    throw ModelError(where.string() + ": activation_function '" + act +
                     "' is not supported (gelu_new, gelu_pytorch_tanh, gelu_fast, gelu)");
  s.activation = activation_from_name(act, where);
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.attention_scale = config_bool(config, "scale_attn_weights", true, where)
                          ? 1.0f / std::sqrt(static_cast<float>(s.head_dim))
                          : 1.0f;
  if (config_bool(config, "scale_attn_by_inverse_layer_idx", false, where))
    throw ModelError(where.string() +
                     ": 'scale_attn_by_inverse_layer_idx' is true; attnscope scales every layer's "
                     "scores alike");
  s.layer.assign(s.layers, DecoderLayerSpec{});
  s.tied_embeddings = config_bool(config, "tie_word_embeddings", true, where);
  s.tensor_names = TensorNames::kGpt2;
  const std::vector<int> bos = config_token_ids(config, "bos_token_id", where);
  s.bos_id = bos.empty() ? -1 : bos.front();
  s.eos_ids = config_token_ids(config, "eos_token_id", where);
  return s;
}

}  // namespace attnscope
