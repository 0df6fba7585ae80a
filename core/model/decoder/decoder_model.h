#pragma once
#include <filesystem>
#include <memory>

#include "core/model/decoder/decoder_spec.h"
#include "core/model/model.h"

namespace attnscope {

// A decoder model from a Hugging Face folder (config.json mapped to `spec` by its family,
// safetensors in one file or shards, tokenizer.json). Throws ModelError naming the file and
// problem.
std::shared_ptr<const Model> load_decoder_model(const std::filesystem::path& folder,
                                                DecoderSpec spec, const ProgressFn& progress);

}  // namespace attnscope
