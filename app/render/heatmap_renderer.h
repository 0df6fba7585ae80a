#pragma once
// Turns a weight matrix into colored cells on the GPU: the weights go into a float texture and the
// colormap shader (shaders/colormap.frag.glsl) writes one RGBA pixel per entry into a framebuffer,
// shown with ImGui::Image and nearest filtering. A 512x512 matrix costs one texture upload and one
// quad, like a 5x5 one, and is redone only when the matrix, colormap or range changes.
#include <vector>

#include "app/render/gl_objects.h"
#include "core/util/matrix.h"

namespace attnscope {

class ColormapRenderer {
 public:
  // Compiles the shader and uploads the colormap tables. Throws Error with the reason.
  void init();
  bool ready() const { return vertex_array_ != 0; }
  // values [rows x cols] -> target (cols x rows pixels, row 0 at texture v = 0).
  void render(const Matrix& values, int colormap, float vmin, float vmax, GlTexture& scratch,
              GlFramebuffer& target);
  ~ColormapRenderer();

 private:
  GlProgram program_;
  std::vector<GlTexture> luts_;  // one 256 x 1 RGB32F table per colormap
  GLuint vertex_array_ = 0;
};

}  // namespace attnscope
