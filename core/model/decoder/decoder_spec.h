#pragma once
// The description of a decoder-only transformer that every family's config.json maps to: what
// differs between Llama, Mistral, Qwen2, Qwen3, Gemma 2 and Gemma 3 is data here, not code. One
// network (decoder_network.h) runs any description; a family is one file that fills it in
// (families/*.cpp) plus one registration line (core/model/hf/hf_families.cpp).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnscope {

enum class MlpActivation { kSilu, kGeluTanh, kGeluErf };

// Rotary position embedding in Hugging Face's rotate_half convention: dimension i and i + dh/2 of a
// head form a pair rotated by position · inv_freq[i].
struct RopeSpec {
  std::vector<float> inv_freq;  // [head_dim / 2], after the rope_scaling rule
};

struct DecoderLayerSpec {
  int window = 0;  // sliding window in keys (key j visible to query i iff i - window < j); 0 = none
  bool local_rope = false;  // uses DecoderSpec::rope_local (Gemma 3's sliding layers)
};

struct DecoderSpec {
  std::string kind;  // config.json's model_type: "llama", "mistral", "qwen2", …
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ff = 0, vocab = 0;
  int max_positions = 0;
  // RMSNorm: x / rms(x) · w, or Gemma's x / rms(x) · (1 + w) (norm_offset 1).
  float norm_eps = 1e-6f;
  float norm_offset = 0.0f;
  bool sandwich_norms = false;  // Gemma: normed again after attention and after the MLP
  MlpActivation activation = MlpActivation::kSilu;  // gate: down(act(gate(x)) · up(x))
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool qk_norm = false;            // per-head RMSNorm of q and k before RoPE (Qwen3, Gemma 3)
  float attention_scale = 0.0f;    // 1/√head_dim, or query_pre_attn_scalar^-½
  float attention_softcap = 0.0f;  // scores = cap · tanh(scores / cap); 0 = none (Gemma 2)
  float final_softcap = 0.0f;      // same on the logits (Gemma 2)
  float embedding_scale = 1.0f;    // Gemma: √hidden, rounded to the weights' dtype as HF does
  bool scale_embedding_in_weight_dtype = false;
  RopeSpec rope, rope_local;
  std::vector<DecoderLayerSpec> layer;  // [layers]
  bool tied_embeddings = false;
  int bos_id = -1;
  std::vector<int> eos_ids;

  int group() const { return heads / kv_heads; }  // query heads per KV head
};

// ---- what the family files share ----------------------------------------------------------------

// The keys every family reads the same way: sizes, RMSNorm eps, rope_theta + rope_scaling,
// tie_word_embeddings (default `tied_default`), bos/eos ids, 1/√head_dim. Throws ModelError
// naming `where` and the key.
DecoderSpec common_decoder_spec(const nlohmann::json& config, const std::filesystem::path& where,
                                bool tied_default);

// inv_freq for RoPE over `head_dim` dimensions with base `theta`, after `scaling` (config.json's
// rope_scaling: null, "default", "linear" or "llama3"; other rules throw ModelError naming them).
RopeSpec rope_spec(int head_dim, double theta, const nlohmann::json& scaling,
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

}  // namespace attnscope
