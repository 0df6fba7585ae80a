// DistilBERT (model_type "distilbert"; after modeling_distilbert.py): BERT's post-LayerNorm layers
// with half of them, no token types, its own key names (dim, n_layers, n_heads, hidden_dim,
// activation) and tensor names (transformer.layer.N.attention.q_lin …, sa_layer_norm, ffn.lin1,
// output_layer_norm), under "distilbert." in DistilBertForMaskedLM (whose vocab_* head is not
// read). Its layer norms' epsilon is fixed at 1e-12 in the code, not in config.json. With
// sinusoidal_pos_embds the stored position table is the sinusoidal one, so reading it as stored is
// right either way. [CLS] … [SEP] around the text (BERT's WordPiece vocabulary).
#include "core/model/bert/encoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

EncoderSpec distilbert_encoder_spec(const nlohmann::json& j, const std::filesystem::path& where) {
  EncoderSpec s;
  BertConfig& c = s.config;
  c.kind = "distilbert";
  c.layers = config_int(j, "n_layers", -1, where);
  c.heads = config_int(j, "n_heads", -1, where);
  c.d_model = config_int(j, "dim", -1, where);
  c.d_ff = config_int(j, "hidden_dim", 4 * c.d_model, where);
  c.positions = config_int(j, "max_position_embeddings", 512, where);
  c.type_vocab = 0;
  c.vocab = config_int(j, "vocab_size", 30522, where);
  c.ln_eps = 1e-12f;  // nn.LayerNorm(config.dim, eps=1e-12) in Embeddings and TransformerBlock
  c.gelu = encoder_gelu(j, "activation", where);
  config_bool(j, "sinusoidal_pos_embds", false, where);  // a wrong type is still an error
  if (c.d_model % c.heads != 0)
    throw ModelError(where.string() + ": dim (" + std::to_string(c.d_model) +
                     ") is not a multiple of n_heads (" + std::to_string(c.heads) + ")");
  EncoderTensorNames& n = s.names;
  n.prefixes = {"distilbert."};
  n.token_type.clear();
  n.layer = "transformer.layer.";
  n.query = "attention.q_lin";
  n.key = "attention.k_lin";
  n.value = "attention.v_lin";
  n.attention_out = "attention.out_lin";
  n.attention_norm = "sa_layer_norm";
  n.mlp_up = "ffn.lin1";
  n.mlp_down = "ffn.lin2";
  n.mlp_norm = "output_layer_norm";
  return s;
}

}  // namespace attnscope
