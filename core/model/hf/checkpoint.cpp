#include "core/model/hf/checkpoint.h"

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/util/file_read.h"
#include "core/util/json_file.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

// Why a shard named by the index cannot be opened: absent (an interrupted download) or a symlink
// loop, a dangling link, a directory …
std::string shard_problem(const fs::path& shard) {
  if (!path_present(shard)) return "is missing: interrupted download?";
  return regular_file_problem(shard);
}

}  // namespace

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
  // Bounded reading and a short parse message: nlohmann's own quotes the whole bad token (two
  // million characters for a 2 MB unterminated string).
  const nlohmann::json j = load_json_file(index, "weight index");
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw ModelError(index.string() + ": expected an object with a \"weight_map\" object");
  std::map<std::string, const SafetensorsFile*> by_file;
  for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
    if (!it.value().is_string())
      throw ModelError(index.string() + ": weight_map entry '" + quote_excerpt(it.key()) +
                       "' must name a file (a string)");
    const std::string file = it.value().get<std::string>();
    // A shard is a file beside the index, never a path elsewhere.
    if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
      throw ModelError(index.string() + ": weight_map entry '" + quote_excerpt(it.key()) +
                       "' names '" + quote_excerpt(file) +
                       "', expected a file name in the same folder");
    auto found = by_file.find(file);
    if (found == by_file.end()) {
      if (!fs::is_regular_file(folder / file, ec))
        throw ModelError(index.string() + ": shard '" + quote_excerpt(file) + "' (holding '" +
                         quote_excerpt(it.key()) + "') " + shard_problem(folder / file));
      c.shards_.push_back(std::make_shared<SafetensorsFile>(SafetensorsFile::open(folder / file)));
      found = by_file.emplace(file, c.shards_.back().get()).first;
    }
    if (!found->second->has(it.key()))
      throw ModelError(quote_excerpt((folder / file).string(), 200) + ": tensor '" +
                       quote_excerpt(it.key()) +
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
