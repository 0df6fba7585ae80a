#pragma once
// The opengl backend's compute shaders (shaders/compute/*.comp.glsl, embedded at build time;
// ATTNSCOPE_SHADER_DIR overrides any of them by file name, for editing without a rebuild).
// Every one is compiled and linked when the backend is made, so a driver that rejects one is found
// before any work starts and the caller can fall back to the CPU.
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <glad/gl.h>

namespace attnscope::gl {

// Files embedded by app/cmake/embed_files.cmake (see this module's CMakeLists.txt).
struct EmbeddedFile {
  const char* name;  // e.g. "shaders/compute/softmax_rows.comp.glsl"
  const char* text;
};
const std::vector<EmbeddedFile>& embedded_files();

// A shader that did not compile or link: which file, and the driver's first error line.
struct ShaderError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ComputeProgram {
 public:
  ComputeProgram() = default;
  ComputeProgram(std::string name, GLuint id) : name_(std::move(name)), id_(id) {}
  const std::string& name() const { return name_; }
  void use() const { glUseProgram(id_); }
  // Uniform setters by name (locations cached); a name the shader does not use is ignored, as GL
  // itself does with location -1.
  void set(const char* uniform, int v);
  void set(const char* uniform, float v);

 private:
  GLint location(const char* uniform);
  std::string name_;
  GLuint id_ = 0;
  std::unordered_map<std::string, GLint> locations_;
};

class ComputePrograms {
 public:
  // Compiles every shader of shaders/compute/; throws ShaderError naming the first that fails.
  void compile_all();
  ~ComputePrograms();
  ComputeProgram& get(const std::string& stem);  // "softmax_rows" for softmax_rows.comp.glsl

 private:
  std::unordered_map<std::string, ComputeProgram> programs_;
  std::vector<GLuint> ids_;
};

}  // namespace attnscope::gl
