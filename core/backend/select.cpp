#include "core/backend/select.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "core/backend/cpu/cpu_backend.h"
#include "core/util/error.h"

namespace attnscope {
namespace fs = std::filesystem;

BackendChoice parse_backend_choice(const std::string& s) {
  if (s == "auto") return BackendChoice::kAuto;
  if (s == "cpu") return BackendChoice::kCpu;
  if (s == "cuda") return BackendChoice::kCuda;
  throw UsageError("unknown backend '" + s + "' (choose auto, cpu or cuda)");
}

namespace {

// The module sits beside the executable (build/bin); ATTNSCOPE_CUDA_MODULE overrides the path.
fs::path cuda_module_path() {
  if (const char* env = std::getenv("ATTNSCOPE_CUDA_MODULE"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return kCudaModuleFile;
  return exe.parent_path() / kCudaModuleFile;
}

}  // namespace

std::shared_ptr<Backend> try_cuda_backend(std::string& why) {
  // The module and its device are probed once per process: dlopen + driver init are slow.
  static std::mutex mu;
  static std::weak_ptr<Backend> cached;
  static std::string cached_why;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (auto b = cached.lock()) return b;
  if (tried && !cached_why.empty()) {
    why = cached_why;
    return nullptr;
  }
  tried = true;

  const fs::path path = cuda_module_path();
  if (!fs::exists(path)) {
    why = cached_why = "the CUDA module was not built (nvcc was not found at build time)";
    return nullptr;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    why = cached_why = std::string("the CUDA runtime libraries could not be loaded (") +
                       (err ? err : "unknown error") + ")";
    return nullptr;
  }
  auto create = reinterpret_cast<CreateBackendFn>(dlsym(handle, kCudaModuleEntry));
  if (!create) {
    why = cached_why = "the CUDA module is broken (entry point missing)";
    return nullptr;
  }
  char err[512] = {0};
  Backend* raw = create(err, sizeof err);
  if (!raw) {
    why = cached_why = err[0] ? err : "no CUDA device found";
    return nullptr;
  }
  // The module stays loaded for the life of the process (its code backs the object).
  std::shared_ptr<Backend> b(raw);
  cached = b;
  return b;
}

SelectedBackend select_backend(BackendChoice choice) {
  SelectedBackend sel;
  if (choice != BackendChoice::kCpu) {
    std::string why;
    if (auto cuda = try_cuda_backend(why)) {
      sel.backend = std::move(cuda);
      return sel;
    }
    if (choice == BackendChoice::kCuda) throw BackendError("CUDA is not available: " + why);
    sel.fallback_reason = why;
  }
  sel.backend = make_cpu_backend();
  return sel;
}

}  // namespace attnscope
