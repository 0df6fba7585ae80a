// OLMo 2 (model_type "olmo2"): Llama's projections (attention_bias on q, k, v and o) with the
// norms moved: no norm before attention or the MLP, RMSNorm on their outputs instead
// (post_attention_layernorm, post_feedforward_layernorm) before they join the residual stream;
// q and k RMSNorm-ed over the whole projection (q_norm [heads·head_dim], k_norm
// [kv_heads·head_dim]) before they are split into heads and rotated. After modular_olmo2.py
// (Olmo2Attention, Olmo2DecoderLayer).
#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"

namespace attnscope {

DecoderSpec olmo2_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/false);
  const bool attention_bias = config_bool(config, "attention_bias", false, where);
  s.qkv_bias = attention_bias;
  s.o_bias = attention_bias;
  s.pre_norms = false;
  s.post_norms = true;
  s.qk_norm = true;
  s.qk_norm_per_head = false;
  return s;
}

}  // namespace attnscope
