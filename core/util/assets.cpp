#include "core/util/assets.h"

#include <cstdlib>
#include <system_error>

#include "core/util/error.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

// The folder executables are built into (CMake's runtime output folder, compiled in by
// core/CMakeLists.txt): a binary there belongs to a build tree of this source tree.
bool runs_from_build_tree([[maybe_unused]] const fs::path& exe_dir) {
#ifdef ATTNSCOPE_BUILD_BIN_DIR
  std::error_code ec;
  return fs::equivalent(exe_dir, fs::path(ATTNSCOPE_BUILD_BIN_DIR), ec) && !ec;
#else
  return false;
#endif
}

}  // namespace

std::vector<fs::path> asset_search_path() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("ATTNSCOPE_ASSETS"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return dirs;
  const fs::path exe_dir = exe.parent_path();
  dirs.push_back((exe_dir / ".." / "share" / "attnscope" / "assets").lexically_normal());
#ifdef ATTNSCOPE_SOURCE_DIR
  // An installed or copied binary never reads the source tree, even where it still exists.
  if (runs_from_build_tree(exe_dir)) dirs.push_back(fs::path(ATTNSCOPE_SOURCE_DIR) / "assets");
#endif
  return dirs;
}

fs::path find_asset(const std::string& name) {
  std::string tried;
  for (const fs::path& dir : asset_search_path()) {
    std::error_code ec;
    fs::path candidate = (dir / name).lexically_normal();
    if (fs::is_regular_file(candidate, ec)) return candidate;
    tried += (tried.empty() ? " " : ", ") + candidate.string();
  }
  throw ModelError("cannot find the asset '" + name +
                   "'; set ATTNSCOPE_ASSETS to the folder that holds it (attnscope's assets/). "
                   "Tried:" +
                   tried + ".");
}

}  // namespace attnscope
