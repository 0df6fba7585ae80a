// Llama 2, 3, 3.1 and 3.2, TinyLlama, SmolLM and SmolLM2 (model_type "llama"): RMSNorm, SiLU-gated
// MLP, RoPE (rope_scaling llama3 or linear), grouped-query attention, optional biases
// (attention_bias, mlp_bias). After modeling_llama.py.
#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"

namespace attnscope {

DecoderSpec llama_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/false);
  const bool attention_bias = config_bool(config, "attention_bias", false, where);
  s.qkv_bias = attention_bias;
  s.o_bias = attention_bias;
  s.mlp_bias = config_bool(config, "mlp_bias", false, where);
  return s;
}

}  // namespace attnscope
