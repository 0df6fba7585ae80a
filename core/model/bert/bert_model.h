#pragma once
#include <filesystem>
#include <memory>

#include "core/model/bert/encoder_spec.h"
#include "core/model/model.h"
#include "core/text/tokenizer.h"

namespace attnscope {

// An encoder model from a Hugging Face folder (config.json, model.safetensors, vocab.txt or
// tokenizer.json), of the family `spec` describes (BERT, RoBERTa, XLM-R, DistilBERT). Throws
// ModelError naming the file and problem.
std::shared_ptr<const Model> load_bert_model(const std::filesystem::path& folder,
                                             const EncoderSpec& spec, const ProgressFn& progress);
// The same with the family read from config.json (BERT when it names none).
std::shared_ptr<const Model> load_bert_model(const std::filesystem::path& folder,
                                             const ProgressFn& progress);

// The tokens an encoder of `spec` reads for `text`, before truncation: the family's specials
// around the tokenizer's pieces and a typed separator doubled where the family's pair has two
// (RoBERTa: <s> a </s></s> b </s>). What the model's tokenize gives, without loading its weights
// (`attnscope tokenize` on a folder). Throws ModelError when the vocabulary lacks a special.
Tokens encoder_tokenize(const Tokenizer& tokenizer, const EncoderSpec& spec,
                        const std::string& text);

}  // namespace attnscope
