#pragma once
// Small owning wrappers around GL names (textures, framebuffers, programs): created once, deleted
// with their owner, never copied.
#include <string>

#include "app/render/gl.h"

namespace attnscope {

class GlTexture {
 public:
  GlTexture() = default;
  ~GlTexture() { reset(); }
  GlTexture(const GlTexture&) = delete;
  GlTexture& operator=(const GlTexture&) = delete;
  GLuint id() const { return id_; }
  // (Re)allocates width x height of `internal_format`; `filter` is GL_NEAREST or GL_LINEAR.
  void allocate(int width, int height, GLenum internal_format, GLenum format, GLenum type,
                const void* pixels, GLenum filter);
  int width() const { return width_; }
  int height() const { return height_; }
  void reset();

 private:
  GLuint id_ = 0;
  int width_ = 0, height_ = 0;
};

// A framebuffer with one RGBA8 color texture (heatmap cells, hi-res screenshots).
class GlFramebuffer {
 public:
  GlFramebuffer() = default;
  ~GlFramebuffer() { reset(); }
  GlFramebuffer(const GlFramebuffer&) = delete;
  GlFramebuffer& operator=(const GlFramebuffer&) = delete;
  // Makes sure it is width x height; returns false (and says why) if the driver refuses it.
  bool ensure(int width, int height, GLenum filter, std::string& why);
  GLuint id() const { return fbo_; }
  const GlTexture& color() const { return color_; }
  int width() const { return color_.width(); }
  int height() const { return color_.height(); }
  void reset();

 private:
  GLuint fbo_ = 0;
  GlTexture color_;
};

// A linked vertex + fragment program built from shaders/ (embedded or ATTNSCOPE_SHADER_DIR).
class GlProgram {
 public:
  GlProgram() = default;
  ~GlProgram();
  GlProgram(const GlProgram&) = delete;
  GlProgram& operator=(const GlProgram&) = delete;
  // Throws Error with the compiler's log when a shader does not compile or link.
  void build(const std::string& vertex_file, const std::string& fragment_file);
  GLuint id() const { return id_; }
  GLint uniform(const char* name) const { return glGetUniformLocation(id_, name); }

 private:
  GLuint id_ = 0;
};

// Saves the GL state our own passes touch and restores it at scope exit, so ImGui's renderer and
// the screenshot framebuffer never see a difference.
class GlStateGuard {
 public:
  GlStateGuard();
  ~GlStateGuard();

 private:
  GLint framebuffer_ = 0, program_ = 0, vertex_array_ = 0, active_texture_ = 0;
  GLint texture0_ = 0, texture1_ = 0, viewport_[4] = {0, 0, 0, 0};
  GLboolean blend_ = GL_FALSE, scissor_ = GL_FALSE, depth_ = GL_FALSE;
};

}  // namespace attnscope
