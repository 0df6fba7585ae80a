#pragma once
#include <filesystem>
#include <memory>

#include "core/model/model.h"

namespace attnscope {

// A BERT family model from a Hugging Face folder (config.json, model.safetensors, vocab.txt or
// tokenizer.json). Throws ModelError naming the file and problem.
std::shared_ptr<const Model> load_bert_model(const std::filesystem::path& folder,
                                             const ProgressFn& progress);

}  // namespace attnscope
