#include "app/render/embedded.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/util/error.h"

namespace attnscope {

std::string resource_text(const std::string& name) {
  if (const char* dir = std::getenv("ATTNSCOPE_SHADER_DIR"); dir && *dir) {
    std::filesystem::path p = std::filesystem::path(dir) / std::filesystem::path(name).filename();
    if (std::ifstream f(p); f) {
      std::ostringstream s;
      s << f.rdbuf();
      return s.str();
    }
  }
  for (const EmbeddedFile& f : embedded_files())
    if (name == f.name) return f.text;
  throw Error("missing built-in resource '" + name + "' (rebuild attnscope)");
}

}  // namespace attnscope
