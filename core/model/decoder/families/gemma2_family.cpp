// Gemma 2 (model_type "gemma2"): (1 + w) RMSNorm before and after both blocks, GeGLU (tanh),
// embeddings × √hidden, scores scaled by query_pre_attn_scalar^-½ and soft-capped
// (attn_logit_softcapping), logits soft-capped (final_logit_softcapping), and sliding-window layers
// alternating with global ones (layer 0 slides). After modeling_gemma2.py.
#include <cmath>

#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

// What Gemma 2 and Gemma 3 share.
void gemma_common(const nlohmann::json& config, const std::filesystem::path& where,
                  DecoderSpec& s) {
  s.norm_offset = 1.0f;
  s.post_norms = true;
  s.embedding_scale = std::sqrt(static_cast<float>(s.hidden));
  s.scale_embedding_in_weight_dtype = true;
  const float scalar =
      config_float(config, "query_pre_attn_scalar", static_cast<float>(s.head_dim), where);
  if (!(scalar > 0)) throw ModelError(where.string() + ": 'query_pre_attn_scalar' must be > 0");
  s.attention_scale = 1.0f / std::sqrt(scalar);
  s.final_softcap = config_float(config, "final_logit_softcapping", 0.0f, where);
}

DecoderSpec gemma2_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/true);
  gemma_common(config, where, s);
  s.attention_softcap = config_float(config, "attn_logit_softcapping", 0.0f, where);
  const int window = config_int(config, "sliding_window", 4096, where);
  if (config.contains("layer_types") && config["layer_types"].is_array()) {
    s.layer = layers_from_types(config["layer_types"], s.layers, window, where);
  } else {
    for (int i = 0; i < s.layers; ++i) s.layer[i].window = (i + 1) % 2 ? window : 0;
  }
  for (DecoderLayerSpec& l : s.layer) l.local_rope = false;  // one rope for every layer
  return s;
}

}  // namespace attnscope
