#pragma once
// One headless OpenGL 4.3 context (EGL, no window, no X display) and the one thread it is current
// on. Every GL call of the opengl backend runs on that thread through run(), so the backend can be
// called from any thread (the app's worker, a test's main thread) without moving the context.
//
// Buffers: each allocation is one GL buffer object. Tensor::data must be a pointer the model code
// can offset (column and row views), so every buffer gets a made-up address range that is never
// dereferenced; resolve() maps an address inside a range back to its buffer and element offset.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>

#include <glad/gl.h>

#include "core/backend/backend.h"

namespace attnscope::gl {

// No context could be made (no libEGL display, no 4.3 core profile): the message says which.
struct GlUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class GlDevice : public std::enable_shared_from_this<GlDevice> {
 public:
  // Starts the GL thread and makes the context on it; throws GlUnavailable.
  static std::shared_ptr<GlDevice> create();
  ~GlDevice();
  GlDevice(const GlDevice&) = delete;
  GlDevice& operator=(const GlDevice&) = delete;

  // Runs `f` on the GL thread and waits for it; exceptions travel back to the caller.
  template <class F>
  auto run(F&& f) -> std::invoke_result_t<F&> {
    using R = std::invoke_result_t<F&>;
    if (std::this_thread::get_id() == thread_.get_id()) return f();
    if constexpr (std::is_void_v<R>) {
      submit_and_wait([&] { f(); });
    } else {
      R result{};
      submit_and_wait([&] { result = f(); });
      return result;
    }
  }
  // Queues `f` on the GL thread without waiting (buffer deletes from tensor destructors).
  void post(std::function<void()> f);

  const std::string& renderer() const { return renderer_; }  // GL_RENDERER
  const std::string& version() const { return version_; }    // GL_VERSION
  bool software() const { return software_; }
  // The largest buffer range one shader storage block may see, in bytes.
  std::size_t max_block_bytes() const { return max_block_bytes_; }
  void limit_block_bytes(std::size_t bytes);  // tests: smaller than the driver's limit
  std::size_t storage_alignment() const { return storage_alignment_; }

  // ---- on the GL thread only ----
  // A zero-filled [rows x cols] float tensor in a fresh buffer.
  Tensor alloc(int rows, int cols);
  struct Located {
    GLuint buffer = 0;
    std::size_t first = 0;  // element offset of the address from the buffer's start
    std::size_t size = 0;   // the buffer's length in elements
  };
  // The buffer holding `count` elements from address `p`; throws when they are not all in one.
  Located locate(const float* p, std::size_t count) const;

 private:
  GlDevice() = default;
  void thread_main(std::promise<void>* ready);
  void make_context();  // on the GL thread; throws GlUnavailable
  void destroy_context();
  void submit_and_wait(const std::function<void()>& f);
  void free_buffer(std::uintptr_t base);

  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;

  void* display_ = nullptr;  // EGLDisplay
  void* context_ = nullptr;  // EGLContext
  std::string renderer_, version_;
  bool software_ = false;
  std::size_t max_block_bytes_ = 0, storage_alignment_ = 4;

  struct Buffer {
    GLuint id = 0;
    std::size_t elements = 0;
  };
  std::map<std::uintptr_t, Buffer> buffers_;  // keyed by made-up base address
  std::uintptr_t next_address_ = std::uintptr_t(1) << 44;
};

}  // namespace attnscope::gl
