#include "app/render/heatmap_renderer.h"

#include "app/ui/colormap.h"
#include "core/util/error.h"

namespace attnscope {

void ColormapRenderer::init() {
  program_.build("shaders/fullscreen.vert.glsl", "shaders/colormap.frag.glsl");
  const auto& maps = colormaps();
  luts_ = std::vector<GlTexture>(maps.size());
  for (size_t i = 0; i < maps.size(); ++i)
    luts_[i].allocate(256, 1, GL_RGB32F, GL_RGB, GL_FLOAT, maps[i].table.data(), GL_LINEAR);
  glGenVertexArrays(1, &vertex_array_);
}

ColormapRenderer::~ColormapRenderer() {
  if (vertex_array_) glDeleteVertexArrays(1, &vertex_array_);
}

void ColormapRenderer::render(const Matrix& values, int colormap, float vmin, float vmax,
                              GlTexture& scratch, GlFramebuffer& target) {
  const int rows = static_cast<int>(values.rows()), cols = static_cast<int>(values.cols());
  if (rows == 0 || cols == 0) return;
  GlStateGuard guard;
  // Matrix is row-major, so row r of the matrix becomes texture row r (texel (c, r)).
  scratch.allocate(cols, rows, GL_R32F, GL_RED, GL_FLOAT, values.data(), GL_NEAREST);
  std::string why;
  if (!target.ensure(cols, rows, GL_NEAREST, why)) throw Error(why);
  glBindFramebuffer(GL_FRAMEBUFFER, target.id());
  glViewport(0, 0, cols, rows);
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_DEPTH_TEST);
  glUseProgram(program_.id());
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, scratch.id());
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, luts_.at(static_cast<size_t>(colormap)).id());
  glUniform1i(program_.uniform("u_values"), 0);
  glUniform1i(program_.uniform("u_lut"), 1);
  glUniform1f(program_.uniform("u_vmin"), vmin);
  glUniform1f(program_.uniform("u_vmax"), vmax);
  glBindVertexArray(vertex_array_);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

}  // namespace attnscope
