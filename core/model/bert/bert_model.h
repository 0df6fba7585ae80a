#pragma once
#include <filesystem>
#include <memory>

#include "core/model/bert/encoder_spec.h"
#include "core/model/model.h"

namespace attnscope {

// An encoder model from a Hugging Face folder (config.json, model.safetensors, vocab.txt or
// tokenizer.json), of the family `spec` describes (BERT, RoBERTa, XLM-R, DistilBERT). Throws
// ModelError naming the file and problem.
std::shared_ptr<const Model> load_bert_model(const std::filesystem::path& folder,
                                             const EncoderSpec& spec, const ProgressFn& progress);
// The same with the family read from config.json (BERT when it names none).
std::shared_ptr<const Model> load_bert_model(const std::filesystem::path& folder,
                                             const ProgressFn& progress);

}  // namespace attnscope
