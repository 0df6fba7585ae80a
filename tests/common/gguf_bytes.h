#pragma once
// A GGUF file written byte by byte for tests (ggml's docs/gguf.md): metadata of every value type,
// tensors placed at aligned offsets with data of the right size, and hooks to break any of it
// (counts, offsets, a raw key) for the hostile-file tests. Independent of the reader: the block
// sizes below are written from ggml-common.h's block structs, not taken from core/.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::test {

// ggml_type numbers (ggml.h) and their blocks: {values per block, bytes per block}.
struct GgmlBlock {
  std::uint32_t values, bytes;
};
inline GgmlBlock ggml_block(std::uint32_t type) {
  constexpr std::uint32_t kHalf = 2, kK = 256;
  switch (type) {
    case 0:
      return {1, 4};  // F32
    case 1:
      return {1, kHalf};  // F16
    case 2:
      return {32, kHalf + 32 / 2};  // Q4_0: d, 16 bytes of nibbles
    case 3:
      return {32, 2 * kHalf + 32 / 2};  // Q4_1: d, m, nibbles
    case 6:
      return {32, kHalf + 4 + 32 / 2};  // Q5_0: d, qh, nibbles
    case 7:
      return {32, 2 * kHalf + 4 + 32 / 2};  // Q5_1
    case 8:
      return {32, kHalf + 32};  // Q8_0
    case 9:
      return {32, 2 * kHalf + 32};  // Q8_1
    case 10:
      return {kK, 2 * kHalf + kK / 16 + kK / 4};  // Q2_K
    case 11:
      return {kK, kHalf + kK / 4 + kK / 8 + 12};  // Q3_K
    case 12:
      return {kK, 2 * kHalf + 12 + kK / 2};  // Q4_K
    case 13:
      return {kK, 2 * kHalf + 12 + kK / 2 + kK / 8};  // Q5_K
    case 14:
      return {kK, kHalf + kK / 16 + 3 * kK / 4};  // Q6_K
    case 15:
      return {kK, 4 + kK + kK / 16 * 2};  // Q8_K
    case 16:
      return {kK, kHalf + kK / 8 * 2};  // IQ2_XXS
    case 20:
      return {32, kHalf + 32 / 2};  // IQ4_NL
    case 23:
      return {kK, kHalf + 2 + kK / 64 + kK / 2};  // IQ4_XS
    case 24:
      return {1, 1};  // I8
    case 26:
      return {1, 4};  // I32
    case 28:
      return {1, 8};  // F64
    case 30:
      return {1, 2};  // BF16
    case 34:
      return {kK, kHalf + kK / 64 + (kK - 4 * kK / 64) / 5};  // TQ1_0
    case 39:
      return {32, 1 + 32 / 2};  // MXFP4
    default:
      throw std::invalid_argument("gguf_bytes.h: no block size for ggml type " +
                                  std::to_string(type));
  }
}

// GGUF value types (gguf_type).
enum : std::uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kStr = 8,
  kArr = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

template <typename T>
std::string le(T v) {  // little-endian bytes of a number (the test machines are little-endian)
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}
inline std::string gstr(std::string_view s) {  // a gguf_string: uint64 length + bytes
  return le<std::uint64_t>(s.size()) + std::string(s);
}

class GgufBytes {
 public:
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> dims;
    std::uint32_t type = 0;
    std::string data;                     // its bytes in the data section
    std::optional<std::uint64_t> offset;  // default: after the previous one, aligned
  };

  std::uint32_t version = 3;
  std::uint64_t alignment = 32;  // the layout's; alignment_kv() writes general.alignment too
  std::optional<std::uint64_t> tensor_count, kv_count;  // override the true counts
  std::string tail;        // bytes appended after everything (or what replaces the data: see below)
  bool omit_data = false;  // stop after the tensor descriptions (plus padding)

  // A metadata entry from its encoded parts: key, type, value bytes (for arrays: element type,
  // count and elements).
  GgufBytes& raw_kv(std::string_view key, std::uint32_t type, const std::string& value) {
    kvs_ += gstr(key) + le<std::uint32_t>(type) + value;
    ++n_kv_;
    return *this;
  }
  GgufBytes& u8(std::string_view k, std::uint8_t v) { return raw_kv(k, kU8, le(v)); }
  GgufBytes& i8(std::string_view k, std::int8_t v) { return raw_kv(k, kI8, le(v)); }
  GgufBytes& u16(std::string_view k, std::uint16_t v) { return raw_kv(k, kU16, le(v)); }
  GgufBytes& i16(std::string_view k, std::int16_t v) { return raw_kv(k, kI16, le(v)); }
  GgufBytes& u32(std::string_view k, std::uint32_t v) { return raw_kv(k, kU32, le(v)); }
  GgufBytes& i32(std::string_view k, std::int32_t v) { return raw_kv(k, kI32, le(v)); }
  GgufBytes& u64(std::string_view k, std::uint64_t v) { return raw_kv(k, kU64, le(v)); }
  GgufBytes& i64(std::string_view k, std::int64_t v) { return raw_kv(k, kI64, le(v)); }
  GgufBytes& f32(std::string_view k, float v) { return raw_kv(k, kF32, le(v)); }
  GgufBytes& f64(std::string_view k, double v) { return raw_kv(k, kF64, le(v)); }
  GgufBytes& boolean(std::string_view k, bool v) {
    return raw_kv(k, kBool, le<std::uint8_t>(v ? 1 : 0));
  }
  GgufBytes& str(std::string_view k, std::string_view v) { return raw_kv(k, kStr, gstr(v)); }
  GgufBytes& strings(std::string_view k, const std::vector<std::string>& v) {
    std::string body = le<std::uint32_t>(kStr) + le<std::uint64_t>(v.size());
    for (const auto& s : v) body += gstr(s);
    return raw_kv(k, kArr, body);
  }
  // An array of numbers of GGUF type `element` (T is the C++ type written for each).
  template <typename T>
  GgufBytes& array(std::string_view k, std::uint32_t element, const std::vector<T>& v) {
    std::string body = le<std::uint32_t>(element) + le<std::uint64_t>(v.size());
    for (const T& x : v) body += le<T>(x);
    return raw_kv(k, kArr, body);
  }
  GgufBytes& alignment_kv(std::uint32_t a) {
    alignment = a;
    return u32("general.alignment", a);
  }

  // A tensor of `type` with dims {ne0, ne1, …} and a pattern of bytes of the right size.
  GgufBytes& tensor(std::string name, std::vector<std::uint64_t> dims, std::uint32_t type,
                    std::optional<std::uint64_t> offset = std::nullopt) {
    const GgmlBlock b = ggml_block(type);
    std::uint64_t n = 1;
    for (auto d : dims) n *= d;
    std::string data(n / b.values * b.bytes, '\0');
    for (std::size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<char>((i * 131 + tensors_.size() * 7 + 1) & 0xff);
    return tensor_data(std::move(name), std::move(dims), type, std::move(data), offset);
  }
  // The same with the data given (of any size: the hostile tests' mismatches).
  GgufBytes& tensor_data(std::string name, std::vector<std::uint64_t> dims, std::uint32_t type,
                         std::string data, std::optional<std::uint64_t> offset = std::nullopt) {
    tensors_.push_back(Tensor{std::move(name), std::move(dims), type, std::move(data), offset});
    return *this;
  }
  const std::vector<Tensor>& tensors() const { return tensors_; }

  // Where each tensor's data starts in the data section (after layout()).
  std::vector<std::uint64_t> offsets() const {
    std::vector<std::uint64_t> out;
    std::uint64_t next = 0;
    for (const Tensor& t : tensors_) {
      const std::uint64_t at = t.offset ? *t.offset : next;
      out.push_back(at);
      next = pad(at + t.data.size());
    }
    return out;
  }
  std::uint64_t pad(std::uint64_t n) const { return (n + alignment - 1) / alignment * alignment; }

  // The header and metadata (through the tensor descriptions), unpadded.
  std::string header() const {
    std::string out = "GGUF" + le<std::uint32_t>(version) +
                      le<std::uint64_t>(tensor_count ? *tensor_count : tensors_.size()) +
                      le<std::uint64_t>(kv_count ? *kv_count : n_kv_) + kvs_;
    const auto offs = offsets();
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      const Tensor& t = tensors_[i];
      out += gstr(t.name) + le<std::uint32_t>(static_cast<std::uint32_t>(t.dims.size()));
      for (auto d : t.dims) out += le<std::uint64_t>(d);
      out += le<std::uint32_t>(t.type) + le<std::uint64_t>(offs[i]);
    }
    return out;
  }
  std::uint64_t data_start() const { return pad(header().size()); }

  std::string bytes() const {
    std::string out = header();
    if (!tensors_.empty()) out.resize(pad(out.size()), '\0');
    if (!omit_data) {
      const std::size_t base = out.size();
      const auto offs = offsets();
      for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const std::size_t end = base + offs[i] + tensors_[i].data.size();
        if (out.size() < end) out.resize(end, '\0');
        std::memcpy(out.data() + base + offs[i], tensors_[i].data.data(), tensors_[i].data.size());
      }
      if (!tensors_.empty()) out.resize(base + pad(out.size() - base), '\0');
    }
    return out + tail;
  }

  void write(const std::filesystem::path& path) const { write_bytes(path, bytes()); }
  static void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("cannot write " + path.string());
  }

 private:
  std::string kvs_;
  std::uint64_t n_kv_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace attnscope::test
