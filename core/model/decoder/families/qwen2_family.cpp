// Qwen2 and Qwen2.5 (model_type "qwen2"): Llama's layers with biases on the q, k and v
// projections (none on o). Sliding windows only when use_sliding_window is set, for the layers
// from max_window_layers on (or as layer_types says). After modeling_qwen2.py.
#include <algorithm>

#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"
#include "core/util/file_read.h"

namespace attnscope {

// Qwen2 and Qwen3 choose their sliding layers the same way.
void qwen_sliding_layers(const nlohmann::json& config, const std::filesystem::path& where,
                         DecoderSpec& s) {
  const bool use = config_bool(config, "use_sliding_window", false, where);
  if (config.contains("layer_types") && config["layer_types"].is_array()) {
    const int window = use ? config_int(config, "sliding_window", 0, where) : 0;
    s.layer = layers_from_types(config["layer_types"], s.layers, window, where);
    for (DecoderLayerSpec& l : s.layer) l.local_rope = false;  // one rope for every layer
    if (!use)
      for (DecoderLayerSpec& l : s.layer) l.window = 0;
    return;
  }
  if (!use) return;
  const int window = config_int(config, "sliding_window", -1, where);
  // transformers' Qwen2Config: layer i slides when i >= max_window_layers, so 0 (which it accepts)
  // makes every layer slide and a count beyond the layers none; only a negative one is nonsense.
  int from = 0;
  if (const auto it = config.find("max_window_layers"); it != config.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<long long>() < 0)
      throw ModelError(where.string() +
                       ": 'max_window_layers' must be a non-negative integer, found " +
                       quote_excerpt(it->dump(), 40));
    from = static_cast<int>(std::min<long long>(it->get<long long>(), s.layers));
  }
  for (int i = from; i < s.layers; ++i) s.layer[i].window = window;
}

DecoderSpec qwen2_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/false);
  s.qkv_bias = true;
  qwen_sliding_layers(config, where, s);
  return s;
}

}  // namespace attnscope
