#pragma once
#include <filesystem>
#include <memory>

#include "core/model/model.h"

namespace attnscope {

// A GPT-2 family model from a Hugging Face folder (config.json, model.safetensors, vocab.json +
// merges.txt or tokenizer.json). Throws ModelError naming the file and problem.
std::shared_ptr<const Model> load_gpt2_model(const std::filesystem::path& folder,
                                             const ProgressFn& progress);

}  // namespace attnscope
