// XLM-RoBERTa (model_type "xlm-roberta"; modeling_xlm_roberta.py is RoBERTa's network under other
// class names, its tensors under "roberta." in XLMRobertaForMaskedLM too). What differs is the
// tokenizer (a SentencePiece Unigram model with the Precompiled normalizer, read from
// tokenizer.json by core/text) and the vocabulary size (250002).
#include "core/model/bert/encoder_spec.h"

namespace attnscope {

EncoderSpec xlm_roberta_encoder_spec(const nlohmann::json& config,
                                     const std::filesystem::path& where) {
  EncoderSpec s = roberta_encoder_spec(config, where);
  s.config.kind = "xlm-roberta";
  return s;
}

}  // namespace attnscope
