#pragma once
// The description of a decoder-only transformer that every family's config.json maps to: what
// differs between GPT-2, GPT-NeoX (Pythia), Llama, Mistral, Qwen2, Qwen3, Gemma 2, Gemma 3,
// SmolLM3, OLMo 2 and Phi-3 is data here, not code. One network (decoder_network.h) runs any
// description; a family is one file that fills it in (families/*.cpp) plus one registration line
// (core/model/hf/hf_families.cpp).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnscope {

enum class MlpActivation { kSilu, kGeluTanh, kGeluErf };

// RMSNorm (x / rms(x) · w, Llama onwards) or LayerNorm with a bias ((x - mean) / sd · w + b,
// GPT-2).
enum class NormKind { kRms, kLayer };

// Where positions come from: rotary embeddings of q and k (RoPE), or a learned table added to the
// token embeddings (GPT-2's wpe, one row per position up to max_positions).
enum class PositionKind { kRope, kLearned };

// How a family names and lays out its tensors in safetensors: Hugging Face's LlamaForCausalLM names
// (model.layers.N.self_attn.q_proj, nn.Linear [out x in]), GPT-2's (h.N.attn.c_attn, one
// combined q|k|v projection, Conv1D [in x out], optionally under "transformer."), GPT-NeoX's
// (gpt_neox.layers.N.attention.query_key_value, nn.Linear, q|k|v interleaved per head), or Phi-3's
// (Llama's names but one self_attn.qkv_proj whose rows are q | k | v and one mlp.gate_up_proj whose
// rows are gate | up, read as row views of the fused matrices).
enum class TensorNames { kLlama, kGpt2, kGptNeox, kPhi3 };

// How one fused q|k|v projection's output columns are laid out: q's columns, then k's, then v's
// (GPT-2's c_attn), or each head's q, k and v side by side ([heads][3][head_dim], GPT-NeoX).
enum class FusedQkvLayout { kConcatenated, kPerHead };

// Rotary position embedding in Hugging Face's rotate_half convention: dimension i and i + r/2 of a
// head's first r = rotary_dims() dimensions form a pair rotated by position · inv_freq[i]; the
// dimensions past r pass unrotated (partial rotary: GPT-NeoX's rotary_pct, partial_rotary_factor).
// LongRoPE (Phi-3's rope_scaling "longrope"): two sets of frequencies, the long one for a sequence
// longer than original_max_positions, and cos and sin multiplied by attention_factor.
struct RopeSpec {
  std::vector<float> inv_freq;  // [rotary_dims / 2], after the rope_scaling rule
  // LongRoPE only (empty otherwise): inv_freq with long_factor instead of short_factor, for a
  // sequence of more than original_max_positions tokens (the whole sequence, cached keys included).
  std::vector<float> long_inv_freq;
  int original_max_positions = 0;
  float attention_factor = 1.0f;  // multiplies cos and sin (LongRoPE's; 1 for every other rule)
  int rotary_dims() const { return static_cast<int>(inv_freq.size()) * 2; }
  // The frequencies every position of a sequence of `length` tokens is rotated with.
  const std::vector<float>& inv_freq_for(int length) const {
    return !long_inv_freq.empty() && length > original_max_positions ? long_inv_freq : inv_freq;
  }
};

struct DecoderLayerSpec {
  int window = 0;  // sliding window in keys (key j visible to query i iff i - window < j); 0 = none
  bool local_rope = false;  // uses DecoderSpec::rope_local (Gemma 3's sliding layers)
  bool rope = true;         // false: a NoPE layer, q and k not rotated (SmolLM3's no_rope_layers)
};

struct DecoderSpec {
  std::string kind;  // config.json's model_type: "llama", "mistral", "qwen2", …
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ff = 0, vocab = 0;
  int max_positions = 0;
  // RMSNorm: x / rms(x) · w, or Gemma's x / rms(x) · (1 + w) (norm_offset 1); or LayerNorm with
  // weight and bias (norm_offset unused). q_norm / k_norm are always RMSNorm.
  NormKind norm = NormKind::kRms;
  float norm_eps = 1e-6f;
  float norm_offset = 0.0f;
  // Where the norms sit. pre_norms: before attention and before the MLP (every family but OLMo 2).
  // post_norms: also on the attention's and the MLP's outputs before they join the residual
  // stream (Gemma's sandwich with pre_norms; OLMo 2's only norms without).
  bool pre_norms = true;
  bool post_norms = false;
  // Parallel attention and MLP (GPT-NeoX's use_parallel_residual): both read the layer's input,
  // x + attn(norm1(x)) + mlp(norm2(x)); otherwise the MLP reads x + attn(norm1(x)).
  bool parallel_residual = false;
  PositionKind positions = PositionKind::kRope;
  // Gated: down(act(gate(x)) · up(x)); plain: down(act(up(x))) (GPT-2; GELU activations only).
  bool gated_mlp = true;
  MlpActivation activation = MlpActivation::kSilu;
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool qk_norm = false;          // RMSNorm of q and k before RoPE: per head (Qwen3, Gemma 3) or
  bool qk_norm_per_head = true;  // over the whole projection (OLMo 2: weights [heads·dh], [kv·dh])
  float attention_scale = 0.0f;    // 1/√head_dim, or query_pre_attn_scalar^-½
  float attention_softcap = 0.0f;  // scores = cap · tanh(scores / cap); 0 = none (Gemma 2)
  float final_softcap = 0.0f;      // same on the logits (Gemma 2)
  float embedding_scale = 1.0f;    // Gemma: √hidden, rounded to the weights' dtype as HF does
  bool scale_embedding_in_weight_dtype = false;
  RopeSpec rope, rope_local;
  std::vector<DecoderLayerSpec> layer;  // [layers]
  bool tied_embeddings = false;
  TensorNames tensor_names = TensorNames::kLlama;
  FusedQkvLayout fused_qkv_layout = FusedQkvLayout::kConcatenated;
  // Whether traces report kv_heads: the config has grouped-query attention's notion of KV heads
  // (num_key_value_heads). GPT-2's plain multi-head attention has none; its traces keep the keys
  // they always had.
  bool reports_kv_heads = true;
  int bos_id = -1;
  std::vector<int> eos_ids;
  // Where the text model's tensors sit, tried in order: the first whose embed_tokens.weight the
  // checkpoint holds is read (Llama names; GPT-2's find their own). "model." for …ForCausalLM;
  // Gemma 3's multimodal checkpoints nest the text model ("language_model.model." as released,
  // "model.language_model." as transformers 5 saves it). lm_head: the untied output matrix there.
  struct TensorLayout {
    std::string model, lm_head;
  };
  std::vector<TensorLayout> tensor_layouts = {{"model.", "lm_head.weight"}};
  // What a reader of every trace should know, shown beside it (AttentionTrace::note): Gemma 3
  // 4B+'s "text model only; the vision tower is not loaded". Empty for most families.
  std::string note;

  int group() const { return heads / kv_heads; }  // query heads per KV head
};

// ---- what the family files share ----------------------------------------------------------------

// The keys every family reads the same way: sizes, RMSNorm eps, rope_theta + rope_scaling,
// tie_word_embeddings (default `tied_default`), bos/eos ids, 1/√head_dim. Throws ModelError
// naming `where` and the key.
DecoderSpec common_decoder_spec(const nlohmann::json& config, const std::filesystem::path& where,
                                bool tied_default);

// inv_freq for RoPE over `rotary_dims` dimensions of each head (all of them in most families) with
// base `theta`, after `scaling` (config.json's rope_scaling: null, "default", "linear" or "llama3";
// other rules throw ModelError naming them).
RopeSpec rope_spec(int rotary_dims, double theta, const nlohmann::json& scaling,
                   const std::filesystem::path& where);

// LongRoPE over `rotary_dims` dimensions with base `theta` (modeling_rope_utils.py's
// _compute_longrope_parameters): `scaling` holds short_factor and long_factor (rotary_dims / 2
// numbers each), optionally factor and attention_factor; `max_positions` is config.json's
// max_position_embeddings and `original_max_positions` its original_max_position_embeddings.
// inv_freq[i] = 1 / (short_factor[i] · theta^(2i / rotary_dims)), long_inv_freq with long_factor;
// attention_factor as given, else √(1 + ln(factor) / ln(original)) with factor as given, else
// max_positions / original_max_positions (1 when factor <= 1). Throws ModelError naming `where`
// and the key.
RopeSpec longrope_spec(int rotary_dims, double theta, const nlohmann::json& scaling,
                       int max_positions, int original_max_positions,
                       const std::filesystem::path& where);

// A token id or a list of them (bos_token_id, eos_token_id); empty when absent or null.
std::vector<int> config_token_ids(const nlohmann::json& config, const std::string& key,
                                  const std::filesystem::path& where);

MlpActivation activation_from_name(const std::string& name, const std::filesystem::path& where);

// The sliding window of every layer from HF's layer_types list ("sliding_attention" /
// "full_attention"), checked against the layer count.
std::vector<DecoderLayerSpec> layers_from_types(const nlohmann::json& types, int layers, int window,
                                                const std::filesystem::path& where);

// ---- the families (one file each under families/)
// ------------------------------------------------
DecoderSpec llama_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec mistral_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec qwen2_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec qwen3_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec gemma2_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec gemma3_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec gemma3_multimodal_spec(const nlohmann::json& config,
                                   const std::filesystem::path& where);
DecoderSpec olmo2_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec smollm3_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec gpt_neox_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec phi3_spec(const nlohmann::json& config, const std::filesystem::path& where);
DecoderSpec gpt2_spec(const nlohmann::json& config, const std::filesystem::path& where);

}  // namespace attnscope
