#include "core/model/transformer/hf_weights.h"

#include <cmath>

#include "core/model/transformer/transformer_blocks.h"

#include "core/util/error.h"
#include "core/util/json_file.h"

namespace attnscope {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return load_json_file(path, path.filename().string(), 16ull << 20);
}

namespace {

// Bigger than any real model's dimension (vocabularies reach 262k, contexts 1M, widths 64k) and
// small enough that the products the loaders form (4·n_embd, 3·d, heads·head_dim) stay in int.
constexpr long long kMaxConfigDimension = 1 << 24;

std::string found_text(const nlohmann::json& value) {
  return value.is_primitive() ? quote_excerpt(value.dump(), 40) : json_type_name(value);
}

}  // namespace

int config_int(const nlohmann::json& config, const std::string& key, int fallback,
               const std::filesystem::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) {
    if (fallback >= 0) return fallback;
    throw ModelError(where.string() + ": required key '" + key + "' is missing");
  }
  if (!it->is_number_integer() || it->get<long long>() <= 0 ||
      it->get<long long>() > kMaxConfigDimension)
    throw ModelError(where.string() + ": '" + key + "' must be a positive integer up to " +
                     std::to_string(kMaxConfigDimension) + ", found " + found_text(*it));
  return static_cast<int>(it->get<long long>());
}

float config_float(const nlohmann::json& config, const std::string& key, float fallback,
                   const std::filesystem::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  // Every float a config gives (epsilons, rope bases) is positive: a negative layer-norm epsilon
  // turns the forward pass into NaN.
  const double v = it->is_number() ? it->get<double>() : 0.0;
  if (!it->is_number() || !(v > 0.0) || !std::isfinite(static_cast<float>(v)))
    throw ModelError(where.string() + ": '" + key + "' must be a positive finite number, found " +
                     found_text(*it));
  return static_cast<float>(v);
}

std::string config_string(const nlohmann::json& config, const std::string& key,
                          const std::string& fallback, const std::filesystem::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_string())
    throw ModelError(where.string() + ": '" + key + "' must be a string, found " + found_text(*it));
  return it->get<std::string>();
}

bool config_bool(const nlohmann::json& config, const std::string& key, bool fallback,
                 const std::filesystem::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_boolean())
    throw ModelError(where.string() + ": '" + key + "' must be true or false, found " +
                     found_text(*it));
  return it->get<bool>();
}

namespace {

// Whether a tensor of `shape` reads as [rows x cols] (SafetensorsFile::matrix's rule).
bool shape_matches(const std::vector<std::int64_t>& shape, int rows, int cols) {
  if (shape.size() == 1) return rows == 1 && shape[0] == cols;
  if (shape.empty()) return rows == 1 && cols == 1;
  if (shape[0] != rows) return false;
  std::int64_t product = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) {
    if (shape[i] != 0 && product > cols / shape[i]) return false;  // already past cols
    product *= shape[i];
  }
  return product == cols;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? " x " : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace

HfWeightReader::HfWeightReader(const Checkpoint& file, std::vector<std::string> prefixes)
    : file_(file), prefixes_(std::move(prefixes)) {
  prefixes_.insert(prefixes_.begin(), "");
}

Tensor HfWeightReader::get(const std::vector<std::string>& names, int rows, int cols) const {
  for (const std::string& name : names) {
    for (const std::string& prefix : prefixes_) {
      const std::string full = prefix + name;
      if (!file_.has(full)) continue;
      // The shape is compared before any data is converted, so a config that asks for a huge
      // tensor fails with this message, not with an allocation of the size it claims.
      const std::vector<std::int64_t> shape = file_.raw(full).shape;
      if (!shape_matches(shape, rows, cols))
        throw ModelError(file_.file_of(full).string() + ": tensor '" + full + "' has shape " +
                         shape_text(shape) + ", expected [" + std::to_string(rows) + " x " +
                         std::to_string(cols) + "] from config.json");
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
