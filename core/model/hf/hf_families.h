#pragma once
// The model families attnscope opens from Hugging Face folders, by config.json's model_type: one
// line each in hf_families.cpp. A decoder family is a DecoderSpec mapping (core/model/decoder/
// families/*.cpp); GPT-2 and BERT have loaders of their own.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/model.h"

namespace attnscope {

using HfLoader = std::shared_ptr<const Model> (*)(const std::filesystem::path& folder,
                                                  const nlohmann::json& config,
                                                  const ProgressFn& progress);

struct HfFamily {
  std::string model_type;           // config.json's model_type, also ModelInfo::kind
  std::string architecture_prefix;  // old configs without model_type: "GPT2LMHeadModel" -> gpt2
  HfLoader load;
};

const std::vector<HfFamily>& hf_families();
// The family of a config (model_type, else its architectures), or nullptr.
const HfFamily* find_hf_family(const nlohmann::json& config);

}  // namespace attnscope
