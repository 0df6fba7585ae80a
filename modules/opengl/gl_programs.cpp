#include "modules/opengl/gl_programs.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnscope::gl {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDir = "shaders/compute/";
constexpr const char* kSuffix = ".comp.glsl";
constexpr const char* kPrelude = "shaders/compute/common.glsl";

// The text of an embedded file, or of the file of the same name in ATTNSCOPE_SHADER_DIR. `from`
// says where it came from, for error messages.
std::string shader_text(const std::string& name, std::string& from) {
  if (const char* dir = std::getenv("ATTNSCOPE_SHADER_DIR"); dir && *dir) {
    const fs::path p = fs::path(dir) / fs::path(name).filename();
    if (std::ifstream f(p); f) {
      std::ostringstream s;
      s << f.rdbuf();
      from = p.string();
      return s.str();
    }
  }
  for (const EmbeddedFile& f : embedded_files())
    if (name == f.name) {
      from = name;
      return f.text;
    }
  throw ShaderError("opengl backend: the built-in shader '" + name + "' is missing (rebuild)");
}

// The first line of a driver log that reports an error (or the first non-empty line).
std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line, first;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string::npos || line.find("ERROR") != std::string::npos)
      return line;
  }
  return first.empty() ? "(the driver gave no log)" : first;
}

std::string shader_log(GLuint shader) {
  GLint n = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &n);
  std::string log(std::max(n, 1), '\0');
  glGetShaderInfoLog(shader, n, nullptr, log.data());
  return log.c_str();
}

std::string program_log(GLuint program) {
  GLint n = 0;
  glGetProgramiv(program, GL_INFO_LOG_LENGTH, &n);
  std::string log(std::max(n, 1), '\0');
  glGetProgramInfoLog(program, n, nullptr, log.data());
  return log.c_str();
}

// The shared helpers of common.glsl go right after the shader's #version line; #line directives
// keep the driver's line numbers those of the shader file itself (source string 0) and of
// common.glsl (source string 1).
std::string with_prelude(const std::string& text, const std::string& prelude) {
  const std::size_t eol = text.find('\n');
  if (eol == std::string::npos || text.compare(0, 8, "#version") != 0) return text;
  return text.substr(0, eol + 1) + "#line 1 1\n" + prelude + "\n#line 2 0\n" + text.substr(eol + 1);
}

GLuint compile(const std::string& name, const std::string& prelude) {
  std::string from;
  const std::string source = with_prelude(shader_text(name, from), prelude);
  const GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
  const char* src = source.c_str();
  glShaderSource(shader, 1, &src, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    const std::string log = shader_log(shader);
    glDeleteShader(shader);
    throw ShaderError("opengl shader " + from + " failed to compile: " + first_error_line(log));
  }
  const GLuint program = glCreateProgram();
  glAttachShader(program, shader);
  glLinkProgram(program);
  glDeleteShader(shader);  // the program keeps it while attached
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    const std::string log = program_log(program);
    glDeleteProgram(program);
    throw ShaderError("opengl shader " + from + " failed to link: " + first_error_line(log));
  }
  return program;
}

}  // namespace

GLint ComputeProgram::location(const char* uniform) {
  auto it = locations_.find(uniform);
  if (it != locations_.end()) return it->second;
  const GLint loc = glGetUniformLocation(id_, uniform);
  locations_.emplace(uniform, loc);
  return loc;
}
void ComputeProgram::set(const char* uniform, int v) {
  glUniform1i(location(uniform), v);
}
void ComputeProgram::set(const char* uniform, float v) {
  glUniform1f(location(uniform), v);
}

void ComputePrograms::compile_all() {
  std::string from;
  const std::string prelude = shader_text(kPrelude, from);
  const std::string dir = kDir, suffix = kSuffix;
  for (const EmbeddedFile& f : embedded_files()) {
    const std::string name = f.name;
    if (name.size() <= dir.size() + suffix.size() || name.compare(0, dir.size(), dir) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string stem = name.substr(dir.size(), name.size() - dir.size() - suffix.size());
    const GLuint id = compile(name, prelude);
    ids_.push_back(id);
    programs_[stem] = ComputeProgram(name, id);
  }
}

ComputePrograms::~ComputePrograms() {
  for (GLuint id : ids_) glDeleteProgram(id);
}

ComputeProgram& ComputePrograms::get(const std::string& stem) {
  auto it = programs_.find(stem);
  if (it == programs_.end())
    throw std::runtime_error("opengl backend: no shader " + std::string(kDir) + stem + kSuffix);
  return it->second;
}

}  // namespace attnscope::gl
