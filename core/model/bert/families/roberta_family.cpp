// RoBERTa (model_type "roberta"; after modeling_roberta.py): BERT's layers and tensor names under
// "roberta." (RobertaForMaskedLM; its lm_head.* is not read, as BERT's cls.* is not), one token
// type, positions that start after padding_idx (RobertaEmbeddings /
// create_position_ids_from_input_ids: max_position_embeddings is 514 for 512 tokens), and
// <s> … </s> around the text, <s> a </s></s> b </s> for a sentence pair (RobertaProcessing).
#include "core/model/bert/encoder_spec.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

EncoderSpec roberta_encoder_spec(const nlohmann::json& config, const std::filesystem::path& where) {
  EncoderSpec s;
  s.config = read_bert_style_config(config, where);
  s.config.kind = "roberta";
  // pad_token_id is RobertaEmbeddings' padding_idx (1 in every released checkpoint). It may be 0,
  // which config_int (positive numbers) refuses, hence the own check.
  const auto pad = config.find("pad_token_id");
  int padding_idx = 1;
  if (pad != config.end() && !pad->is_null()) {
    if (!pad->is_number_integer() || pad->get<long long>() < 0 ||
        pad->get<long long>() >= s.config.positions - 1)
      throw ModelError(where.string() + ": 'pad_token_id' (RoBERTa's padding_idx) must be an " +
                       "integer from 0 to max_position_embeddings - 2 (" +
                       std::to_string(s.config.positions - 2) + "), found " + pad->dump());
    padding_idx = static_cast<int>(pad->get<long long>());
  } else if (s.config.positions < 3) {
    throw ModelError(where.string() + ": 'max_position_embeddings' (" +
                     std::to_string(s.config.positions) +
                     ") leaves no position after padding_idx 1");
  }
  s.config.position_padding_idx = padding_idx;
  s.names.prefixes = {"roberta."};
  s.cls = "<s>";
  s.sep = "</s>";
  s.pair_separators = 2;
  return s;
}

}  // namespace attnscope
