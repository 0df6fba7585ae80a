// BERT (model_type "bert"; after modeling_bert.py): learned absolute positions from row 0, two
// token types (sentence A and B), post-LayerNorm layers, [CLS] … [SEP] around the text. Its
// key names (num_hidden_layers, hidden_size, hidden_act …) are RoBERTa's and XLM-R's too.
#include "core/model/bert/encoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

Gelu encoder_gelu(const nlohmann::json& config, const std::string& key,
                  const std::filesystem::path& where) {
  const std::string act = config_string(config, key, "gelu", where);
  if (act == "gelu") return Gelu::kErf;
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") return Gelu::kTanh;
  throw ModelError(where.string() + ": " + key + " '" + act + "' is not supported");
}

BertConfig read_bert_style_config(const nlohmann::json& j, const std::filesystem::path& path) {
  BertConfig c;
  c.layers = config_int(j, "num_hidden_layers", -1, path);
  c.heads = config_int(j, "num_attention_heads", -1, path);
  c.d_model = config_int(j, "hidden_size", -1, path);
  c.d_ff = config_int(j, "intermediate_size", 4 * c.d_model, path);
  c.positions = config_int(j, "max_position_embeddings", 512, path);
  c.type_vocab = config_int(j, "type_vocab_size", 2, path);
  c.vocab = config_int(j, "vocab_size", 30522, path);
  c.ln_eps = config_float(j, "layer_norm_eps", 1e-12f, path);
  c.gelu = encoder_gelu(j, "hidden_act", path);
  const std::string pos = config_string(j, "position_embedding_type", "absolute", path);
  if (pos != "absolute")
    throw ModelError(path.string() + ": position_embedding_type '" + pos + "' is not supported");
  if (c.d_model % c.heads != 0)
    throw ModelError(path.string() + ": hidden_size (" + std::to_string(c.d_model) +
                     ") is not a multiple of num_attention_heads (" + std::to_string(c.heads) +
                     ")");
  return c;
}

EncoderSpec bert_encoder_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  EncoderSpec s;
  s.config = read_bert_style_config(config, where);
  s.config.kind = "bert";  // also for old configs that name only the architecture
  // BertForMaskedLM / BertForPreTraining save "bert.…"; cls.*, pooler and position_ids buffers
  // are never asked for.
  s.names.prefixes = {"bert."};
  return s;
}

}  // namespace attnscope
