#pragma once
// Text files embedded into the executable at build time (shaders/*.glsl, assets/colormaps/*.csv).
#include <string>
#include <vector>

namespace attnscope {

struct EmbeddedFile {
  const char* name;  // path relative to the repository root, e.g. "shaders/colormap.frag.glsl"
  const char* text;
};

const std::vector<EmbeddedFile>& embedded_files();

// The text of `name`. Shaders can be overridden at run time: when the environment variable
// ATTNSCOPE_SHADER_DIR names a folder holding the file's base name, that file is read instead.
// Throws Error when neither exists.
std::string resource_text(const std::string& name);

}  // namespace attnscope
