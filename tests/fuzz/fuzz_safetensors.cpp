// Fuzz target: a whole .safetensors file (header length, JSON header, data) through
// SafetensorsFile::open and, when it opens, every tensor read as floats; and the same bytes as a
// sharded checkpoint's weight index. Any exception other than ModelError, and any sanitizer
// report, is a bug.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "core/model/hf/checkpoint.h"
#include "core/model/hf/safetensors.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Bounds (issue 23): headers are validated before any tensor is read, so inputs beyond a megabyte
// only spend the fuzzer's time on bytes nothing reads; the reader's own 100 MB header limit is a
// unit test's job. The JSON header's depth needs no bound here: only its top level and each
// entry's fields are read, and nlohmann's parser keeps its own stack.
constexpr std::size_t kMaxInputBytes = 1 << 20;

// The same input as model.safetensors.index.json beside the fixture's weights, through
// Checkpoint::open: the weight map's names, the shards it points at, and its parse errors.
void fuzz_weight_index(std::string_view text) {
  using namespace attnscope;
  static const std::filesystem::path folder = [] {
    const std::filesystem::path dir = fuzz::scratch_dir() / "index";
    std::filesystem::create_directories(dir);
    std::error_code ec;
    std::filesystem::create_symlink(
        std::filesystem::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32" / "model.safetensors",
        dir / "model-00001-of-00001.safetensors", ec);
    return dir;
  }();
  fuzz::write_file(folder / "model.safetensors.index.json", text);
  try {
    const Checkpoint c = Checkpoint::open(folder);
    if (c.has("wte.weight")) (void)c.raw("wte.weight");
  } catch (const ModelError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnscope;
  if (size > kMaxInputBytes) return -1;
  const auto path = fuzz::scratch_dir() / "model.safetensors";
  fuzz::write_file(path, {reinterpret_cast<const char*>(data), size});
  fuzz_weight_index({reinterpret_cast<const char*>(data), size});
  try {
    const SafetensorsFile file = SafetensorsFile::open(path);
    for (const auto& [name, info] : file.tensors()) {
      try {
        const RawTensor raw = file.raw(name);  // mapped in file precision (decoders)
        if (raw.bytes > 0) (void)static_cast<const unsigned char*>(raw.data)[raw.bytes - 1];
        const Matrix m = file.matrix(name);
        if (m.size() > 0) (void)m(0, 0);
      } catch (const ModelError&) {
      }
    }
  } catch (const ModelError&) {
  }
  return 0;
}
