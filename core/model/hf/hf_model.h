#pragma once
// Hugging Face model folders: finding them (a path, the HF hub cache, ./models), reading
// config.json and dispatching to the architecture's loader.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/registry.h"

namespace attnscope {

// `spec` is a folder path or a repo id ("gpt2", "google-bert/bert-base-uncased") looked up in
// $HF_HOME/hub, ~/.cache/huggingface/hub and ./models. Throws UsageError/ModelError.
std::shared_ptr<const Model> open_hf_model(const std::string& spec, const ProgressFn& progress);

// Every model folder found in the places above.
std::vector<ModelListing> list_hf_models();

}  // namespace attnscope
