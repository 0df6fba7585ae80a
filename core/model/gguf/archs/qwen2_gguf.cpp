// qwen2 (Qwen2, Qwen2.5): Llama's layers with q, k and v biases (llama.cpp's qwen2 requires
// them), NeoX RoPE (Hugging Face's pairs: nothing permuted). llama.cpp has no sliding window for
// it.
#include "core/model/gguf/gguf_archs.h"

namespace attnscope {

DecoderSpec gguf_qwen2_spec(const GgufMetadata& m) {
  DecoderSpec s = gguf_common_spec(m, "qwen2");
  s.qkv_bias = true;
  return s;
}

}  // namespace attnscope
