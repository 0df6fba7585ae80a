// T5 (model_type "t5": T5 v1.0, T5 v1.1 and flan-t5; after modeling_t5.py): pre-norm layers with
// T5LayerNorm (RMSNorm, weight only, layer_norm_epsilon) and a final_layer_norm on both stacks, no
// biases, no scaling of the scores (T5Attention), a learned bias per head and relative-position
// bucket added to the self-attention scores (held by block 0's relative_attention_bias and reused
// by every layer; bidirectional buckets in the encoder, unidirectional in the decoder;
// cross-attention has none), heads of d_kv dimensions (num_heads · d_kv may differ from d_model),
// DenseReluDense: wo(relu(wi(x))), or with feed_forward_proj "gated-gelu" wo(gelu_new(wi_0(x)) ·
// wi_1(x)) (T5DenseGatedActDense). The LM head is the shared embedding on d_model^-½ · x when
// tie_word_embeddings (T5 v1.0), else lm_head.weight (v1.1, flan-t5). Decoding starts with
// decoder_start_token_id (0, the pad id) and stops at </s> (1).
#include <cmath>

#include "core/model/seq2seq/seq2seq_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

Seq2SeqSpec t5_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  Seq2SeqSpec s;
  s.kind = "t5";
  s.d_model = config_int(config, "d_model", -1, where);
  s.head_dim = s.decoder_head_dim = config_int(config, "d_kv", -1, where);
  const int heads = config_int(config, "num_heads", -1, where);
  const int ff = config_int(config, "d_ff", -1, where);
  const int layers = config_int(config, "num_layers", -1, where);
  s.encoder = {layers, heads, ff};
  s.decoder = {config_int(config, "num_decoder_layers", layers, where), heads, ff};
  s.vocab = s.decoder_vocab = config_int(config, "vocab_size", -1, where);
  // Relative positions set no hard limit; the tokenizer's model_max_length (n_positions) does.
  const int positions = config_int(config, "n_positions", 512, where);
  s.max_source_tokens = s.max_target_tokens = positions;
  s.positions = Seq2SeqPositions::kRelative;
  s.relative_buckets = config_int(config, "relative_attention_num_buckets", 32, where);
  s.relative_max_distance = config_int(config, "relative_attention_max_distance", 128, where);
  s.norm = Seq2SeqNorm::kRms;
  s.norm_eps = config_float(config, "layer_norm_epsilon", 1e-6f, where);
  s.pre_norm = true;
  s.final_norms = true;
  s.embedding_scale = 1.0f;
  s.attention_scale = s.decoder_attention_scale = 1.0f;
  s.biases = false;
  // feed_forward_proj: "relu", "gelu", "gated-gelu" (gelu_new, as T5Config maps it), "gated-silu"…
  const std::string proj = config_string(config, "feed_forward_proj", "relu", where);
  std::string act = proj;
  if (proj.rfind("gated-", 0) == 0) {
    s.gated_mlp = true;
    act = proj.substr(6);
    if (act == "gelu") act = "gelu_new";
  }
  if (act.empty() || act.find('-') != std::string::npos)
    throw ModelError(where.string() + ": 'feed_forward_proj' is '" + proj +
                     "', expected an activation or gated-{activation} (relu, gated-gelu …)");
  s.activation = seq2seq_activation(act, "feed_forward_proj", where);
  s.tied_lm_head = config_bool(config, "tie_word_embeddings", true, where);
  s.lm_head_scale =
      s.tied_lm_head ? static_cast<float>(std::pow(static_cast<double>(s.d_model), -0.5)) : 1.0f;
  s.final_logits_bias = false;
  s.pad_id = seq2seq_token_id(config, "pad_token_id", 0, where);
  s.eos_id = seq2seq_token_id(config, "eos_token_id", 1, where);
  s.decoder_start_id = seq2seq_token_id(config, "decoder_start_token_id", s.pad_id, where);
  read_seq2seq_generation_settings(s, config, where);
  s.tensor_names = Seq2SeqTensorNames::kT5;
  s.tokenizer = Seq2SeqTokenizer::kTokenizerJson;
  return s;
}

}  // namespace attnscope
