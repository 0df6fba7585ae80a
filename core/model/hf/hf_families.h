#pragma once
// The model families attnscope opens from Hugging Face folders, by config.json's model_type: one
// line each in hf_families.cpp. A decoder family (GPT-2 among them) is a DecoderSpec mapping
// (core/model/decoder/families/*.cpp); BERT, an encoder, has a loader of its own.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/decoder/decoder_spec.h"
#include "core/model/model.h"

namespace attnscope {

using HfLoader = std::shared_ptr<const Model> (*)(const std::filesystem::path& folder,
                                                  const nlohmann::json& config,
                                                  const ProgressFn& progress);

using DecoderSpecFn = DecoderSpec (*)(const nlohmann::json& config,
                                      const std::filesystem::path& where);

struct HfFamily {
  std::string model_type;           // config.json's model_type, also ModelInfo::kind
  std::string architecture_prefix;  // old configs without model_type: "GPT2LMHeadModel" -> gpt2
  HfLoader load;
  DecoderSpecFn decoder_spec = nullptr;  // a decoder family's config.json mapping (else null)
};

const std::vector<HfFamily>& hf_families();
// The family of a config (model_type, else its architectures), or nullptr.
const HfFamily* find_hf_family(const nlohmann::json& config);
// The DecoderSpec of a decoder family's config (`where` names config.json in errors); throws
// ModelError when the config is not one of the decoder families.
DecoderSpec decoder_spec_of(const nlohmann::json& config, const std::filesystem::path& where);

}  // namespace attnscope
