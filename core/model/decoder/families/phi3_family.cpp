// Phi-3 (model_type "phi3": Phi-3-mini/medium 4k and 128k, Phi-3.5-mini, Phi-4-mini): Llama's
// layers with one fused self_attn.qkv_proj (rows q | k | v) and one mlp.gate_up_proj (rows gate |
// up, SiLU(gate) · up), no biases (attention_bias, mlp_bias and lm_head_bias in Phi-4-mini's
// config are ignored, as Phi3Attention and Phi3MLP build none), RMSNorm with eps 1e-5 by default,
// untied lm_head by default (Phi-4-mini ties it). Rotary embeddings on the first
// int(head_dim · partial_rotary_factor) dimensions of each head (Phi-4-mini: 0.75), with
// rope_scaling null/default or longrope ("su" and "yarn" read as longrope, as Phi3Config does
// for older configs): short_factor or long_factor by whether the sequence outgrows
// original_max_position_embeddings, cos and sin times the attention factor (longrope_spec). Every
// layer attends through sliding_window keys when the config sets one (Phi-3-mini-4k: 2047).
// After configuration_phi3.py (Phi3Config, convert_rope_params_to_dict, validate_rope),
// modeling_phi3.py (Phi3Attention, Phi3MLP, Phi3ForCausalLM.prepare_inputs_for_generation) and
// modeling_rope_utils.py (_compute_longrope_parameters, dynamic_rope_update).
#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

double number_key(const nlohmann::json& j, const char* key, double fallback,
                  const std::filesystem::path& where, const char* context = "") {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number())
    throw ModelError(where.string() + ": '" + context + key + "' must be a number, found " +
                     it->dump());
  return it->get<double>();
}

}  // namespace

DecoderSpec phi3_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  // The rotary keys are Phi-3's own (partial rotary, longrope): the shared reader sees none.
  nlohmann::json rest = config;
  rest.erase("rope_scaling");
  rest.erase("rope_parameters");
  DecoderSpec s = common_decoder_spec(rest, where, /*tied_default=*/false);
  s.max_positions = config_int(config, "max_position_embeddings", 4096, where);
  s.norm_eps = static_cast<float>(number_key(config, "rms_norm_eps", 1e-5, where));
  s.tensor_names = TensorNames::kPhi3;
  const int window = config_int(config, "sliding_window", 0, where);
  for (DecoderLayerSpec& l : s.layer) l.window = window;

  // rope_scaling as released (transformers 4), or transformers 5's rope_parameters holding the
  // theta, partial_rotary_factor, the rule's keys and original_max_position_embeddings.
  double theta = number_key(config, "rope_theta", 10000.0, where);
  double partial = number_key(config, "partial_rotary_factor", 1.0, where);
  int original = config_int(config, "original_max_position_embeddings", 4096, where);
  nlohmann::json scaling =
      config.contains("rope_scaling") ? config["rope_scaling"] : nlohmann::json();
  std::string ctx = "rope_scaling";
  if (const auto p = config.find("rope_parameters"); p != config.end() && p->is_object()) {
    theta = number_key(*p, "rope_theta", theta, where, "rope_parameters.");
    partial = number_key(*p, "partial_rotary_factor", partial, where, "rope_parameters.");
    if (scaling.is_null()) {
      scaling = *p;
      ctx = "rope_parameters";
    }
  }
  if (scaling.is_object() && scaling.contains("original_max_position_embeddings"))
    original = config_int(scaling, "original_max_position_embeddings", original, where);
  if (!(partial > 0 && partial <= 1))
    throw ModelError(where.string() + ": 'partial_rotary_factor' must be in (0, 1], found " +
                     std::to_string(partial));
  // Python's int() of a float product, as Phi3Config and _compute_longrope_parameters round it.
  const int rotary = static_cast<int>(static_cast<double>(s.head_dim) * partial);
  std::string type = "default";
  if (scaling.is_object()) {
    for (const char* key : {"rope_type", "type"}) {
      const auto it = scaling.find(key);
      if (it == scaling.end() || it->is_null()) continue;
      if (!it->is_string())
        throw ModelError(where.string() + ": '" + ctx + "." + key + "' must be a string, found " +
                         it->dump());
      type = it->get<std::string>();
      break;
    }
  } else if (!scaling.is_null()) {
    throw ModelError(where.string() + ": '" + ctx + "' must be an object or null, found " +
                     scaling.dump());
  }
  if (type == "su" || type == "yarn") type = "longrope";  // Phi3Config's backward compatibility
  if (type == "default") {
    s.rope = rope_spec(rotary, theta, nlohmann::json(), where);
  } else if (type == "longrope") {
    s.rope = longrope_spec(rotary, theta, scaling, s.max_positions, original, where);
  } else {
    throw ModelError(where.string() + ": '" + ctx + ".type' is '" + type +
                     "', which Phi-3 does not know (default or longrope; su and yarn are read as "
                     "longrope)");
  }
  s.rope_local = s.rope;
  return s;
}

}  // namespace attnscope
