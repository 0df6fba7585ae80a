#pragma once
// A .safetensors file: 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the data, memory-mapped here. The header is validated before
// any tensor is read (size bounds, offsets inside the file and not overlapping, dtype × shape =
// byte length); errors name the tensor and the problem.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/util/matrix.h"

namespace attnscope {

struct TensorInfo {
  std::string dtype;  // "F32", "F16", "BF16", …
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte range inside the data section
};

// A tensor's bytes as they are in the file (no conversion), kept alive by `owner` (the mapping).
// `data` is aligned for the dtype: when the file's layout leaves it unaligned, the bytes are copied
// into an aligned buffer that `owner` holds instead.
struct RawTensor {
  std::string dtype;  // "F32", "F16", "BF16", …
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t bytes = 0;
  std::shared_ptr<const void> owner;
  bool mapped = false;  // `data` points into the file's mapping (not an aligned copy)
};

class SafetensorsFile {
 public:
  // Throws ModelError.
  static SafetensorsFile open(const std::filesystem::path& path);

  const std::map<std::string, TensorInfo>& tensors() const;
  bool has(const std::string& name) const;
  // The header's "__metadata__" entries whose values are strings (the format allows only those).
  const std::map<std::string, std::string>& metadata() const;
  // The tensor converted to float32 as a 2-D matrix: a 1-D tensor becomes [1 x n], an N-D tensor
  // [shape[0] x product of the rest]. Throws ModelError naming the tensor.
  Matrix matrix(const std::string& name) const;
  // The tensor in its file dtype, without copying it (memory-mapped). Throws ModelError naming the
  // tensor when it is missing.
  RawTensor raw(const std::string& name) const;
  const std::filesystem::path& path() const;

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  ~SafetensorsFile();

 private:
  struct Impl;
  explicit SafetensorsFile(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;  // shared with the RawTensors handed out: they keep the mapping
};

}  // namespace attnscope
