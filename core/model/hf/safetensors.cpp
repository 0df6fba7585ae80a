// The safetensors reader. Every byte of the header is distrusted: a model folder may come from
// anywhere, so the header is validated completely before any tensor is touched, and the data
// section is memory-mapped (read-only) so a 500 MB model costs no copy until a tensor is asked for.
#include "core/model/hf/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/util/json_file.h"

namespace attnscope {
namespace {

// Real headers are a few hundred kB at most (GPT-2 XL: ~60 kB); 100 MB is the limit the reference
// implementation uses, and anything beyond it is a broken or hostile file.
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;
// No file holds 2^40 elements along one axis; bounding each entry keeps every product of two of
// them (rows x cols below) inside int64.
constexpr std::uint64_t kMaxShapeEntry = 1ull << 40;

std::size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2")
    return 1;
  return 0;  // unknown
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {  // inf / nan
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400u) == 0);
      bits = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

float bf16_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace

struct SafetensorsFile::Impl {
  std::filesystem::path path;
  std::map<std::string, TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
  const unsigned char* map_base = nullptr;  // whole file, mmap'ed
  std::size_t map_size = 0;
  std::size_t data_offset = 0;  // 8 + header length

  ~Impl() {
    if (map_base) munmap(const_cast<unsigned char*>(map_base), map_size);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError(path.string() + ": " + what);
  }
};

SafetensorsFile::SafetensorsFile(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;
SafetensorsFile::~SafetensorsFile() = default;

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;

  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) impl->fail(std::string("cannot open (") + std::strerror(errno) + ")");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    impl->fail("not a regular file");
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (file_size < 8) {
    ::close(fd);
    impl->fail("file is too short to be safetensors (" + std::to_string(file_size) +
               " bytes; the 8-byte header length is missing)");
  }
  void* base = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping stays valid without the descriptor
  if (base == MAP_FAILED) impl->fail(std::string("cannot map (") + std::strerror(errno) + ")");
  impl->map_base = static_cast<const unsigned char*>(base);
  impl->map_size = file_size;

  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | impl->map_base[i];  // little-endian
  if (header_len > kMaxHeaderBytes)
    impl->fail("header length " + std::to_string(header_len) + " exceeds the " +
               std::to_string(kMaxHeaderBytes) + "-byte limit (corrupt file?)");
  if (header_len > file_size - 8)
    impl->fail("header length " + std::to_string(header_len) + " is beyond the end of the file (" +
               std::to_string(file_size) + " bytes): truncated download?");
  impl->data_offset = 8 + header_len;
  const std::uint64_t data_size = file_size - impl->data_offset;

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(impl->map_base + 8, impl->map_base + 8 + header_len);
  } catch (const nlohmann::json::exception& e) {
    impl->fail("header is not valid JSON (" + json_problem(e) + ")");
  }
  if (!header.is_object()) impl->fail("header is not a JSON object");

  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // to find overlaps
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {  // free-form strings: kept, nothing to validate
      if (it.value().is_object())
        for (auto m = it.value().begin(); m != it.value().end(); ++m)
          if (m.value().is_string()) impl->metadata[m.key()] = m.value().get<std::string>();
      continue;
    }
    const nlohmann::json& entry = it.value();
    auto bad = [&](const std::string& what) {
      impl->fail("tensor '" + quote_excerpt(name) + "': " + what);
    };
    if (!entry.is_object()) bad("entry is not an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) bad("missing dtype");
    if (!entry.contains("shape") || !entry["shape"].is_array()) bad("missing shape");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
      bad("data_offsets must be [begin, end]");
    TensorInfo info;
    info.dtype = entry["dtype"].get<std::string>();
    const std::size_t elem = dtype_size(info.dtype);
    if (elem == 0) bad("unknown dtype '" + quote_excerpt(info.dtype) + "'");
    std::uint64_t count = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned()) bad("shape entries must be non-negative integers");
      const std::uint64_t v = d.get<std::uint64_t>();
      // Each entry on its own, not only the product: a zero elsewhere in the shape makes any
      // product small, and an entry beyond int64 would print (and compute) as negative.
      if (v > kMaxShapeEntry)
        bad("shape entry " + std::to_string(v) + " is absurdly large (limit " +
            std::to_string(kMaxShapeEntry) + ")");
      if (v != 0 && count > std::numeric_limits<std::uint64_t>::max() / v / elem)
        bad("shape is absurdly large");
      count *= v;
      info.shape.push_back(static_cast<std::int64_t>(v));
    }
    for (const auto& o : entry["data_offsets"])
      if (!o.is_number_unsigned()) bad("data_offsets must be non-negative integers");
    info.begin = entry["data_offsets"][0].get<std::uint64_t>();
    info.end = entry["data_offsets"][1].get<std::uint64_t>();
    if (info.begin > info.end) bad("data_offsets begin > end");
    if (info.end > data_size)
      bad("data range [" + std::to_string(info.begin) + ", " + std::to_string(info.end) +
          ") lies beyond the data section (" + std::to_string(data_size) +
          " bytes): truncated file?");
    if (info.end - info.begin != count * elem)
      bad("byte length " + std::to_string(info.end - info.begin) + " does not match dtype " +
          info.dtype + " x shape (" + std::to_string(count * elem) + " bytes)");
    ranges.emplace_back(info.begin, info.end);
    impl->tensors.emplace(name, std::move(info));
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      // Name the culprits: find which tensors own the two ranges.
      std::string a, b;
      for (const auto& [n, t] : impl->tensors) {
        if (t.begin == ranges[i - 1].first && t.end == ranges[i - 1].second && a.empty())
          a = n;
        else if (t.begin == ranges[i].first && t.end == ranges[i].second)
          b = n;
      }
      impl->fail("tensors '" + a + "' and '" + b + "' overlap in the data section");
    }
  }
  return SafetensorsFile(std::move(impl));
}

const std::map<std::string, TensorInfo>& SafetensorsFile::tensors() const {
  return impl_->tensors;
}
bool SafetensorsFile::has(const std::string& name) const {
  return impl_->tensors.count(name) > 0;
}
const std::map<std::string, std::string>& SafetensorsFile::metadata() const {
  return impl_->metadata;
}
const std::filesystem::path& SafetensorsFile::path() const {
  return impl_->path;
}

RawTensor SafetensorsFile::raw(const std::string& name) const {
  const auto it = impl_->tensors.find(name);
  if (it == impl_->tensors.end()) impl_->fail("tensor '" + name + "' is missing");
  const TensorInfo& info = it->second;
  RawTensor t;
  t.dtype = info.dtype;
  t.shape = info.shape;
  t.bytes = info.end - info.begin;
  const unsigned char* src = impl_->map_base + impl_->data_offset + info.begin;
  const std::size_t align = std::max<std::size_t>(1, dtype_size(info.dtype));
  if (reinterpret_cast<std::uintptr_t>(src) % align == 0) {
    t.data = src;
    t.owner = impl_;
    t.mapped = true;
  } else {  // the header's length left the data unaligned: an aligned copy (rare in practice)
    auto copy = std::shared_ptr<std::uint64_t[]>(new std::uint64_t[(t.bytes + 7) / 8]);
    std::memcpy(copy.get(), src, t.bytes);
    t.data = copy.get();
    t.owner = copy;
  }
  return t;
}

Matrix SafetensorsFile::matrix(const std::string& name) const {
  const auto it = impl_->tensors.find(name);
  if (it == impl_->tensors.end()) impl_->fail("tensor '" + name + "' is missing");
  const TensorInfo& info = it->second;
  std::int64_t rows = 1, cols = 1;
  if (info.shape.size() == 1) {
    cols = info.shape[0];
  } else if (!info.shape.empty()) {
    rows = info.shape[0];
    // The product of all entries fits in uint64 (checked at open), so this cannot overflow.
    std::uint64_t product = 1;
    for (std::size_t i = 1; i < info.shape.size(); ++i)
      product *= static_cast<std::uint64_t>(info.shape[i]);
    cols = product > static_cast<std::uint64_t>(std::numeric_limits<int>::max())
               ? std::numeric_limits<std::int64_t>::max()
               : static_cast<std::int64_t>(product);
  }
  if (rows > std::numeric_limits<int>::max() || cols > std::numeric_limits<int>::max())
    impl_->fail("tensor '" + name + "' is too large for a matrix");
  Matrix m(rows, cols);
  if (m.size() == 0) return m;  // a zero-element tensor: nothing to copy (and data() is null)
  const unsigned char* src = impl_->map_base + impl_->data_offset + info.begin;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  float* dst = m.data();
  // memcpy per element: the data section has no alignment guarantee (header length is arbitrary).
  if (info.dtype == "F32") {
    std::memcpy(dst, src, n * 4);
  } else if (info.dtype == "F16" || info.dtype == "BF16") {
    const bool is_bf16 = info.dtype == "BF16";
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      dst[i] = is_bf16 ? bf16_to_float(h) : half_to_float(h);
    }
  } else {
    impl_->fail("tensor '" + name + "' has dtype " + info.dtype +
                ", but only F32, F16 and BF16 can be read as floats");
  }
  return m;
}

}  // namespace attnscope
