#pragma once
// The description of an encoder–decoder transformer that every such family's config.json maps to:
// what differs between BART, Marian and T5 (norms and where they sit, how positions are told,
// biases, the MLP's activation, the LM head's scale and bias, the tokens decoding starts and stops
// with, tensor names) is data here, not code. One network (seq2seq_network.h) runs any description;
// a family is one file that fills it in (families/*.cpp) plus one registration line
// (core/model/hf/hf_families.cpp).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnscope {

// LayerNorm with weight and bias (BART, Marian) or T5's RMSNorm with a weight only (T5LayerNorm: x
// / sqrt(mean(x²) + eps) · w, no mean subtracted).
enum class Seq2SeqNorm { kLayer, kRms };

// How the attention is told where tokens are.
enum class Seq2SeqPositions {
  kLearned,     // BartLearnedPositionalEmbedding: row position + offset of a learned table
  kSinusoidal,  // MarianSinusoidalPositionalEmbedding: computed, sin in the first half, cos after
  kRelative,    // T5: a learned bias per head and relative-position bucket added to the scores
};

// The MLP's activation (HF ACT2FN names): relu, gelu (erf), gelu_new (tanh), silu/swish.
enum class Seq2SeqActivation { kRelu, kGeluErf, kGeluTanh, kSilu };

// Which naming scheme the checkpoint uses.
enum class Seq2SeqTensorNames {
  kBart,  // model.{encoder,decoder}.layers.N.self_attn.q_proj … (BART and Marian)
  kT5,    // {encoder,decoder}.block.N.layer.M.SelfAttention.q … (T5, flan-t5)
};

// How the source and target text become tokens: the folder's tokenizer.json for both sides (BART,
// T5), or Marian's source.spm / target.spm with vocab.json (core/text/marian_tokenizer.h).
enum class Seq2SeqTokenizer { kTokenizerJson, kMarian };

struct Seq2SeqStack {
  int layers = 0, heads = 0, ff = 0;
};

struct Seq2SeqSpec {
  std::string kind;  // config.json's model_type: "bart", "marian", "t5"
  int d_model = 0;
  // Each stack's head size: d_kv (T5: heads · d_kv may differ from d_model), else d_model /
  // that stack's heads (BART and Marian may give the two stacks different head counts; the
  // decoder's cross-attention has the decoder's heads).
  int head_dim = 0, decoder_head_dim = 0;
  Seq2SeqStack encoder, decoder;
  int vocab = 0;          // rows of the encoder's embedding
  int decoder_vocab = 0;  // rows of the decoder's embedding and of the LM head The most tokens each
                          // side takes (source with its specials; target with the start token).
  int max_source_tokens = 0, max_target_tokens = 0;

  Seq2SeqNorm norm = Seq2SeqNorm::kLayer;
  float norm_eps = 1e-5f;
  // Pre-norm layers (T5: x + f(norm(x)); mBART's normalize_before) or post-norm (BART, Marian:
  // norm(x + f(x))).
  bool pre_norm = false;
  // A norm after the last layer of each stack (T5's final_layer_norm; mBART's layer_norm).
  bool final_norms = false;
  // A LayerNorm on the embeddings (BART's layernorm_embedding), on both stacks.
  bool embedding_norm = false;

  Seq2SeqPositions positions = Seq2SeqPositions::kLearned;
  int position_offset = 0;  // BART's learned positions: row = position + 2
  int position_rows = 0;    // rows of the learned table (max_position_embeddings + offset)
  int relative_buckets = 32, relative_max_distance = 128;  // T5

  float embedding_scale = 1.0f;  // √d_model when scale_embedding (BART, Marian), else 1
  // The factor of q·kᵀ in each stack: head_dim^-½ (BART, Marian); 1 (T5: no scaling).
  float attention_scale = 1.0f, decoder_attention_scale = 1.0f;
  bool biases = true;      // every projection and MLP layer has a bias (not T5)
  bool gated_mlp = false;  // T5 v1.1's wo(act(wi_0(x)) · wi_1(x)); else fc2(act(fc1(x)))
  Seq2SeqActivation activation = Seq2SeqActivation::kGeluErf;

  bool separate_embeddings = false;  // Marian's share_encoder_decoder_embeddings = false
  bool tied_lm_head = true;          // the LM head is the decoder's embedding
  float lm_head_scale = 1.0f;        // T5 tied: d_model^-½ on the decoder's output
  bool final_logits_bias = false;    // BART, Marian: the buffer final_logits_bias [1 x vocab]

  int decoder_start_id = 0;
  int eos_id = -1;
  int pad_id = -1;
  // The logits processors Hugging Face's generate builds from the generation settings, which the
  // greedy decoding applies (Seq2SeqGenerationSettings: generation_config.json, else config.json).
  // Forced tokens (ForcedBOS/EOSTokenLogitsProcessor; -1 none): BOS as the first generated token,
  // EOS as the last one the length limit allows.
  int forced_bos_id = -1;
  int forced_eos_id = -1;
  // Sequences generate never writes (bad_words_ids): Marian's [[pad]].
  std::vector<std::vector<int>> bad_words;
  int no_repeat_ngram_size = 0;  // no n-gram of this size twice in the decoder's ids (0: off)
  int min_length = 0;            // eos banned while the decoder's ids are fewer (start included)

  Seq2SeqTensorNames tensor_names = Seq2SeqTensorNames::kBart;
  Seq2SeqTokenizer tokenizer = Seq2SeqTokenizer::kTokenizerJson;

  int inner() const { return encoder.heads * head_dim; }  // the encoder's q/k/v width
  int decoder_inner() const { return decoder.heads * decoder_head_dim; }
};

// ---- what the family files share ----------------------------------------------------------------
// The activation an HF ACT2FN name stands for; ModelError naming `key` for others.
Seq2SeqActivation seq2seq_activation(const std::string& name, const std::string& key,
                                     const std::filesystem::path& where);
// A token id (0 allowed) from config[key]; `fallback` when absent or null (-1: required).
int seq2seq_token_id(const nlohmann::json& config, const std::string& key, int fallback,
                     const std::filesystem::path& where);
// config[key] as a token id when present and not null, else -1 (forced_bos_token_id …).
int seq2seq_optional_token_id(const nlohmann::json& config, const std::string& key,
                              const std::filesystem::path& where);
// bad_words_ids: a list of lists of token ids (absent or null: none).
std::vector<std::vector<int>> seq2seq_bad_words(const nlohmann::json& config,
                                                const std::filesystem::path& where);
// BART's config keys for the two stacks (Marian's are the same, its modeling code a copy of
// BART's): d_model, encoder_/decoder_ layers, attention_heads and ffn_dim; each stack's head size
// d_model / its heads (ModelError naming `where` when they do not divide).
void read_bart_stacks(Seq2SeqSpec& spec, const nlohmann::json& config,
                      const std::filesystem::path& where);
// The generation settings greedy decoding applies (forced_bos_token_id, forced_eos_token_id,
// bad_words_ids, no_repeat_ngram_size, min_length) from `json` (config.json or
// generation_config.json); keys it lacks take GenerationConfig's defaults (none, 0).
void read_seq2seq_generation_settings(Seq2SeqSpec& spec, const nlohmann::json& json,
                                      const std::filesystem::path& where);
// generation_config.json beside config.json, when the folder has one: as Hugging Face's
// from_pretrained, its settings replace config.json's (GenerationConfig.from_pretrained instead of
// from_model_config), and its decoder_start_token_id / eos_token_id override the config's.
void apply_generation_config(Seq2SeqSpec& spec, const std::filesystem::path& folder);
// Refuses what the network cannot run (sizes, ids beyond the vocabulary); ModelError naming
// `where`.
void check_seq2seq_spec(const Seq2SeqSpec& spec, const std::filesystem::path& where);

// ---- the families (one file each under families/) ---------------------------------------------
Seq2SeqSpec bart_spec(const nlohmann::json& config, const std::filesystem::path& where);
Seq2SeqSpec marian_spec(const nlohmann::json& config, const std::filesystem::path& where);
Seq2SeqSpec t5_spec(const nlohmann::json& config, const std::filesystem::path& where);

}  // namespace attnscope
