#include "core/model/hf/checkpoint.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/util/error.h"

namespace attnscope {
namespace fs = std::filesystem;

Checkpoint Checkpoint::open(const fs::path& folder) {
  Checkpoint c;
  c.folder_ = folder;
  const fs::path index = folder / "model.safetensors.index.json";
  std::error_code ec;
  c.sharded_ = fs::is_regular_file(index, ec);
  if (!c.sharded_) {
    c.shards_.push_back(
        std::make_shared<SafetensorsFile>(SafetensorsFile::open(folder / "model.safetensors")));
    for (const auto& [name, info] : c.shards_.back()->tensors())
      c.where_[name] = c.shards_.back().get();
    return c;
  }
  nlohmann::json j;
  try {
    std::ifstream in(index, std::ios::binary);
    if (!in) throw ModelError(index.string() + ": cannot open");
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(index.string() + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw ModelError(index.string() + ": expected an object with a \"weight_map\" object");
  std::map<std::string, const SafetensorsFile*> by_file;
  for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
    if (!it.value().is_string())
      throw ModelError(index.string() + ": weight_map entry '" + it.key() +
                       "' must name a file (a string)");
    const std::string file = it.value().get<std::string>();
    // A shard is a file beside the index, never a path elsewhere.
    if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
      throw ModelError(index.string() + ": weight_map entry '" + it.key() + "' names '" + file +
                       "', expected a file name in the same folder");
    auto found = by_file.find(file);
    if (found == by_file.end()) {
      if (!fs::is_regular_file(folder / file, ec))
        throw ModelError(index.string() + ": shard '" + file + "' (holding '" + it.key() +
                         "') is missing: interrupted download?");
      c.shards_.push_back(std::make_shared<SafetensorsFile>(SafetensorsFile::open(folder / file)));
      found = by_file.emplace(file, c.shards_.back().get()).first;
    }
    if (!found->second->has(it.key()))
      throw ModelError((folder / file).string() + ": tensor '" + it.key() +
                       "' is missing, though model.safetensors.index.json puts it in this shard");
    c.where_[it.key()] = found->second;
  }
  return c;
}

const SafetensorsFile* Checkpoint::shard_of(const std::string& name) const {
  const auto it = where_.find(name);
  return it == where_.end() ? nullptr : it->second;
}

bool Checkpoint::has(const std::string& name) const {
  return shard_of(name) != nullptr;
}

RawTensor Checkpoint::raw(const std::string& name) const {
  const SafetensorsFile* f = shard_of(name);
  if (!f) throw ModelError(file_of(name).string() + ": tensor '" + name + "' is missing");
  return f->raw(name);
}

Matrix Checkpoint::matrix(const std::string& name) const {
  const SafetensorsFile* f = shard_of(name);
  if (!f) throw ModelError(file_of(name).string() + ": tensor '" + name + "' is missing");
  return f->matrix(name);
}

fs::path Checkpoint::file_of(const std::string& name) const {
  if (const SafetensorsFile* f = shard_of(name)) return f->path();
  // A missing tensor: the one file, or the index that should have listed it.
  return shards_.size() == 1 && !sharded_ ? shards_[0]->path()
                                          : folder_ / "model.safetensors.index.json";
}

}  // namespace attnscope
