#pragma once
// Backend selection: `auto` tries CUDA, then OpenGL on a hardware GPU, and falls back to the CPU,
// remembering why.
#include <memory>
#include <string>

#include "core/backend/backend.h"
#include "core/backend/gl_module.h"

namespace attnscope {

enum class BackendChoice { kAuto, kCpu, kCuda, kOpenGl };

BackendChoice parse_backend_choice(const std::string& s);  // throws UsageError

struct SelectedBackend {
  std::shared_ptr<Backend> backend;
  // Empty when the requested backend was obtained; otherwise why we fell back to the CPU, in
  // words a user understands ("no CUDA driver found", "CUDA module not built").
  std::string fallback_reason;
};

// kCuda and kOpenGl throw BackendError when that backend cannot be used at all; kAuto falls back to
// the CPU. An OpenGL whose compute shaders fail to compile falls back to the CPU for every choice,
// with the shader's name and the driver's error line in fallback_reason.
SelectedBackend select_backend(BackendChoice choice);

// Tries to load the CUDA module and create its backend; on failure returns nullptr and sets `why`.
std::shared_ptr<Backend> try_cuda_backend(std::string& why);

// What the OpenGL module (libattnscope_gl.so) found here.
struct OpenGlProbe {
  std::shared_ptr<Backend> backend;  // null unless it works (and, when asked, is hardware)
  bool available = false;            // a 4.3 core context was made
  bool software = false;             // ... on a software renderer (llvmpipe): auto never picks it
  bool shader_error = false;         // ... but a compute shader failed to compile or link
  std::string renderer;              // GL_RENDERER and GL_VERSION, when available
  std::string why;                   // why `backend` is null, in words a user understands
};

// Loads the OpenGL module and makes its backend. With `hardware_only`, a software renderer is
// reported without compiling any shader (cheap: what `auto` asks). The backend is shared while
// alive and the probe is made once per process.
OpenGlProbe try_opengl_backend(bool hardware_only = false);

// A new OpenGL backend of its own, not shared (tests: a small max_block_bytes exercises the paths
// that split tensors larger than one storage block). Null with `report` saying why.
std::shared_ptr<Backend> create_opengl_backend(const GlModuleRequest& request,
                                               GlModuleReport& report);

}  // namespace attnscope
