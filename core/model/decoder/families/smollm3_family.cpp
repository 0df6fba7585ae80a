// SmolLM3 (model_type "smollm3"): Llama's layers (attention_bias on q, k, v and o, mlp_bias),
// tied embeddings by default, and NoPE layers: no_rope_layers[i] = 1 rotates q and k in layer i,
// 0 leaves them without any position signal (by default every no_rope_layer_interval-th layer,
// 4). Sliding windows only with use_sliding_window, on the layers layer_types names (by default the
// NoPE layers). After configuration_smollm3.py and modular_smollm3.py (SmolLM3Attention).
#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

DecoderSpec smollm3_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/true);
  const bool attention_bias = config_bool(config, "attention_bias", false, where);
  s.qkv_bias = attention_bias;
  s.o_bias = attention_bias;
  s.mlp_bias = config_bool(config, "mlp_bias", false, where);
  // Which layers rotate q and k.
  const auto no_rope = config.find("no_rope_layers");
  if (no_rope != config.end() && !no_rope->is_null()) {
    if (!no_rope->is_array() || static_cast<int>(no_rope->size()) < s.layers)
      throw ModelError(where.string() + ": 'no_rope_layers' must list at least " +
                       std::to_string(s.layers) + " entries of 0 or 1 (num_hidden_layers)");
    for (int i = 0; i < s.layers; ++i) {
      const nlohmann::json& v = (*no_rope)[static_cast<std::size_t>(i)];
      if (!(v.is_number_integer() || v.is_boolean()))
        throw ModelError(where.string() + ": no_rope_layers[" + std::to_string(i) + "] is " +
                         v.dump() + ", expected 0 or 1");
      s.layer[i].rope = v.is_boolean() ? v.get<bool>() : v.get<long long>() != 0;
    }
  } else {
    const int interval = config_int(config, "no_rope_layer_interval", 4, where);
    if (interval <= 0)
      throw ModelError(where.string() + ": 'no_rope_layer_interval' must be positive");
    for (int i = 0; i < s.layers; ++i) s.layer[i].rope = (i + 1) % interval != 0;
  }
  // Sliding windows: only when use_sliding_window is set.
  if (config_bool(config, "use_sliding_window", false, where)) {
    const int window = config_int(config, "sliding_window", 0, where);
    if (config.contains("layer_types") && config["layer_types"].is_array()) {
      const std::vector<DecoderLayerSpec> types =
          layers_from_types(config["layer_types"], s.layers, window, where);
      for (int i = 0; i < s.layers; ++i) s.layer[i].window = types[i].window;
    } else if (window > 0) {
      for (int i = 0; i < s.layers; ++i)
        if (!s.layer[i].rope) s.layer[i].window = window;
    }
  }
  return s;
}

}  // namespace attnscope
