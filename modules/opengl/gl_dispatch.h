#pragma once
// Binding tensors to a compute shader and dispatching it (GL thread only).
//
// A tensor argument is bound as the smallest range of its buffer that holds it, aligned as the
// driver asks, and the shader gets `<name>_off` (its first element inside that range) and
// `<name>_stride`. One range may not exceed the driver's GL_MAX_SHADER_STORAGE_BLOCK_SIZE (128 MiB
// on llvmpipe, less than GPT-2's 154 MB token embedding), so ops over larger tensors are cut into
// row blocks that each fit (rows_per_block).
#include <cstddef>

#include "modules/opengl/gl_device.h"
#include "modules/opengl/gl_programs.h"

namespace attnscope::gl {

// Elements a [rows x cols] view with `stride` spans from its first element to its last.
inline std::size_t span(int rows, int cols, int stride) {
  if (rows <= 0 || cols <= 0) return 1;
  return std::size_t(rows - 1) * std::size_t(stride) + std::size_t(cols);
}
inline std::size_t span(const Tensor& t) {
  return span(t.rows, t.cols, t.stride);
}

class Dispatcher {
 public:
  explicit Dispatcher(GlDevice& device) : device_(device) {}
  std::size_t max_block_elements() const { return device_.max_block_bytes() / sizeof(float); }
  // Whether `t` (or `elements` from its start) fits one binding.
  bool fits(const Tensor& t) const { return fits(span(t)); }
  bool fits(std::size_t elements) const;
  // The most rows of a [rows x cols] view with `stride` one binding can hold (at least 1; throws
  // when not even one row fits).
  int rows_per_block(int cols, int stride) const;

  // Binds `t` to `binding` and sets `<name>_off` and `<name>_stride` in `program`.
  void bind(ComputeProgram& program, int binding, const char* name, const Tensor& t);
  // Binds `elements` from `t`'s first element (a tensor read as a flat array).
  void bind_flat(ComputeProgram& program, int binding, const char* name, const Tensor& t,
                 std::size_t elements);
  // Binds a whole buffer that is not a tensor (key padding); no uniforms.
  void bind_buffer(int binding, GLuint buffer);

  // One invocation per element: groups of 256 on a 2-D grid (65535 groups per dimension at most).
  void dispatch_elements(std::size_t count);
  // One work group per row.
  void dispatch_rows(std::size_t rows);
  void dispatch(unsigned x, unsigned y);  // explicit grid; then the barrier below
  // Later dispatches and buffer reads see what earlier dispatches wrote.
  static void barrier();

 private:
  GlDevice& device_;
};

}  // namespace attnscope::gl
