// Mistral (model_type "mistral"): Llama's layers, and every layer attends through sliding_window
// keys when the config sets one (Mistral 7B v0.1: 4096; null from v0.2 on). After
// modeling_mistral.py and masking_utils.py (key j visible to query i iff i - window < j <= i).
#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"

namespace attnscope {

DecoderSpec mistral_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/false);
  const int window = config_int(config, "sliding_window", 0, where);
  for (DecoderLayerSpec& l : s.layer) l.window = window;
  return s;
}

}  // namespace attnscope
