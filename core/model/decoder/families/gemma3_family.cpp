// Gemma 3's text model (model_type "gemma3_text"): Gemma 2's layers with (1 + w) RMSNorm of q and
// k instead of the attention softcap; sliding layers from layer_types, or every layer but each
// sliding_window_pattern-th; sliding layers rotate with rope_local_base_freq (no scaling), global
// ones with rope_theta and rope_scaling. After modeling_gemma3.py and configuration_gemma3.py.
#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

void gemma_common(const nlohmann::json& config, const std::filesystem::path& where,
                  DecoderSpec& s);  // gemma2_family.cpp

namespace {

// Gemma3TextConfig's defaults (configuration_gemma3.py, Gemma3TextConfig.__init__): released
// configs list only what differs from them (gemma-3-4b's text_config names five keys), so a key
// left out means this value, not the generic fallback the other families use.
const nlohmann::json& gemma3_text_defaults() {
  static const nlohmann::json defaults = {
      {"vocab_size", 262208},
      {"hidden_size", 2304},
      {"intermediate_size", 9216},
      {"num_hidden_layers", 26},
      {"num_attention_heads", 8},
      {"num_key_value_heads", 4},
      {"head_dim", 256},
      {"hidden_activation", "gelu_pytorch_tanh"},
      {"max_position_embeddings", 131072},
      {"rms_norm_eps", 1e-6},
      {"pad_token_id", 0},
      {"eos_token_id", 1},
      {"bos_token_id", 2},
      {"tie_word_embeddings", true},
      {"rope_theta", 1000000.0},
      {"attention_bias", false},
      {"query_pre_attn_scalar", 256},
      {"sliding_window", 4096},
      {"rope_local_base_freq", 10000.0},
      {"sliding_window_pattern", 6},
  };
  return defaults;
}

}  // namespace

DecoderSpec gemma3_spec(const nlohmann::json& given, const std::filesystem::path& where) {
  if (!given.is_object())
    throw ModelError(where.string() + ": the Gemma 3 config is not an object");
  nlohmann::json config = gemma3_text_defaults();
  for (const auto& [key, value] : given.items()) config[key] = value;  // what is given wins
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/true);
  gemma_common(config, where, s);
  s.qk_norm = true;
  const int window = config_int(config, "sliding_window", 4096, where);
  if (config.contains("layer_types") && config["layer_types"].is_array()) {
    s.layer = layers_from_types(config["layer_types"], s.layers, window, where);
  } else {
    const int pattern = config_int(config, "sliding_window_pattern", 6, where);
    if (pattern <= 0)
      throw ModelError(where.string() + ": 'sliding_window_pattern' must be a positive integer");
    for (int i = 0; i < s.layers; ++i) {
      s.layer[i].window = (i + 1) % pattern ? window : 0;
      s.layer[i].local_rope = s.layer[i].window > 0;
    }
  }
  const float local_base = config_float(config, "rope_local_base_freq", 10000.0f, where);
  s.rope_local = rope_spec(s.head_dim, local_base, nlohmann::json(), where);
  // transformers 5 saves one rope per layer type: rope_parameters {"full_attention": {rope_theta,
  // rope_type, factor}, "sliding_attention": {…}} in place of rope_theta, rope_scaling and
  // rope_local_base_freq.
  if (const auto p = config.find("rope_parameters"); p != config.end() && p->is_object()) {
    const auto rope_of = [&](const char* type, float base, RopeSpec& out) {
      const auto t = p->find(type);
      if (t == p->end() || t->is_null()) return;
      if (!t->is_object())
        throw ModelError(where.string() + ": 'rope_parameters." + type + "' must be an object");
      out = rope_spec(s.head_dim, config_float(*t, "rope_theta", base, where), *t, where);
    };
    rope_of("full_attention", config_float(config, "rope_theta", 1e6f, where), s.rope);
    rope_of("sliding_attention", local_base, s.rope_local);
  }
  return s;
}

}  // namespace attnscope
