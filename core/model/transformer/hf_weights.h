#pragma once
// Reading a Hugging Face folder's config.json and model.safetensors into host tensors, with the
// checks and messages every architecture needs: a missing tensor or key is named, a wrong shape
// says what was expected.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/backend.h"
#include "core/model/hf/checkpoint.h"

namespace attnscope {

// The parsed JSON of `path`; throws ModelError naming the file.
nlohmann::json read_json_file(const std::filesystem::path& path);

// config[key] as a positive int up to 2^24; `fallback` < 0 means required. Throws ModelError naming
// the key.
int config_int(const nlohmann::json& config, const std::string& key, int fallback,
               const std::filesystem::path& where);
// config[key] as a positive finite float (all of them are: epsilons, rope bases).
float config_float(const nlohmann::json& config, const std::string& key, float fallback,
                   const std::filesystem::path& where);
// config[key] as a string; a number or array there is an error naming the key, not a JSON
// library's type_error.
std::string config_string(const nlohmann::json& config, const std::string& key,
                          const std::string& fallback, const std::filesystem::path& where);
// config[key] as true/false (null or absent: `fallback`); anything else is an error naming the key.
bool config_bool(const nlohmann::json& config, const std::string& key, bool fallback,
                 const std::filesystem::path& where);

// Tensors of one checkpoint (one file or shards). Checkpoints save the same weights with or without
// the base model's prefix ("transformer." in GPT2LMHeadModel, "bert." in BertForMaskedLM), so each
// name is tried bare and with every prefix.
class HfWeightReader {
 public:
  HfWeightReader(const Checkpoint& file, std::vector<std::string> prefixes);

  // The first of `names` present (alternatives such as LayerNorm.weight / LayerNorm.gamma), as a
  // host tensor of shape [rows x cols]; a 1-D tensor of `cols` values reads as [1 x cols].
  Tensor get(const std::vector<std::string>& names, int rows, int cols) const;
  Tensor get(const std::string& name, int rows, int cols) const {
    return get(std::vector<std::string>{name}, rows, cols);
  }

 private:
  const Checkpoint& file_;
  std::vector<std::string> prefixes_;
};

}  // namespace attnscope

namespace attnscope {

// A readable model name for a folder: the repo id for a Hugging Face cache snapshot
// (".../models--openai-community--gpt2/snapshots/<hash>" -> "openai-community/gpt2"), else the
// folder's own name.
std::string model_name_from_folder(const std::filesystem::path& folder);

}  // namespace attnscope
