// Marian (model_type "marian", the OPUS-MT translation models; after modeling_marian.py): BART's
// post-LayerNorm layers and tensor names without layernorm_embedding, sinusoidal positions computed
// by MarianSinusoidalPositionalEmbedding (sin in the first half of the columns, cos in the second;
// any stored embed_positions is not read), embeddings scaled by √d_model when scale_embedding (true
// in every OPUS-MT config), swish activation, final_logits_bias, the LM head tied to the decoder's
// embedding. share_encoder_decoder_embeddings = false gives the decoder its own embedding of
// decoder_vocab_size rows. Decoding starts with decoder_start_token_id (the pad id) and never
// writes bad_words_ids ([[pad]] in the released configs). Tokenized by source.spm / target.spm with
// vocab.json (core/text/marian_tokenizer.h).
#include <cmath>

#include "core/model/seq2seq/seq2seq_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

Seq2SeqSpec marian_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  Seq2SeqSpec s;
  s.kind = "marian";
  read_bart_stacks(s, config, where);
  s.vocab = config_int(config, "vocab_size", -1, where);
  s.separate_embeddings = !config_bool(config, "share_encoder_decoder_embeddings", true, where);
  s.decoder_vocab =
      s.separate_embeddings ? config_int(config, "decoder_vocab_size", s.vocab, where) : s.vocab;
  const int positions = config_int(config, "max_position_embeddings", 1024, where);
  s.max_source_tokens = s.max_target_tokens = positions;
  s.positions = Seq2SeqPositions::kSinusoidal;
  s.position_rows = positions;
  s.norm = Seq2SeqNorm::kLayer;
  s.norm_eps = 1e-5f;
  s.embedding_norm = false;
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
  s.pad_id = seq2seq_token_id(config, "pad_token_id", 58100, where);
  s.eos_id = seq2seq_token_id(config, "eos_token_id", 0, where);
  s.decoder_start_id = seq2seq_token_id(config, "decoder_start_token_id", s.pad_id, where);
  read_seq2seq_generation_settings(s, config, where);
  s.tensor_names = Seq2SeqTensorNames::kBart;
  s.tokenizer = Seq2SeqTokenizer::kMarian;
  return s;
}

}  // namespace attnscope
