// Fuzz target: a whole .safetensors file (header length, JSON header, data) through
// SafetensorsFile::open and, when it opens, every tensor read as floats. Any exception other than
// ModelError, and any sanitizer report, is a bug.
#include <cstddef>
#include <cstdint>

#include "core/model/hf/safetensors.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnscope;
  const auto path = fuzz::scratch_dir() / "model.safetensors";
  fuzz::write_file(path, {reinterpret_cast<const char*>(data), size});
  try {
    const SafetensorsFile file = SafetensorsFile::open(path);
    for (const auto& [name, info] : file.tensors()) {
      try {
        const Matrix m = file.matrix(name);
        if (m.size() > 0) (void)m(0, 0);
      } catch (const ModelError&) {
      }
    }
  } catch (const ModelError&) {
  }
  return 0;
}
