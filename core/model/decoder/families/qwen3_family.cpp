// Qwen3 (model_type "qwen3"): per-head RMSNorm of q and k (q_norm, k_norm) before RoPE, head_dim
// given explicitly (heads · head_dim may differ from hidden_size), biases only with
// attention_bias. After modeling_qwen3.py.
#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"

namespace attnscope {

void qwen_sliding_layers(const nlohmann::json& config, const std::filesystem::path& where,
                         DecoderSpec& s);  // qwen2_family.cpp

DecoderSpec qwen3_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/false);
  const bool attention_bias = config_bool(config, "attention_bias", false, where);
  s.qkv_bias = attention_bias;
  s.o_bias = attention_bias;
  s.qk_norm = true;
  qwen_sliding_layers(config, where, s);
  return s;
}

}  // namespace attnscope
