#pragma once
// A model's weights as Hugging Face saves them: one model.safetensors, or shards listed by
// model.safetensors.index.json ("weight_map": tensor name -> shard file). Every shard is
// memory-mapped; tensors are found by name whatever shard holds them.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model/hf/safetensors.h"

namespace attnscope {

class Checkpoint {
 public:
  // Opens `folder`'s model.safetensors.index.json and its shards, else model.safetensors. Throws
  // ModelError naming the file (a shard listed in the index but missing, a tensor the index puts in
  // a shard that lacks it).
  static Checkpoint open(const std::filesystem::path& folder);

  bool has(const std::string& name) const;
  RawTensor raw(const std::string& name) const;  // in the file's dtype, memory-mapped
  Matrix matrix(const std::string& name) const;  // widened to float
  // The file holding `name` (for messages); for a missing one the file (or index) that lacks it.
  std::filesystem::path file_of(const std::string& name) const;
  const std::filesystem::path& folder() const { return folder_; }

 private:
  const SafetensorsFile* shard_of(const std::string& name) const;
  std::filesystem::path folder_;
  bool sharded_ = false;
  std::vector<std::shared_ptr<SafetensorsFile>> shards_;
  std::map<std::string, const SafetensorsFile*> where_;
};

}  // namespace attnscope
