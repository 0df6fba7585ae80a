#pragma once
// The built-in real trained model (model spec `stories`): Andrej Karpathy's stories260K, a
// 5-layer Llama with grouped-query attention trained with llama2.c on TinyStories (MIT), shipped as
// the Hugging Face folder assets/stories260K/ (provenance: assets/stories260K/PROVENANCE.md). It
// writes English ("Once upon a time, there was a little girl named Lily."), so generation in class
// shows a model that learned something. Like `tiny`, it opens through the ordinary decoder loader;
// only where it is found and what it is called differ.
#include <filesystem>
#include <memory>

#include "core/model/model.h"
#include "core/model/registry.h"

namespace attnscope {

inline constexpr const char* kStoriesModelSpec = "stories";
inline constexpr const char* kStoriesModelTitle = "a real Llama trained on TinyStories";

// assets/stories260K, found like the other assets (core/util/assets.h); throws ModelError naming
// every folder tried.
std::filesystem::path stories_model_folder();

// Throws ModelError when the asset folder is missing or broken.
std::shared_ptr<const Model> open_stories_model(const ProgressFn& progress = {});

// Its line in list_models(): kind "llama" when the folder is there, "unsupported" (with the reason
// as the note) when it is not.
ModelListing stories_model_listing();

}  // namespace attnscope
