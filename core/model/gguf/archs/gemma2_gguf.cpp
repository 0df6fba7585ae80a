// gemma2 (Gemma 2): RMSNorm before and after both blocks, whose weights the converter stored as
// 1 + w (so norm_offset 0 here); GeGLU (tanh); embeddings × √hidden in float (llama.cpp scales by
// sqrtf(n_embd), not by Hugging Face's √hidden rounded to the weights' dtype); the attention
// scale llama.cpp's f_attention_scale gives (1/√key_length, or 1/√(hidden/heads) for the 46-layer
// 27B); attention and final logits soft-capped (50 and 30 when the keys are absent); even layers
// slide over attention.sliding_window keys. The output matrix is always the token embedding, as
// llama.cpp's gemma2 reads it.
#include <cmath>

#include "core/model/gguf/gguf_archs.h"

namespace attnscope {

void gguf_gemma_common(const GgufMetadata& m, DecoderSpec& s) {
  s.norm_offset = 0.0f;
  s.post_norms = true;
  s.activation = MlpActivation::kGeluTanh;
  s.embedding_scale = std::sqrt(static_cast<float>(s.hidden));
  s.scale_embedding_in_weight_dtype = false;
  // llama.cpp tells the 27B by its layer count (46 for Gemma 2, 62 for Gemma 3).
  const bool is_27b = s.layers == (m.arch() == "gemma2" ? 46 : 62);
  s.attention_scale = is_27b ? 1.0f / std::sqrt(static_cast<float>(s.hidden / s.heads))
                             : 1.0f / std::sqrt(static_cast<float>(s.head_dim));
}

DecoderSpec gguf_gemma2_spec(const GgufMetadata& m) {
  DecoderSpec s = gguf_common_spec(m, "gemma2");
  gguf_gemma_common(m, s);
  s.attention_softcap = static_cast<float>(m.real("attn_logit_softcapping", 50.0));
  s.final_softcap = static_cast<float>(m.real("final_logit_softcapping", 30.0));
  const int window = m.count("attention.sliding_window", 4096, 1 << 24);
  for (int i = 0; i < s.layers; ++i)
    s.layer[static_cast<std::size_t>(i)].window = i % 2 == 0 ? window : 0;
  s.tied_embeddings = true;
  return s;
}

}  // namespace attnscope
