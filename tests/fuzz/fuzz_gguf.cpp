// Fuzz target: a whole .gguf file through GgufFile::open and, when it opens, every metadata value
// through the typed getters, every tensor's last byte read through its pointer (inside the mapping
// or ASan says so), the names of its types; and the same bytes as an Ollama manifest in a scratch
// store, resolved by name (resolve_gguf_spec: JSON, digest, blob checks). Any exception other than
// ModelError/UsageError, and any sanitizer report, is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "core/model/gguf/gguf_file.h"
#include "core/model/gguf/gguf_model.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Headers are validated before any tensor is read; beyond a megabyte the fuzzer spends its time
// on bytes nothing reads (the reader's limits on large files are gguf_hostile_test's job).
constexpr std::size_t kMaxInputBytes = 1 << 20;

void touch_everything(const attnscope::GgufFile& f) {
  using namespace attnscope;
  volatile unsigned sink = 0;
  for (const auto& [key, value] : f.metadata()) {
    sink = sink + static_cast<unsigned>(value.array_size());
    try {
      switch (value.type) {
        case GgufType::kString:
          sink = sink + static_cast<unsigned>(f.get_string(key).size());
          break;
        case GgufType::kFloat32:
        case GgufType::kFloat64:
          sink = sink + static_cast<unsigned>(f.get_float(key) != 0);
          break;
        case GgufType::kBool:
          sink = sink + f.get_bool(key, false);
          break;
        case GgufType::kArray:
          if (value.element_type == GgufType::kString)
            sink = sink + static_cast<unsigned>(f.get_strings(key).size());
          else
            sink = sink + static_cast<unsigned>(f.get_floats(key).size());
          break;
        default:
          sink = sink + static_cast<unsigned>(f.get_int(key));
      }
      // The wrong getter for the value must be a ModelError, never a crash.
      (void)f.get_ints(key);
    } catch (const ModelError&) {
    }
  }
  try {
    sink = sink +
           static_cast<unsigned>(llama_file_type_name(f.get_int("general.file_type", 0)).size());
  } catch (const ModelError&) {
  }
  for (const GgufTensor& t : f.tensors()) {
    if (t.bytes > 0) sink = sink + t.data[t.bytes - 1] + t.data[0];
    sink = sink + static_cast<unsigned>(t.elements());
    (void)ggml_type_name(t.ggml_type);
    (void)dtype_of_ggml_type(t.ggml_type);
    if (f.tensor(t.name) == nullptr) std::abort();  // every listed tensor is found by name
  }
}

void fuzz_ollama_manifest(std::string_view text) {
  using namespace attnscope;
  static const std::filesystem::path store = [] {
    const std::filesystem::path dir = fuzz::scratch_dir() / "ollama";
    std::filesystem::create_directories(dir / "manifests/registry.ollama.ai/library/fuzz");
    std::filesystem::create_directories(dir / "blobs");
    // A blob the manifest may name: sha256 of nothing, 0 bytes.
    fuzz::write_file(
        dir / "blobs/sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "");
    ::setenv("OLLAMA_MODELS", dir.c_str(), 1);
    return dir;
  }();
  fuzz::write_file(store / "manifests/registry.ollama.ai/library/fuzz/latest", text);
  try {
    (void)resolve_gguf_spec("fuzz");
  } catch (const ModelError&) {
  } catch (const UsageError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnscope;
  if (size > kMaxInputBytes) return -1;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto path = fuzz::scratch_dir() / "model.gguf";
  fuzz::write_file(path, bytes);
  try {
    touch_everything(*GgufFile::open(path));
  } catch (const ModelError&) {
  }
  fuzz_ollama_manifest(bytes);
  return 0;
}
