// GPT-NeoX (model_type "gpt_neox": EleutherAI's Pythia suite, GPT-NeoX-20B): LayerNorm with bias
// (layer_norm_eps) before attention and before the MLP and at the end; attention and MLP in
// parallel by default (use_parallel_residual: x + attn(ln1(x)) + mlp(ln2(x))); rotary embeddings
// on the first rotary_pct of each head's dimensions only (base rotary_emb_base; transformers 5:
// rope_parameters' partial_rotary_factor and rope_theta); one fused query_key_value projection
// whose outputs are laid out per head ([heads][q|k|v][head_dim]); a plain MLP dense_h_to_4h ->
// gelu -> dense_4h_to_h with biases; attention_bias on query_key_value and dense; an untied
// embed_out. After configuration_gpt_neox.py and modular_gpt_neox.py (GPTNeoXAttention,
// GPTNeoXLayer, apply_rotary_pos_emb).
#include <cmath>

#include "core/model/decoder/decoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// A number key read as double (rotary_pct · head_dim must round as Python's float product does).
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

DecoderSpec gpt_neox_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  DecoderSpec s = common_decoder_spec(config, where, /*tied_default=*/false);
  if (s.kv_heads != s.heads)
    throw ModelError(where.string() +
                     ": GPT-NeoX has no grouped-query attention, but "
                     "num_key_value_heads differs from num_attention_heads");
  s.max_positions = config_int(config, "max_position_embeddings", 2048, where);
  s.norm = NormKind::kLayer;
  s.norm_eps = config_float(config, "layer_norm_eps", 1e-5f, where);
  s.gated_mlp = false;
  s.activation = activation_from_name(config_string(config, "hidden_act", "gelu", where), where);
  const bool attention_bias = config_bool(config, "attention_bias", true, where);
  s.qkv_bias = attention_bias;
  s.o_bias = attention_bias;
  s.mlp_bias = true;
  s.parallel_residual = config_bool(config, "use_parallel_residual", true, where);
  s.tensor_names = TensorNames::kGptNeox;
  s.fused_qkv_layout = FusedQkvLayout::kPerHead;
  s.reports_kv_heads = false;  // plain multi-head attention, as GPT-2's traces

  // The rotated part of each head: int(head_dim · rotary_pct), as GPTNeoXAttention.rotary_ndims
  // (transformers 5 keeps it as rope_parameters.partial_rotary_factor, the base as rope_theta).
  double pct = number_key(config, "rotary_pct", 0.25, where);
  double theta = number_key(config, "rotary_emb_base", 10000.0, where);
  nlohmann::json scaling =
      config.contains("rope_scaling") ? config["rope_scaling"] : nlohmann::json();
  if (const auto p = config.find("rope_parameters"); p != config.end() && p->is_object()) {
    pct = number_key(*p, "partial_rotary_factor", pct, where, "rope_parameters.");
    theta = number_key(*p, "rope_theta", theta, where, "rope_parameters.");
    if (scaling.is_null()) scaling = *p;
  }
  if (!(pct > 0 && pct <= 1))
    throw ModelError(where.string() + ": 'rotary_pct' must be in (0, 1], found " +
                     std::to_string(pct));
  // Python's int() of a float product: the rounding of head_dim · pct in double.
  const int rotary = static_cast<int>(static_cast<double>(s.head_dim) * pct);
  s.rope = rope_spec(rotary, theta, scaling, where);
  s.rope_local = s.rope;
  return s;
}

}  // namespace attnscope
