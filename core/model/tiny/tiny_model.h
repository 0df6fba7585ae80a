#pragma once
// The built-in "tiny trained transformer" (model spec `tiny`): a 4-layer Llama-shaped decoder
// trained on Debian text by tools/train_tiny_model.py, shipped as the Hugging Face folder
// assets/tiny_model/ (provenance: assets/tiny_model.md). It opens through the same decoder loader
// as any Llama folder; only where it is found and what it is called differ.
#include <filesystem>
#include <memory>

#include "core/model/model.h"
#include "core/model/registry.h"

namespace attnscope {

inline constexpr const char* kTinyModelSpec = "tiny";
inline constexpr const char* kTinyModelTitle = "tiny trained transformer";

// assets/tiny_model, found like the lesson vectors (core/util/assets.h); throws ModelError naming
// every folder tried.
std::filesystem::path tiny_model_folder();

// Throws ModelError when the asset folder is missing or broken.
std::shared_ptr<const Model> open_tiny_model(const ProgressFn& progress = {});

// Its line in list_models(): kind "llama" when the folder is there, "unsupported" (with the reason
// as the note) when it is not.
ModelListing tiny_model_listing();

}  // namespace attnscope
