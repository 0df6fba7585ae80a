// BART (model_type "bart"; after modeling_bart.py): post-LayerNorm encoder and decoder layers
// (BartEncoderLayer, BartDecoderLayer: norm(x + f(x))), learned positions offset by 2
// (BartLearnedPositionalEmbedding), layernorm_embedding on both stacks' embeddings, embeddings
// scaled by √d_model when scale_embedding, queries scaled by head_dim^-½ (BartAttention.scaling),
// biases on every projection, fc2(act(fc1(x))) with activation_function, the LM head tied to
// model.shared plus final_logits_bias (BartForConditionalGeneration). Generation starts with
// decoder_start_token_id (2).
#include <cmath>

#include "core/model/seq2seq/seq2seq_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

Seq2SeqSpec bart_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  Seq2SeqSpec s;
  s.kind = "bart";
  read_bart_stacks(s, config, where);
  s.vocab = s.decoder_vocab = config_int(config, "vocab_size", -1, where);
  const int positions = config_int(config, "max_position_embeddings", 1024, where);
  s.max_source_tokens = s.max_target_tokens = positions;
  s.positions = Seq2SeqPositions::kLearned;
  s.position_offset = 2;
  s.position_rows = positions + 2;
  s.norm = Seq2SeqNorm::kLayer;
  s.norm_eps = 1e-5f;  // nn.LayerNorm's default
  s.embedding_norm = true;
  s.embedding_scale = config_bool(config, "scale_embedding", false, where)
                          ? static_cast<float>(std::sqrt(static_cast<double>(s.d_model)))
                          : 1.0f;
  s.attention_scale = static_cast<float>(std::pow(static_cast<double>(s.head_dim), -0.5));
  s.decoder_attention_scale =
      static_cast<float>(std::pow(static_cast<double>(s.decoder_head_dim), -0.5));
  s.biases = true;
  s.activation = seq2seq_activation(config_string(config, "activation_function", "gelu", where),
                                    "activation_function", where);
  s.tied_lm_head = config_bool(config, "tie_word_embeddings", true, where);
  s.final_logits_bias = true;
  s.pad_id = seq2seq_token_id(config, "pad_token_id", 1, where);
  s.eos_id = seq2seq_token_id(config, "eos_token_id", 2, where);
  s.decoder_start_id = seq2seq_token_id(config, "decoder_start_token_id", 2, where);
  read_seq2seq_generation_settings(s, config, where);
  s.tensor_names = Seq2SeqTensorNames::kBart;
  s.tokenizer = Seq2SeqTokenizer::kTokenizerJson;
  return s;
}

}  // namespace attnscope
