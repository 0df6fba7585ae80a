#include "app/render/gl_objects.h"

#include "app/render/embedded.h"
#include "core/util/error.h"

namespace attnscope {

void GlTexture::allocate(int width, int height, GLenum internal_format, GLenum format, GLenum type,
                         const void* pixels, GLenum filter) {
  if (!id_) glGenTextures(1, &id_);
  glBindTexture(GL_TEXTURE_2D, id_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glTexImage2D(GL_TEXTURE_2D, 0, static_cast<GLint>(internal_format), width, height, 0, format,
               type, pixels);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, static_cast<GLint>(filter));
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, static_cast<GLint>(filter));
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  width_ = width;
  height_ = height;
}

void GlTexture::reset() {
  if (id_) glDeleteTextures(1, &id_);
  id_ = 0;
  width_ = height_ = 0;
}

bool GlFramebuffer::ensure(int width, int height, GLenum filter, std::string& why) {
  if (fbo_ && width == color_.width() && height == color_.height()) return true;
  GLint previous = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous);
  if (!fbo_) glGenFramebuffers(1, &fbo_);
  color_.allocate(width, height, GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, nullptr, filter);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, color_.id(), 0);
  GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous));
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    why = "the graphics driver refused a " + std::to_string(width) + "x" + std::to_string(height) +
          " offscreen buffer";
    reset();
    return false;
  }
  return true;
}

void GlFramebuffer::reset() {
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
  fbo_ = 0;
  color_.reset();
}

namespace {
GLuint compile(GLenum kind, const std::string& file) {
  std::string source = resource_text(file);
  GLuint shader = glCreateShader(kind);
  const char* text = source.c_str();
  glShaderSource(shader, 1, &text, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetShaderInfoLog(shader, sizeof log, nullptr, log);
    glDeleteShader(shader);
    throw Error("shader " + file + " does not compile: " + log);
  }
  return shader;
}
}  // namespace

GlProgram::~GlProgram() {
  if (id_) glDeleteProgram(id_);
}

void GlProgram::build(const std::string& vertex_file, const std::string& fragment_file) {
  GLuint vs = compile(GL_VERTEX_SHADER, vertex_file);
  GLuint fs = 0;
  try {
    fs = compile(GL_FRAGMENT_SHADER, fragment_file);
  } catch (...) {
    glDeleteShader(vs);
    throw;
  }
  GLuint program = glCreateProgram();
  glAttachShader(program, vs);
  glAttachShader(program, fs);
  glLinkProgram(program);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetProgramInfoLog(program, sizeof log, nullptr, log);
    glDeleteProgram(program);
    throw Error("shaders " + vertex_file + " + " + fragment_file + " do not link: " + log);
  }
  if (id_) glDeleteProgram(id_);
  id_ = program;
}

GlStateGuard::GlStateGuard() {
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &framebuffer_);
  glGetIntegerv(GL_CURRENT_PROGRAM, &program_);
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vertex_array_);
  glGetIntegerv(GL_ACTIVE_TEXTURE, &active_texture_);
  glActiveTexture(GL_TEXTURE0);
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture0_);
  glActiveTexture(GL_TEXTURE1);
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture1_);
  glGetIntegerv(GL_VIEWPORT, viewport_);
  blend_ = glIsEnabled(GL_BLEND);
  scissor_ = glIsEnabled(GL_SCISSOR_TEST);
  depth_ = glIsEnabled(GL_DEPTH_TEST);
}

GlStateGuard::~GlStateGuard() {
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(framebuffer_));
  glUseProgram(static_cast<GLuint>(program_));
  glBindVertexArray(static_cast<GLuint>(vertex_array_));
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(texture1_));
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(texture0_));
  glActiveTexture(static_cast<GLenum>(active_texture_));
  glViewport(viewport_[0], viewport_[1], viewport_[2], viewport_[3]);
  blend_ ? glEnable(GL_BLEND) : glDisable(GL_BLEND);
  scissor_ ? glEnable(GL_SCISSOR_TEST) : glDisable(GL_SCISSOR_TEST);
  depth_ ? glEnable(GL_DEPTH_TEST) : glDisable(GL_DEPTH_TEST);
}

}  // namespace attnscope
