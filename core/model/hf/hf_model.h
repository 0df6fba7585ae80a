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
// ./models and the hub cache (resolve_model_spec() in hub_cache.h has the rules). Reads
// config.json and calls its family's loader (hf_families.h), passing `progress` on. Throws
// UsageError (no such model) or ModelError (config.json missing or invalid, unsupported model type,
// only pytorch_model.bin, or the loader's own errors).
std::shared_ptr<const Model> open_hf_model(const std::string& spec, const ProgressFn& progress);

// Every model folder found in the places above, with its kind (model_type) or "unsupported", a spec
// that opens it (the repo id, or the folder's path when another folder shadows that id) and a note
// saying why it cannot be opened, if it cannot.
std::vector<ModelListing> list_hf_models();

}  // namespace attnscope
