#pragma once
// A GGUF file (llama.cpp, Ollama, LM Studio; ggml's docs/gguf.md): a header, typed metadata
// (key -> value), tensor descriptions, then the tensor data, aligned. The file is memory-mapped
// and every count, length, offset, type and alignment is checked against the file before anything
// is read through it, so a hostile file fails with one line naming the file and what is wrong,
// in time and memory bounded by the file's size.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend/dtype.h"

namespace attnscope {

// GGUF metadata value types (gguf_type), as numbered in the file.
enum class GgufType : std::uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
const char* gguf_type_name(GgufType t);  // "uint32", "string", "array", …
bool gguf_is_integer_type(GgufType t);   // uint8 … int64 (not bool)

// One metadata value. Scalars are kept as the widest type of their kind; arrays of numbers as
// int64 or double, arrays of strings as strings (tokenizer.ggml.tokens: up to ~262k of them).
struct GgufValue {
  GgufType type = GgufType::kUint8;
  GgufType element_type = GgufType::kUint8;  // for kArray
  std::int64_t integer = 0;                  // kUint*/kInt*/kBool (uint64 above 2^63 rejected)
  double real = 0;                           // kFloat32/kFloat64
  std::string string;                        // kString
  std::vector<std::int64_t> integers;        // arrays of integers / bools
  std::vector<double> reals;                 // arrays of floats
  std::vector<std::string> strings;          // arrays of strings
  std::size_t array_size() const;            // element count of an array (0 for a scalar)
};

// A tensor as described in the file. dims[0] is the innermost (contiguous) dimension (ggml's
// ne[0]): a [rows x cols] matrix has dims {cols, rows}, each row quantised along cols.
struct GgufTensor {
  std::string name;
  std::uint32_t ggml_type = 0;          // ggml_type as numbered in the file
  std::vector<std::uint64_t> dims;      // 1 to 4 of them
  std::uint64_t offset = 0;             // from the start of the data section
  const unsigned char* data = nullptr;  // inside the mapping
  std::size_t bytes = 0;                // what dims and type make, checked to lie inside the file
  std::uint64_t elements() const;
};

// ggml_type numbers (ggml.h) that attnscope reads, and their names for messages. The reader knows
// the block size of every ggml type (so it can check any file's layout); dtype_of_ggml_type says
// which ones attnscope computes with.
const char* ggml_type_name(std::uint32_t ggml_type);  // "Q4_K", "IQ2_XXS", … or "type 99"
std::optional<DType> dtype_of_ggml_type(std::uint32_t ggml_type);
// ggml's block of `ggml_type` (type_traits in ggml.c): values per block (1, 32, 64, 128, 256) and
// bytes per block; 0 for a number ggml does not define or has removed.
std::uint32_t ggml_type_block_values(std::uint32_t ggml_type);
std::uint32_t ggml_type_block_bytes(std::uint32_t ggml_type);
// general.file_type (llama_ftype) as llama.cpp names it: 15 -> "Q4_K_M", 1 -> "F16"; "" if unknown.
std::string llama_file_type_name(std::int64_t file_type);

class GgufFile {
 public:
  // Maps and checks `path`. Throws ModelError "PATH: what is wrong" (not a GGUF file, version,
  // a count or length beyond the file, an unknown type, misaligned/overlapping/out-of-file tensor
  // data, a duplicate key or tensor name, …).
  static std::shared_ptr<const GgufFile> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  std::uint32_t version() const { return version_; }
  std::uint64_t alignment() const { return alignment_; }
  std::uint64_t file_size() const { return size_; }

  // ---- metadata -----------------------------------------------------------------------------
  const GgufValue* find(const std::string& key) const;  // nullptr when absent
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  // Typed reads; a value of another type is a ModelError naming the file, key, expected and found
  // type. `fallback` is returned when the key is absent; without one an absent key is an error.
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  std::int64_t get_int(const std::string& key) const;  // any integer type
  std::int64_t get_int(const std::string& key, std::int64_t fallback) const;
  double get_float(const std::string& key) const;  // float32/64 (integers accepted)
  double get_float(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  const std::vector<std::string>& get_strings(const std::string& key) const;  // array of strings
  std::vector<double> get_floats(const std::string& key) const;               // array of numbers
  std::vector<std::int64_t> get_ints(const std::string& key) const;           // array of integers

  // ---- tensors ------------------------------------------------------------------------------
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* tensor(const std::string& name) const;  // nullptr when absent
  // Keeps the mapping alive (give it to WeightView::owner).
  std::shared_ptr<const void> owner() const { return mapping_; }

 private:
  GgufFile() = default;
  const GgufValue& typed(const std::string& key, bool (*ok)(const GgufValue&),
                         const char* expected) const;
  std::filesystem::path path_;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32, size_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<GgufTensor> tensors_;
  std::shared_ptr<const void> mapping_;
  std::vector<std::uint32_t> key_order_, tensor_order_;  // indices sorted by key / name
  friend class GgufParser;
};

}  // namespace attnscope
