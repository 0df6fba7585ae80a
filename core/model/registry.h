#pragma once
// Opening a model from a spec (shared/DESIGN.md): "lesson", a Hugging Face model folder, or a repo
// id found in the Hugging Face cache.
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace attnscope {

// Throws UsageError for an unknown spec, ModelError for a broken model folder.
std::shared_ptr<const Model> open_model(const std::string& spec, const ProgressFn& progress = {});

struct ModelListing {
  std::string spec;  // what to pass to open_model
  std::string kind;  // "lesson", a model_type attnscope opens ("gpt2", "llama", …), "unsupported"
  std::string where;  // "built-in" or a folder
  std::string note;   // e.g. "only pytorch_model.bin: convert to safetensors"
  std::string title;  // what a picker shows instead of the kind ("tiny trained transformer"), or ""
};

std::vector<ModelListing> list_models();

}  // namespace attnscope
