#include "modules/opengl/gl_device.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace attnscope::gl {
namespace {

bool has_extension(const char* list, const char* name) {
  if (!list) return false;
  const std::size_t n = std::strlen(name);
  for (const char* p = list; (p = std::strstr(p, name)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

std::string egl_error_text() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "EGL error 0x%04x", static_cast<unsigned>(eglGetError()));
  return buf;
}

// Mesa's software rasterizers; every other renderer string names hardware (or a hardware-backed
// layer such as zink on a GPU).
bool is_software_renderer(const std::string& renderer) {
  for (const char* s : {"llvmpipe", "softpipe", "swrast", "Software Rasterizer"})
    if (renderer.find(s) != std::string::npos) return true;
  return false;
}

// The displays to try, best first: every hardware EGL device (EGL_EXT_platform_device: NVIDIA's
// driver and Mesa both offer it), then Mesa's surfaceless platform (which falls back to llvmpipe
// when no GPU is usable), then the default display. None needs a window system.
std::vector<EGLDisplay> candidate_displays() {
  std::vector<EGLDisplay> out;
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
      eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (get_platform_display && has_extension(client, "EGL_EXT_platform_device")) {
    auto query_devices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto query_device_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(
        eglGetProcAddress("eglQueryDeviceStringEXT"));
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (query_devices && query_devices(16, devices, &count))
      for (EGLint i = 0; i < count; ++i) {
        const char* ext =
            query_device_string ? query_device_string(devices[i], EGL_EXTENSIONS) : nullptr;
        if (has_extension(ext, "EGL_MESA_device_software")) continue;  // surfaceless covers it
        if (EGLDisplay d = get_platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr))
          out.push_back(d);
      }
  }
  if (get_platform_display && has_extension(client, "EGL_MESA_platform_surfaceless"))
    if (EGLDisplay d =
            get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr))
      out.push_back(d);
  if (out.empty())
    if (EGLDisplay d = eglGetDisplay(EGL_DEFAULT_DISPLAY); d != EGL_NO_DISPLAY) out.push_back(d);
  return out;
}

}  // namespace

std::shared_ptr<GlDevice> GlDevice::create() {
  std::shared_ptr<GlDevice> device(new GlDevice());
  std::promise<void> ready;
  std::future<void> made = ready.get_future();
  device->thread_ = std::thread([d = device.get(), &ready] { d->thread_main(&ready); });
  try {
    made.get();
  } catch (...) {
    device->thread_.join();  // the thread ends when the context failed
    throw;
  }
  return device;
}

GlDevice::~GlDevice() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GlDevice::thread_main(std::promise<void>* ready) {
  try {
    make_context();
  } catch (...) {
    destroy_context();
    ready->set_exception(std::current_exception());
    return;
  }
  ready->set_value();
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) break;  // stopping, and every queued job has run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
  for (auto& [base, b] : buffers_) glDeleteBuffers(1, &b.id);
  buffers_.clear();
  destroy_context();
}

void GlDevice::make_context() {
  if (!eglBindAPI(EGL_OPENGL_API)) throw GlUnavailable("EGL has no desktop OpenGL API");
  const EGLint attributes[] = {EGL_CONTEXT_MAJOR_VERSION,
                               4,
                               EGL_CONTEXT_MINOR_VERSION,
                               3,
                               EGL_CONTEXT_OPENGL_PROFILE_MASK,
                               EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                               EGL_NONE};
  std::string why = "no EGL display found";
  // The first display that gives a context wins; candidate_displays() lists hardware first.
  for (EGLDisplay d : candidate_displays()) {
    EGLint major = 0, minor = 0;
    if (!eglInitialize(d, &major, &minor)) {
      why = "eglInitialize failed (" + egl_error_text() + ")";
      continue;
    }
    const char* ext = eglQueryString(d, EGL_EXTENSIONS);
    if (!has_extension(ext, "EGL_KHR_surfaceless_context") ||
        !has_extension(ext, "EGL_KHR_no_config_context")) {
      why = "the EGL display cannot make a context without a window";
      eglTerminate(d);
      continue;
    }
    eglBindAPI(EGL_OPENGL_API);
    EGLContext c = eglCreateContext(d, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
    if (c == EGL_NO_CONTEXT) {
      why = "no OpenGL 4.3 core context (" + egl_error_text() + ")";
      eglTerminate(d);
      continue;
    }
    if (!eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, c)) {
      why = "eglMakeCurrent failed (" + egl_error_text() + ")";
      eglDestroyContext(d, c);
      eglTerminate(d);
      continue;
    }
    if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(eglGetProcAddress)) || !GLAD_GL_VERSION_4_3) {
      why = "the OpenGL driver lacks 4.3 entry points";
      eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(d, c);
      eglTerminate(d);
      continue;
    }
    const std::string renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    display_ = d;
    context_ = c;
    renderer_ = renderer;
    version_ = reinterpret_cast<const char*>(glGetString(GL_VERSION));
    software_ = is_software_renderer(renderer);
    GLint64 block = 0;
    glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &block);
    max_block_bytes_ = static_cast<std::size_t>(std::max<GLint64>(block, 1 << 20));
    GLint align = 4;
    glGetIntegerv(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &align);
    storage_alignment_ = static_cast<std::size_t>(std::max(align, 4));
    return;
  }
  throw GlUnavailable(why);
}

void GlDevice::destroy_context() {
  if (!display_) return;
  auto d = static_cast<EGLDisplay>(display_);
  eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  if (context_) eglDestroyContext(d, static_cast<EGLContext>(context_));
  eglTerminate(d);
  eglReleaseThread();
  display_ = context_ = nullptr;
}

void GlDevice::submit_and_wait(const std::function<void()>& f) {
  std::exception_ptr error;
  bool done = false;
  std::mutex done_mu;
  std::condition_variable done_cv;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back([&] {
      try {
        f();
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> l(done_mu);
      done = true;
      done_cv.notify_one();
    });
  }
  cv_.notify_one();
  std::unique_lock<std::mutex> lock(done_mu);
  done_cv.wait(lock, [&] { return done; });
  if (error) std::rethrow_exception(error);
}

void GlDevice::post(std::function<void()> f) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(f));
  }
  cv_.notify_one();
}

void GlDevice::limit_block_bytes(std::size_t bytes) {
  max_block_bytes_ = std::max<std::size_t>(std::min(bytes, max_block_bytes_), 256);
}

Tensor GlDevice::alloc(int rows, int cols) {
  const std::size_t n = std::max<std::size_t>(1, std::size_t(rows) * std::size_t(cols));
  Buffer b;
  b.elements = n;
  glGenBuffers(1, &b.id);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, b.id);
  glBufferData(GL_SHADER_STORAGE_BUFFER, GLsizeiptr(n * sizeof(float)), nullptr, GL_DYNAMIC_DRAW);
  const float zero = 0.0f;
  glClearBufferData(GL_SHADER_STORAGE_BUFFER, GL_R32F, GL_RED, GL_FLOAT, &zero);
  if (glGetError() == GL_OUT_OF_MEMORY) {
    glDeleteBuffers(1, &b.id);
    throw std::runtime_error("opengl backend: out of memory allocating a " + std::to_string(rows) +
                             " x " + std::to_string(cols) + " tensor");
  }
  // Made-up addresses, 4 KiB apart beyond the end, so views never run into the next buffer.
  const std::uintptr_t base = next_address_;
  next_address_ += (n * sizeof(float) + 2 * 4096) & ~std::uintptr_t(4095);
  buffers_[base] = b;

  Tensor t;
  t.data = reinterpret_cast<float*>(base);
  t.rows = rows;
  t.cols = cols;
  t.stride = cols;
  std::weak_ptr<GlDevice> weak = weak_from_this();
  t.owner = std::shared_ptr<void>(t.data, [weak, base](void*) {
    // Tensors die on any thread; the buffer is deleted on the GL thread. When the device is gone,
    // its context took every buffer with it.
    if (auto device = weak.lock()) device->post([d = device.get(), base] { d->free_buffer(base); });
  });
  return t;
}

void GlDevice::free_buffer(std::uintptr_t base) {
  auto it = buffers_.find(base);
  if (it == buffers_.end()) return;
  glDeleteBuffers(1, &it->second.id);
  buffers_.erase(it);
}

GlDevice::Located GlDevice::locate(const float* p, std::size_t count) const {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  auto it = buffers_.upper_bound(address);
  if (it == buffers_.begin()) throw std::runtime_error("opengl backend: not an opengl tensor");
  --it;
  const std::size_t first = (address - it->first) / sizeof(float);
  if ((address - it->first) % sizeof(float) != 0 || first + count > it->second.elements)
    throw std::runtime_error("opengl backend: a tensor view reaches outside its buffer");
  return {it->second.id, first, it->second.elements};
}

}  // namespace attnscope::gl
