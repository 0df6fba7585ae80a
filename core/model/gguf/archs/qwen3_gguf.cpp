// qwen3 (Qwen3 dense): per-head RMSNorm of q and k before RoPE (attn_q_norm, attn_k_norm),
// key_length given explicitly, no biases, NeoX RoPE.
#include "core/model/gguf/gguf_archs.h"

namespace attnscope {

DecoderSpec gguf_qwen3_spec(const GgufMetadata& m) {
  DecoderSpec s = gguf_common_spec(m, "qwen3");
  s.qk_norm = true;
  s.qk_norm_per_head = true;
  return s;
}

}  // namespace attnscope
