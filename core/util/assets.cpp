#include "core/util/assets.h"

#include <cstdlib>
#include <system_error>

#include "core/util/error.h"

namespace attnscope {

namespace fs = std::filesystem;

std::vector<fs::path> asset_search_path() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("ATTNSCOPE_ASSETS"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path dir = exe.parent_path();
    dirs.push_back(dir / ".." / "assets");
    dirs.push_back(dir / ".." / ".." / "assets");
    dirs.push_back(dir / ".." / "share" / "attnscope" / "assets");
  }
#ifdef ATTNSCOPE_SOURCE_DIR
  dirs.push_back(fs::path(ATTNSCOPE_SOURCE_DIR) / "assets");
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
