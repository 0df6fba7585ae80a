#include "core/model/transformer/hf_weights.h"

#include <fstream>

#include "core/model/transformer/transformer_blocks.h"
#include "core/util/error.h"

namespace attnscope {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path.string() + ": cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

int config_int(const nlohmann::json& config, const std::string& key, int fallback,
               const std::filesystem::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) {
    if (fallback >= 0) return fallback;
    throw ModelError(where.string() + ": required key '" + key + "' is missing");
  }
  if (!it->is_number_integer() || it->get<long long>() <= 0 || it->get<long long>() > (1 << 30))
    throw ModelError(where.string() + ": '" + key + "' must be a positive integer");
  return static_cast<int>(it->get<long long>());
}

float config_float(const nlohmann::json& config, const std::string& key, float fallback,
                   const std::filesystem::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_number()) throw ModelError(where.string() + ": '" + key + "' must be a number");
  return it->get<float>();
}

HfWeightReader::HfWeightReader(const Checkpoint& file, std::vector<std::string> prefixes)
    : file_(file), prefixes_(std::move(prefixes)) {
  prefixes_.insert(prefixes_.begin(), "");
}

Tensor HfWeightReader::get(const std::vector<std::string>& names, int rows, int cols) const {
  for (const std::string& name : names) {
    for (const std::string& prefix : prefixes_) {
      const std::string full = prefix + name;
      if (!file_.has(full)) continue;
      Matrix m = file_.matrix(full);
      if (m.rows() != rows || m.cols() != cols)
        throw ModelError(file_.file_of(full).string() + ": tensor '" + full + "' has shape [" +
                         std::to_string(m.rows()) + " x " + std::to_string(m.cols()) +
                         "], expected [" + std::to_string(rows) + " x " + std::to_string(cols) +
                         "] from config.json");
      if (!m.allFinite())
        throw ModelError(file_.file_of(full).string() + ": tensor '" + full +
                         "' contains NaN or inf");
      return host_tensor(std::move(m));
    }
  }
  throw ModelError(file_.file_of(names.front()).string() + ": required tensor '" + names.front() +
                   "' is missing (is this the right architecture?)");
}

}  // namespace attnscope

namespace attnscope {

std::string model_name_from_folder(const std::filesystem::path& folder) {
  std::filesystem::path f = folder.lexically_normal();
  if (f.filename().empty()) f = f.parent_path();  // "folder/" -> "folder"
  const std::filesystem::path snapshots = f.parent_path();
  const std::string repo = snapshots.parent_path().filename().string();
  if (snapshots.filename() == "snapshots" && repo.rfind("models--", 0) == 0) {
    // "org--name" -> "org/name" (built up, not replaced in place: GCC 12 warns falsely on that).
    std::string id;
    const std::string rest = repo.substr(8);
    for (std::size_t i = 0; i < rest.size(); ++i) {
      if (rest.compare(i, 2, "--") == 0) {
        id += '/';
        ++i;
      } else {
        id += rest[i];
      }
    }
    return id;
  }
  return f.filename().string();
}

}  // namespace attnscope
