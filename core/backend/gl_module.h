#pragma once
// The C entry point of the OpenGL module (libattnscope_gl.so, built from modules/opengl/), which
// select.cpp loads with dlopen like the CUDA module. Plain structs only: this header is included on
// both sides of the dlopen boundary and holds no OpenGL include (core/ keeps none).
#include "core/backend/backend.h"

namespace attnscope {

enum GlModuleStatus : int {
  kGlOk = 0,
  kGlUnavailable = 1,   // no EGL, no display, no OpenGL 4.3 context: `error` says which
  kGlSoftwareOnly = 2,  // only a software renderer (llvmpipe) and the request asked for hardware
  kGlShaderError = 3,   // a compute shader failed to compile or link: `error` names it
};

struct GlModuleRequest {
  int hardware_only = 0;  // 1: stop before compiling shaders when the renderer is software
  // Largest range of a buffer bound to one shader storage block, in bytes; 0 = the driver's
  // GL_MAX_SHADER_STORAGE_BLOCK_SIZE. Tests set it small to exercise the split paths.
  long long max_block_bytes = 0;
};

struct GlModuleReport {
  int status = kGlUnavailable;
  int software = 0;  // the renderer is a software rasterizer (llvmpipe, softpipe)
  char renderer[256] = {
      0};  // e.g. "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6"
  char error[2048] = {0};
};

using CreateGlBackendFn = Backend* (*)(const GlModuleRequest* request, GlModuleReport* report);
inline constexpr const char* kGlModuleEntry = "attnscope_create_gl_backend";
inline constexpr const char* kGlModuleFile = "libattnscope_gl.so";

}  // namespace attnscope
