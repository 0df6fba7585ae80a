// Gemma 3's text model (model_type "gemma3_text"): Gemma 2's layers with (1 + w) RMSNorm of q and
// k instead of the attention softcap; sliding layers from layer_types, or every layer but each
// sliding_window_pattern-th; sliding layers rotate with rope_local_base_freq (no scaling), global
// ones with rope_theta and rope_scaling. After modeling_gemma3.py.
#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"

namespace attnscope {

void gemma_common(const nlohmann::json& config, const std::filesystem::path& where,
                  DecoderSpec& s);  // gemma2_family.cpp

DecoderSpec gemma3_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/true);
  gemma_common(config, where, s);
  s.qk_norm = true;
  const int window = config_int(config, "sliding_window", 4096, where);
  if (config.contains("layer_types") && config["layer_types"].is_array()) {
    s.layer = layers_from_types(config["layer_types"], s.layers, window, where);
  } else {
    const int pattern = config_int(config, "sliding_window_pattern", 6, where);
    for (int i = 0; i < s.layers; ++i) {
      s.layer[i].window = (i + 1) % pattern ? window : 0;
      s.layer[i].local_rope = s.layer[i].window > 0;
    }
  }
  const float local_base = config_float(config, "rope_local_base_freq", 10000.0f, where);
  s.rope_local = rope_spec(s.head_dim, local_base, nlohmann::json(), where);
  return s;
}

}  // namespace attnscope
