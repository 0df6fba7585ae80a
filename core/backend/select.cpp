#include "core/backend/select.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <utility>

#include "core/backend/cpu/cpu_backend.h"
#include "core/util/error.h"
#include "core/util/file_read.h"

namespace attnscope {
namespace fs = std::filesystem;

BackendChoice parse_backend_choice(const std::string& s) {
  if (s == "auto") return BackendChoice::kAuto;
  if (s == "cpu") return BackendChoice::kCpu;
  if (s == "cuda") return BackendChoice::kCuda;
  if (s == "opengl") return BackendChoice::kOpenGl;
  throw UsageError("unknown backend '" + s + "' (choose auto, cpu, cuda or opengl)");
}

namespace {

// A module sits beside the executable (build/bin), or in <exe dir>/../lib/attnscope once installed
// (cmake/install.cmake); the environment variable overrides the path (ATTNSCOPE_CUDA_MODULE,
// ATTNSCOPE_GL_MODULE).
fs::path module_path(const char* env_name, const char* file) {
  if (const char* env = std::getenv(env_name); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return file;
  const fs::path beside = exe.parent_path() / file;
  const fs::path installed =
      (exe.parent_path() / ".." / "lib" / "attnscope" / file).lexically_normal();
  if (!fs::exists(beside, ec) && fs::exists(installed, ec)) return installed;
  return beside;
}
fs::path cuda_module_path() {
  return module_path("ATTNSCOPE_CUDA_MODULE", kCudaModuleFile);
}

// The OpenGL module's entry point, or null with `why` (the module stays loaded for the process).
CreateGlBackendFn gl_module_entry(std::string& why) {
  static std::mutex mu;
  static CreateGlBackendFn entry = nullptr;
  static std::string entry_why;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!tried) {
    tried = true;
    const fs::path path = module_path("ATTNSCOPE_GL_MODULE", kGlModuleFile);
    if (!fs::exists(path)) {
      entry_why = "the OpenGL module was not built (libEGL or python3-glad was missing)";
    } else if (const std::string problem = regular_file_problem(path); !problem.empty()) {
      // dlopen on a FIFO waits for a writer forever: fall back as when the module is missing.
      entry_why = "the OpenGL module " + path.string() + " " + problem;
    } else if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); !handle) {
      const char* err = dlerror();
      entry_why = std::string("the OpenGL module could not be loaded (") +
                  (err ? err : "unknown error") + ")";
    } else if (!(entry = reinterpret_cast<CreateGlBackendFn>(dlsym(handle, kGlModuleEntry)))) {
      entry_why = "the OpenGL module is broken (entry point missing)";
    }
  }
  if (!entry) why = entry_why;
  return entry;
}

// Why no CUDA device can be used here, asked of the driver library itself (libcuda.so.1, which the
// NVIDIA driver installs and the CUDA runtime loads in turn), or "" when it reports a device. The
// library stays loaded: the module's runtime would load it again.
std::string cuda_driver_problem() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) return "no CUDA driver found";
  using CuInit = int (*)(unsigned);
  using CuDeviceGetCount = int (*)(int*);
  auto init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  if (!init || !count) return "the CUDA driver library is broken (libcuda.so.1 lacks cuInit)";
  constexpr int kNoDevice = 100;  // CUDA_ERROR_NO_DEVICE
  if (const int e = init(0); e != 0)
    return e == kNoDevice ? "no CUDA device found"
                          : "the CUDA driver did not start (error " + std::to_string(e) + ")";
  int devices = 0;
  if (count(&devices) != 0 || devices <= 0) return "no CUDA device found";
  return "";
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
    why = cached_why =
        "the CUDA module is not installed (it is built where nvcc is found; the .deb leaves it "
        "out)";
    return nullptr;
  }
  if (const std::string problem = regular_file_problem(path); !problem.empty()) {
    why = cached_why = "the CUDA module " + path.string() + " " + problem;  // dlopen would block
    return nullptr;
  }
  // Loading the module maps cuBLAS (hundreds of MB, ~0.5 s of relocations and static init), which
  // only a device can use: ask the driver first, as the module itself would.
  if (std::string problem = cuda_driver_problem(); !problem.empty()) {
    why = cached_why = std::move(problem);
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

std::shared_ptr<Backend> create_opengl_backend(const GlModuleRequest& request,
                                               GlModuleReport& report) {
  std::string why;
  CreateGlBackendFn create = gl_module_entry(why);
  if (!create) {
    report = GlModuleReport();
    std::snprintf(report.error, sizeof report.error, "%s", why.c_str());
    return nullptr;
  }
  return std::shared_ptr<Backend>(create(&request, &report));
}

OpenGlProbe try_opengl_backend(bool hardware_only) {
  // Making a context takes tens of milliseconds and compiling the shaders more: once per process
  // (again only when the last backend was freed).
  static std::mutex mu;
  static std::weak_ptr<Backend> cached;
  static OpenGlProbe known;  // what the last attempt found (without its backend)
  static bool probed = false, failed = false;
  std::lock_guard<std::mutex> lock(mu);
  OpenGlProbe probe = known;
  if (probed && hardware_only && known.software) {
    probe.why = known.renderer + " is a software renderer, slower than the CPU backend";
    return probe;
  }
  if ((probe.backend = cached.lock())) return probe;
  if (probed && (!known.available || failed)) return probe;

  GlModuleRequest request;
  request.hardware_only = hardware_only ? 1 : 0;
  GlModuleReport report;
  probe.backend = create_opengl_backend(request, report);
  probe.available = report.status != kGlUnavailable;
  probe.software = report.software != 0;
  probe.shader_error = report.status == kGlShaderError;
  probe.renderer = report.renderer;
  probe.why = probe.backend ? "" : report.error;
  probed = true;
  failed = !probe.backend && report.status != kGlSoftwareOnly;
  known = probe;
  known.backend = nullptr;
  cached = probe.backend;
  return probe;
}

SelectedBackend select_backend(BackendChoice choice) {
  SelectedBackend sel;
  if (choice == BackendChoice::kOpenGl) {
    OpenGlProbe gl = try_opengl_backend();
    if (gl.backend) {
      sel.backend = std::move(gl.backend);
      return sel;
    }
    if (!gl.shader_error) throw BackendError("OpenGL is not available: " + gl.why);
    sel.fallback_reason = gl.why;  // a driver that rejects a shader: compute on the CPU instead
  } else if (choice != BackendChoice::kCpu) {
    std::string why;
    if (auto cuda = try_cuda_backend(why)) {
      sel.backend = std::move(cuda);
      return sel;
    }
    if (choice == BackendChoice::kCuda) throw BackendError("CUDA is not available: " + why);
    // auto: OpenGL only on a hardware GPU (llvmpipe is slower than the CPU backend).
    OpenGlProbe gl = try_opengl_backend(/*hardware_only=*/true);
    if (gl.backend) {
      sel.backend = std::move(gl.backend);
      return sel;
    }
    sel.fallback_reason = why + "; OpenGL: " + gl.why;
  }
  sel.backend = make_cpu_backend();
  return sel;
}

}  // namespace attnscope
