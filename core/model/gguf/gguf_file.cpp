// The GGUF reader (ggml's docs/gguf.md, versions 2 and 3, little-endian). Every number in the file
// is distrusted: a count is compared with what the bytes left could hold before anything is
// allocated for it, a length before it is read, and every tensor's type, shape, offset and byte
// range before its pointer is handed out. Strings and names are read in place from the mapping
// (no copy until kept), so a hostile header costs time and memory in proportion to its size.
#include "core/model/gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string_view>

#include "core/util/error.h"
#include "core/util/file_read.h"

namespace attnscope {
namespace {

// Real files hold tens of metadata keys (a few hundred at most, with a chat template and a
// tokenizer's arrays counting as one key each) and up to a few thousand tensors (MoE models with
// merged experts). The caps only bound what a hostile header can make the reader allocate:
// a metadata entry costs ~200 bytes in memory against 14 in the file.
constexpr std::uint64_t kMaxMetadataKeys = 1u << 16;
constexpr std::uint64_t kMaxTensors = 1u << 20;
constexpr std::uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
// The smallest encodings: a key (8-byte length + at least 1 byte) + a 4-byte type + a 1-byte
// value; a tensor description: an 8-byte name length + n_dims + one dim + type + offset.
constexpr std::uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

struct GgmlType {
  const char* name;      // as gguf-py and llama.cpp's tools print it
  std::uint32_t values;  // per block (blck_size); 0: removed from ggml, never valid in a file
  std::uint32_t bytes;   // per block (type_size)
};

// ggml.c's type_traits (blck_size, type_size), by ggml_type number. Removed types (4, 5, 31-33,
// 36-38) have 0 values: a file naming them is refused as llama.cpp refuses it.
constexpr std::array<GgmlType, 43> kGgmlTypes{{
    {"F32", 1, 4},        {"F16", 1, 2},        {"Q4_0", 32, 18},     {"Q4_1", 32, 20},
    {"Q4_2", 0, 0},       {"Q4_3", 0, 0},       {"Q5_0", 32, 22},     {"Q5_1", 32, 24},
    {"Q8_0", 32, 34},     {"Q8_1", 32, 36},     {"Q2_K", 256, 84},    {"Q3_K", 256, 110},
    {"Q4_K", 256, 144},   {"Q5_K", 256, 176},   {"Q6_K", 256, 210},   {"Q8_K", 256, 292},
    {"IQ2_XXS", 256, 66}, {"IQ2_XS", 256, 74},  {"IQ3_XXS", 256, 98}, {"IQ1_S", 256, 50},
    {"IQ4_NL", 32, 18},   {"IQ3_S", 256, 110},  {"IQ2_S", 256, 82},   {"IQ4_XS", 256, 136},
    {"I8", 1, 1},         {"I16", 1, 2},        {"I32", 1, 4},        {"I64", 1, 8},
    {"F64", 1, 8},        {"IQ1_M", 256, 56},   {"BF16", 1, 2},       {"Q4_0_4_4", 0, 0},
    {"Q4_0_4_8", 0, 0},   {"Q4_0_8_8", 0, 0},   {"TQ1_0", 256, 54},   {"TQ2_0", 256, 66},
    {"IQ4_NL_4_4", 0, 0}, {"IQ4_NL_4_8", 0, 0}, {"IQ4_NL_8_8", 0, 0}, {"MXFP4", 32, 17},
    {"NVFP4", 64, 36},    {"Q1_0", 128, 18},    {"Q2_0", 64, 18},
}};

const GgmlType* ggml_type_info(std::uint32_t t) {
  return t < kGgmlTypes.size() ? &kGgmlTypes[t] : nullptr;
}

bool is_float_type(GgufType t) {
  return t == GgufType::kFloat32 || t == GgufType::kFloat64;
}

// Bytes of one scalar of type `t` in the file; 0 for string/array/unknown.
std::uint64_t scalar_bytes(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

// A name or key from the file, fit for a one-line message: at most ~80 bytes, control characters
// and bytes that are not UTF-8 shown as '?' (keys are kept as bytes; a message must stay text).
std::string printable(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size() && out.size() < 80) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80         ? 1
                      : (c >> 5) == 6  ? 2
                      : (c >> 4) == 14 ? 3
                      : (c >> 3) == 30 ? 4
                                       : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (!ok || (len == 1 && (c < 0x20 || c == 0x7f))) {
      out += '?';
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  if (i < s.size()) out += "…";
  return out;
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

struct Mapping {
  const unsigned char* base = nullptr;
  std::size_t size = 0;
  ~Mapping() {
    if (base) munmap(const_cast<unsigned char*>(base), size);
  }
};

}  // namespace

bool gguf_is_integer_type(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kUint16:
    case GgufType::kInt16:
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kUint64:
    case GgufType::kInt64:
      return true;
    default:
      return false;
  }
}

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
      return "uint8";
    case GgufType::kInt8:
      return "int8";
    case GgufType::kUint16:
      return "uint16";
    case GgufType::kInt16:
      return "int16";
    case GgufType::kUint32:
      return "uint32";
    case GgufType::kInt32:
      return "int32";
    case GgufType::kFloat32:
      return "float32";
    case GgufType::kBool:
      return "bool";
    case GgufType::kString:
      return "string";
    case GgufType::kArray:
      return "array";
    case GgufType::kUint64:
      return "uint64";
    case GgufType::kInt64:
      return "int64";
    case GgufType::kFloat64:
      return "float64";
  }
  return "unknown type";
}

std::size_t GgufValue::array_size() const {
  if (type != GgufType::kArray) return 0;
  return element_type == GgufType::kString ? strings.size()
         : is_float_type(element_type)     ? reals.size()
                                           : integers.size();
}

std::uint64_t GgufTensor::elements() const {
  std::uint64_t n = 1;
  for (const std::uint64_t d : dims) n *= d;  // checked not to overflow when the file was read
  return n;
}

const char* ggml_type_name(std::uint32_t ggml_type) {
  // Names for the numbers ggml has not used (yet), made once: the pointers stay valid.
  static const std::array<std::string, 256> kUnknown = [] {
    std::array<std::string, 256> names;
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = "type " + std::to_string(i);
    return names;
  }();
  if (const GgmlType* t = ggml_type_info(ggml_type)) return t->name;
  return ggml_type < kUnknown.size() ? kUnknown[ggml_type].c_str() : "an unknown type";
}

std::uint32_t ggml_type_block_values(std::uint32_t ggml_type) {
  const GgmlType* t = ggml_type_info(ggml_type);
  return t ? t->values : 0;
}
std::uint32_t ggml_type_block_bytes(std::uint32_t ggml_type) {
  const GgmlType* t = ggml_type_info(ggml_type);
  return t ? t->bytes : 0;
}

std::optional<DType> dtype_of_ggml_type(std::uint32_t ggml_type) {
  switch (ggml_type) {
    case 0:
      return DType::kF32;
    case 1:
      return DType::kF16;
    case 2:
      return DType::kQ4_0;
    case 3:
      return DType::kQ4_1;
    case 6:
      return DType::kQ5_0;
    case 7:
      return DType::kQ5_1;
    case 8:
      return DType::kQ8_0;
    case 10:
      return DType::kQ2_K;
    case 11:
      return DType::kQ3_K;
    case 12:
      return DType::kQ4_K;
    case 13:
      return DType::kQ5_K;
    case 14:
      return DType::kQ6_K;
    case 20:
      return DType::kIQ4_NL;
    case 23:
      return DType::kIQ4_XS;
    case 30:
      return DType::kBF16;
    default:
      return std::nullopt;
  }
}

std::string llama_file_type_name(std::int64_t file_type) {
  // llama.cpp's include/llama.h, enum llama_ftype; 1024 (LLAMA_FTYPE_GUESSED) marks a type
  // llama.cpp worked out from the tensors rather than read from the file.
  static constexpr std::array<const char*, 40> kNames{
      "F32",    "F16",    "Q4_0",  "Q4_1",    "",       "",       "",          "Q8_0",
      "Q5_0",   "Q5_1",   "Q2_K",  "Q3_K_S",  "Q3_K_M", "Q3_K_L", "Q4_K_S",    "Q4_K_M",
      "Q5_K_S", "Q5_K_M", "Q6_K",  "IQ2_XXS", "IQ2_XS", "Q2_K_S", "IQ3_XS",    "IQ3_XXS",
      "IQ1_S",  "IQ4_NL", "IQ3_S", "IQ3_M",   "IQ2_S",  "IQ2_M",  "IQ4_XS",    "IQ1_M",
      "BF16",   "",       "",      "",        "TQ1_0",  "TQ2_0",  "MXFP4_MOE", "NVFP4"};
  if (file_type < 0) return "";
  if (file_type >= 1024 && file_type < 2048) file_type -= 1024;
  if (file_type >= static_cast<std::int64_t>(kNames.size())) return "";
  return kNames[static_cast<std::size_t>(file_type)];
}

// ---- parsing ------------------------------------------------------------------------------------

class GgufParser {
 public:
  GgufParser(GgufFile& out, const unsigned char* base, std::uint64_t size)
      : out_(out), base_(base), size_(size) {}

  void parse() {
    parse_header();
    out_.metadata_.reserve(static_cast<std::size_t>(n_kv_));  // bounded by the file and the cap
    for (std::uint64_t i = 0; i < n_kv_; ++i) parse_kv(i);
    index_keys();
    read_alignment();
    out_.tensors_.reserve(static_cast<std::size_t>(n_tensors_));  // <= the file's size / 32
    for (std::uint64_t i = 0; i < n_tensors_; ++i) parse_tensor_info(i);
    place_tensors();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError(out_.path_.string() + ": " + what);
  }
  std::uint64_t remaining() const { return size_ - pos_; }
  // The `n` bytes at the cursor, failing with what they were for when the file ends first.
  // `what` is a callable giving the words for a message: built only when one is needed (a
  // tokenizer's 262k strings are read without composing 262k messages).
  template <typename What>
  const unsigned char* take(std::uint64_t n, const What& what) {
    if (n > remaining())
      fail("truncated: " + what() + " needs " + plural(n, "byte", "bytes") + " at offset " +
           std::to_string(pos_) + ", the file has " + std::to_string(remaining()) + " left");
    const unsigned char* p = base_ + pos_;
    pos_ += n;
    return p;
  }
  template <typename T, typename What>
  T read(const What& what) {
    T v;
    std::memcpy(&v, take(sizeof(T), what), sizeof(T));  // little-endian host (x86-64, arm64)
    return v;
  }
  template <typename What>
  std::string_view read_string(const What& what) {
    const auto len = read<std::uint64_t>([&] { return what() + "'s length"; });
    if (len > remaining())
      fail("truncated: " + what() + " is " + plural(len, "byte", "bytes") + " long at offset " +
           std::to_string(pos_) + ", the file has " + std::to_string(remaining()) + " left");
    return {reinterpret_cast<const char*>(take(len, what)), static_cast<std::size_t>(len)};
  }
  static auto words(const char* s) {
    return [s] { return std::string(s); };
  }

  void parse_header() {
    if (size_ < 4 || std::memcmp(base_, "GGUF", 4) != 0)
      fail(size_ < 4 ? "not a GGUF file (" + plural(size_, "byte", "bytes") + " long)"
                     : "not a GGUF file (it does not start with the magic bytes 'GGUF')");
    pos_ = 4;
    const auto version = read<std::uint32_t>(words("the version number"));
    if (version == 1)
      fail(
          "GGUF version 1 is not supported (files from before autumn 2023; convert the model again "
          "with a current llama.cpp)");
    if (version == 0x02000000u || version == 0x03000000u)
      fail("a big-endian GGUF file (version " + std::to_string(__builtin_bswap32(version)) +
           "); only little-endian files are supported");
    if (version != 2 && version != 3)
      fail("GGUF version " + std::to_string(version) + " is not supported (expected 2 or 3)");
    out_.version_ = version;
    n_tensors_ = read<std::uint64_t>(words("the tensor count"));
    n_kv_ = read<std::uint64_t>(words("the metadata key count"));
    // Bound both counts by what the rest of the file could hold before anything is allocated.
    const std::uint64_t left = remaining();
    if (n_kv_ > left / kMinKvBytes)
      fail("the header declares " + std::to_string(n_kv_) + " metadata keys, but the " +
           std::to_string(left) + " bytes after it can hold at most " +
           std::to_string(left / kMinKvBytes));
    if (n_kv_ > kMaxMetadataKeys)
      fail("the header declares " + std::to_string(n_kv_) + " metadata keys (at most " +
           std::to_string(kMaxMetadataKeys) + " are accepted; real models have under a thousand)");
    const std::uint64_t after_kv = left - n_kv_ * kMinKvBytes;
    if (n_tensors_ > after_kv / kMinTensorInfoBytes)
      fail("the header declares " + std::to_string(n_tensors_) + " tensors, but the " +
           std::to_string(left) + " bytes after it can hold at most " +
           std::to_string(after_kv / kMinTensorInfoBytes) + " besides " +
           plural(n_kv_, "metadata key", "metadata keys"));
    if (n_tensors_ > kMaxTensors)
      fail("the header declares " + std::to_string(n_tensors_) + " tensors (at most " +
           std::to_string(kMaxTensors) + " are accepted)");
  }

  // One scalar of type `t` into `v` (integer or real), `where` naming it for messages.
  template <typename What>
  void read_scalar(GgufType t, GgufValue& v, const What& where) {
    switch (t) {
      case GgufType::kUint8:
        v.integer = read<std::uint8_t>(where);
        break;
      case GgufType::kInt8:
        v.integer = read<std::int8_t>(where);
        break;
      case GgufType::kUint16:
        v.integer = read<std::uint16_t>(where);
        break;
      case GgufType::kInt16:
        v.integer = read<std::int16_t>(where);
        break;
      case GgufType::kUint32:
        v.integer = read<std::uint32_t>(where);
        break;
      case GgufType::kInt32:
        v.integer = read<std::int32_t>(where);
        break;
      case GgufType::kInt64:
        v.integer = read<std::int64_t>(where);
        break;
      case GgufType::kUint64: {
        const auto u = read<std::uint64_t>(where);
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          fail(where() + " is the uint64 " + std::to_string(u) + ", above the 2^63 - 1 accepted");
        v.integer = static_cast<std::int64_t>(u);
        break;
      }
      case GgufType::kBool:
        v.integer = read<std::uint8_t>(where) != 0;
        break;
      case GgufType::kFloat32:
        v.real = read<float>(where);
        break;
      case GgufType::kFloat64:
        v.real = read<double>(where);
        break;
      default:
        break;  // strings and arrays are read by the callers
    }
  }

  GgufType read_type(const std::string& where) {
    const auto raw = read<std::uint32_t>([&] { return where + "'s type"; });
    if (raw > static_cast<std::uint32_t>(GgufType::kFloat64))
      fail(where + " has the unknown value type " + std::to_string(raw) + " (expected 0 to 12)");
    return static_cast<GgufType>(raw);
  }

  void parse_kv(std::uint64_t i) {
    const std::string which = "metadata key " + std::to_string(i) + " of " + std::to_string(n_kv_);
    const std::string_view key = read_string([&] { return which; });
    if (key.empty()) fail(which + " is empty");
    const std::string where = "metadata key '" + printable(key) + "'";
    GgufValue v;
    v.type = read_type(where);
    if (v.type == GgufType::kString) {
      v.string = std::string(read_string([&] { return where; }));
    } else if (v.type == GgufType::kArray) {
      v.element_type = read_type(where + "'s elements");
      if (v.element_type == GgufType::kArray)
        fail(where + " is an array of arrays (not supported; llama.cpp writes none)");
      const auto n = read<std::uint64_t>([&] { return where + "'s element count"; });
      // Each element takes at least this many bytes: a count the file cannot hold fails here,
      // before a vector of that size is asked for.
      const std::uint64_t each =
          v.element_type == GgufType::kString ? 8 : scalar_bytes(v.element_type);
      if (n > remaining() / each)
        fail(where + " declares " + std::to_string(n) + " " + gguf_type_name(v.element_type) +
             " elements, but the " + std::to_string(remaining()) +
             " bytes left in the file can hold at most " + std::to_string(remaining() / each));
      const auto count = static_cast<std::size_t>(n);
      if (v.element_type == GgufType::kString) {
        v.strings.reserve(count);
        for (std::size_t k = 0; k < count; ++k)
          v.strings.emplace_back(
              read_string([&] { return where + " element " + std::to_string(k); }));
      } else if (is_float_type(v.element_type)) {
        v.reals.reserve(count);
        GgufValue e;
        for (std::size_t k = 0; k < count; ++k) {
          read_scalar(v.element_type, e, [&] { return where + " element " + std::to_string(k); });
          v.reals.push_back(e.real);
        }
      } else {
        v.integers.reserve(count);
        GgufValue e;
        for (std::size_t k = 0; k < count; ++k) {
          read_scalar(v.element_type, e, [&] { return where + " element " + std::to_string(k); });
          v.integers.push_back(e.integer);
        }
      }
    } else {
      read_scalar(v.type, v, [&] { return where; });
    }
    out_.metadata_.emplace_back(std::string(key), std::move(v));
  }

  void index_keys() {
    auto& order = out_.key_order_;
    const auto& md = out_.metadata_;
    order.resize(md.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return md[a].first < md[b].first; });
    for (std::size_t i = 1; i < order.size(); ++i)
      if (md[order[i]].first == md[order[i - 1]].first)
        fail("metadata key '" + printable(md[order[i]].first) + "' appears twice (keys " +
             std::to_string(std::min(order[i], order[i - 1])) + " and " +
             std::to_string(std::max(order[i], order[i - 1])) + ")");
  }

  void read_alignment() {
    const GgufValue* a = out_.find("general.alignment");
    if (!a) return;  // 32
    if (a->type != GgufType::kUint32)
      fail(std::string("metadata key 'general.alignment' is ") + gguf_type_name(a->type) +
           ", expected uint32");
    const auto n = static_cast<std::uint64_t>(a->integer);
    if (n == 0 || (n & (n - 1)) != 0)
      fail("general.alignment is " + std::to_string(n) + ", expected a power of two");
    out_.alignment_ = n;
  }

  void parse_tensor_info(std::uint64_t i) {
    const std::string which = "tensor " + std::to_string(i) + " of " + std::to_string(n_tensors_);
    const std::string_view name = read_string([&] { return which + "'s name"; });
    const std::string where = "tensor '" + printable(name) + "'";
    GgufTensor t;
    t.name = std::string(name);
    const auto n_dims = read<std::uint32_t>([&] { return where + "'s dimension count"; });
    if (n_dims < 1 || n_dims > kMaxDims)
      fail(where + " has " + std::to_string(n_dims) + " dimensions, expected 1 to 4");
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto ne =
          read<std::uint64_t>([&] { return where + "'s dimension " + std::to_string(d); });
      if (ne == 0) fail(where + " has dimension " + std::to_string(d) + " = 0, expected >= 1");
      if (__builtin_mul_overflow(elements, ne, &elements) ||
          elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(where + "'s dimensions multiply to more than 2^63 elements");
      t.dims.push_back(ne);
    }
    t.ggml_type = read<std::uint32_t>([&] { return where + "'s type"; });
    const GgmlType* type = ggml_type_info(t.ggml_type);
    if (!type || type->values == 0)
      fail(where + " has " +
           (type ? std::string("the removed ggml type ") + type->name + " (" +
                       std::to_string(t.ggml_type) + ")"
                 : "the unknown ggml type " + std::to_string(t.ggml_type)));
    if (t.dims[0] % type->values != 0)
      fail(where + " of type " + type->name + " has rows of " + std::to_string(t.dims[0]) +
           " values, not a multiple of its block of " + std::to_string(type->values));
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(elements / type->values, std::uint64_t{type->bytes}, &bytes) ||
        bytes > size_)
      fail(where + " needs " + std::to_string(elements / type->values) + " blocks of " +
           std::to_string(type->bytes) + " bytes, more than the whole file (" +
           std::to_string(size_) + " bytes)");
    t.bytes = static_cast<std::size_t>(bytes);
    t.offset = read<std::uint64_t>([&] { return where + "'s data offset"; });
    out_.tensors_.push_back(std::move(t));
  }

  void place_tensors() {
    auto& tensors = out_.tensors_;
    const std::uint64_t align = out_.alignment_;
    // The data section starts at the first multiple of the alignment after the descriptions.
    const std::uint64_t data_start = (pos_ + align - 1) / align * align;  // pos_ <= size_ < 2^63
    if (!tensors.empty() && data_start > size_)
      fail("truncated: the tensor data would start at offset " + std::to_string(data_start) +
           ", beyond the end of the file (" + std::to_string(size_) + " bytes)");
    const std::uint64_t data_size = tensors.empty() ? 0 : size_ - data_start;
    for (GgufTensor& t : tensors) {
      const std::string where = "tensor '" + printable(t.name) + "'";
      if (t.offset % align != 0)
        fail(where + "'s data offset " + std::to_string(t.offset) +
             " is not a multiple of the alignment " + std::to_string(align));
      if (t.offset > data_size || t.bytes > data_size - t.offset)
        fail(where + "'s data [" + std::to_string(t.offset) + ", " +
             (t.offset > data_size ? std::string("...") : std::to_string(t.offset + t.bytes)) +
             ") lies beyond the end of the data section (" + std::to_string(data_size) +
             " bytes): truncated file?");
      t.data = base_ + data_start + t.offset;
    }
    // Names unique, ranges disjoint: both by sorting indices (4 bytes per tensor).
    auto& order = out_.tensor_order_;
    order.resize(tensors.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return tensors[a].offset < tensors[b].offset;
    });
    for (std::size_t i = 1; i < order.size(); ++i) {
      const GgufTensor& a = tensors[order[i - 1]];
      const GgufTensor& b = tensors[order[i]];
      if (b.offset < a.offset + a.bytes)
        fail("tensors '" + printable(a.name) + "' and '" + printable(b.name) +
             "' overlap in the data section ([" + std::to_string(a.offset) + ", " +
             std::to_string(a.offset + a.bytes) + ") and [" + std::to_string(b.offset) + ", " +
             std::to_string(b.offset + b.bytes) + "))");
    }
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return tensors[a].name < tensors[b].name; });
    for (std::size_t i = 1; i < order.size(); ++i)
      if (tensors[order[i]].name == tensors[order[i - 1]].name)
        fail("tensor name '" + printable(tensors[order[i]].name) + "' appears twice (tensors " +
             std::to_string(std::min(order[i], order[i - 1])) + " and " +
             std::to_string(std::max(order[i], order[i - 1])) + ")");
  }

  GgufFile& out_;
  const unsigned char* base_;
  std::uint64_t size_;
  std::uint64_t pos_ = 0;
  std::uint64_t n_tensors_ = 0, n_kv_ = 0;
};

std::shared_ptr<const GgufFile> GgufFile::open(const std::filesystem::path& path) {
  std::shared_ptr<GgufFile> file(new GgufFile());
  file->path_ = path;
  auto fail = [&](const std::string& what) -> void {
    throw ModelError(path.string() + ": " + what);
  };
  // O_NONBLOCK: a FIFO named model.gguf is refused by fstat below instead of blocking here.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    const std::string problem = path_problem(path);
    fail(!problem.empty() ? problem
         : err == EACCES  ? std::string("cannot be read (permission denied)")
                          : std::string("cannot be opened (") + std::strerror(err) + ")");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    std::string problem = regular_file_problem(path);
    fail(problem.empty() ? "is not a regular file" : problem);
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    fail("is empty, not a GGUF file");
  }
  void* base = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) fail(std::string("cannot be mapped (") + std::strerror(errno) + ")");
  auto mapping = std::make_shared<Mapping>();
  mapping->base = static_cast<const unsigned char*>(base);
  mapping->size = size;
  file->size_ = size;
  GgufParser(*file, mapping->base, size).parse();
  file->mapping_ = std::shared_ptr<const void>(mapping, mapping->base);
  return file;
}

// ---- lookups ------------------------------------------------------------------------------------

const GgufValue* GgufFile::find(const std::string& key) const {
  const auto it = std::lower_bound(
      key_order_.begin(), key_order_.end(), key,
      [&](std::uint32_t i, const std::string& k) { return metadata_[i].first < k; });
  if (it == key_order_.end() || metadata_[*it].first != key) return nullptr;
  return &metadata_[*it].second;
}

const GgufTensor* GgufFile::tensor(const std::string& name) const {
  const auto it =
      std::lower_bound(tensor_order_.begin(), tensor_order_.end(), name,
                       [&](std::uint32_t i, const std::string& n) { return tensors_[i].name < n; });
  if (it == tensor_order_.end() || tensors_[*it].name != name) return nullptr;
  return &tensors_[*it];
}

namespace {

std::string value_type_words(const GgufValue& v) {
  if (v.type != GgufType::kArray) return gguf_type_name(v.type);
  return std::string("an array of ") + gguf_type_name(v.element_type);
}

}  // namespace

const GgufValue& GgufFile::typed(const std::string& key, bool (*ok)(const GgufValue&),
                                 const char* expected) const {
  const GgufValue* v = find(key);
  if (!v) throw ModelError(path_.string() + ": metadata key '" + key + "' is missing");
  if (!ok(*v))
    throw ModelError(path_.string() + ": metadata key '" + key + "' is " + value_type_words(*v) +
                     ", expected " + expected);
  return *v;
}

namespace {
bool is_string(const GgufValue& v) {
  return v.type == GgufType::kString;
}
bool is_int(const GgufValue& v) {
  return gguf_is_integer_type(v.type);
}
bool is_number(const GgufValue& v) {
  return gguf_is_integer_type(v.type) || is_float_type(v.type);
}
bool is_bool(const GgufValue& v) {
  return v.type == GgufType::kBool;
}
bool is_string_array(const GgufValue& v) {
  return v.type == GgufType::kArray && v.element_type == GgufType::kString;
}
bool is_int_array(const GgufValue& v) {
  return v.type == GgufType::kArray &&
         (gguf_is_integer_type(v.element_type) || v.element_type == GgufType::kBool);
}
bool is_number_array(const GgufValue& v) {
  return v.type == GgufType::kArray && v.element_type != GgufType::kString;
}
}  // namespace

std::string GgufFile::get_string(const std::string& key) const {
  return typed(key, is_string, "a string").string;
}
std::string GgufFile::get_string(const std::string& key, const std::string& fallback) const {
  return find(key) ? get_string(key) : fallback;
}
std::int64_t GgufFile::get_int(const std::string& key) const {
  return typed(key, is_int, "an integer").integer;
}
std::int64_t GgufFile::get_int(const std::string& key, std::int64_t fallback) const {
  return find(key) ? get_int(key) : fallback;
}
double GgufFile::get_float(const std::string& key) const {
  const GgufValue& v = typed(key, is_number, "a number");
  return is_float_type(v.type) ? v.real : static_cast<double>(v.integer);
}
double GgufFile::get_float(const std::string& key, double fallback) const {
  return find(key) ? get_float(key) : fallback;
}
bool GgufFile::get_bool(const std::string& key, bool fallback) const {
  return find(key) ? typed(key, is_bool, "a bool").integer != 0 : fallback;
}
const std::vector<std::string>& GgufFile::get_strings(const std::string& key) const {
  return typed(key, is_string_array, "an array of strings").strings;
}
std::vector<double> GgufFile::get_floats(const std::string& key) const {
  const GgufValue& v = typed(key, is_number_array, "an array of numbers");
  if (is_float_type(v.element_type)) return v.reals;
  return std::vector<double>(v.integers.begin(), v.integers.end());
}
std::vector<std::int64_t> GgufFile::get_ints(const std::string& key) const {
  return typed(key, is_int_array, "an array of integers").integers;
}

}  // namespace attnscope
