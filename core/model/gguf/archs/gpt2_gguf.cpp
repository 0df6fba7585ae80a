// gpt2 (GPT-2 and its sizes): LayerNorm with biases (attention.layer_norm_epsilon), learned
// positions (position_embd, context_length rows), one attn_qkv with bias (rows q | k | v: the
// converter transposed Conv1D's [in x out] to [out x in], as every GGUF matrix is), plain MLP with
// GELU (tanh), biases everywhere; output.weight is the converter's copy of token_embd.
#include <limits>

#include "core/model/gguf/gguf_archs.h"

namespace attnscope {

DecoderSpec gguf_gpt2_spec(const GgufMetadata& m) {
  DecoderSpec s = gguf_common_spec(m, "gpt2");
  s.norm = NormKind::kLayer;
  s.norm_eps = static_cast<float>(
      m.real("attention.layer_norm_epsilon", std::numeric_limits<double>::quiet_NaN()));
  s.positions = PositionKind::kLearned;
  s.rope = s.rope_local = RopeSpec{};  // no rotary embedding
  s.gated_mlp = false;
  s.activation = MlpActivation::kGeluTanh;
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.reports_kv_heads = false;
  s.tensor_names = TensorNames::kGpt2;
  if (s.kv_heads != s.heads) m.fail("GPT-2 has as many KV heads as heads");
  return s;
}

}  // namespace attnscope
