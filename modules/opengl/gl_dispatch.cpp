#include "modules/opengl/gl_dispatch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnscope::gl {

bool Dispatcher::fits(std::size_t elements) const {
  // Room for the alignment slack at the start of a range.
  return elements * sizeof(float) + device_.storage_alignment() <= device_.max_block_bytes();
}

int Dispatcher::rows_per_block(int cols, int stride) const {
  const std::size_t limit =
      (device_.max_block_bytes() - device_.storage_alignment()) / sizeof(float);
  if (std::size_t(cols) > limit)
    throw std::runtime_error("opengl backend: one row of " + std::to_string(cols) +
                             " values exceeds the driver's largest storage block");
  const std::size_t rows = 1 + (limit - std::size_t(cols)) / std::max<std::size_t>(1, stride);
  return static_cast<int>(std::min<std::size_t>(rows, 1 << 30));
}

void Dispatcher::bind(ComputeProgram& program, int binding, const char* name, const Tensor& t) {
  bind_flat(program, binding, name, t, span(t));
  program.set((std::string(name) + "_stride").c_str(), t.stride);
}

void Dispatcher::bind_flat(ComputeProgram& program, int binding, const char* name, const Tensor& t,
                           std::size_t elements) {
  const GlDevice::Located at = device_.locate(t.data, elements);
  const std::size_t align = device_.storage_alignment();
  const std::size_t first_byte = at.first * sizeof(float);
  const std::size_t start = first_byte / align * align;
  const std::size_t end = std::min((at.first + elements) * sizeof(float), at.size * sizeof(float));
  if (end - start > device_.max_block_bytes())
    throw std::runtime_error("opengl backend: a tensor of " + std::to_string(elements) +
                             " values exceeds the driver's largest storage block");
  glBindBufferRange(GL_SHADER_STORAGE_BUFFER, binding, at.buffer, GLintptr(start),
                    GLsizeiptr(end - start));
  program.set((std::string(name) + "_off").c_str(),
              static_cast<int>((first_byte - start) / sizeof(float)));
}

void Dispatcher::bind_buffer(int binding, GLuint buffer) {
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, binding, buffer);
}

void Dispatcher::dispatch(unsigned x, unsigned y) {
  if (x == 0 || y == 0) return;
  glDispatchCompute(x, y, 1);
  barrier();
}

void Dispatcher::dispatch_rows(std::size_t rows) {
  if (rows == 0) return;
  const std::size_t x = std::min<std::size_t>(rows, 65535);
  dispatch(unsigned(x), unsigned((rows + x - 1) / x));
}

void Dispatcher::dispatch_elements(std::size_t count) {
  dispatch_rows((count + 255) / 256);
}

void Dispatcher::barrier() {
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
}

}  // namespace attnscope::gl
