#pragma once
// Finding the files in assets/ at run time, wherever attnscope was built or installed.
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

// The folders searched for assets, in order:
//   $ATTNSCOPE_ASSETS, <exe dir>/../share/attnscope/assets (an installed tree: bin/ beside share/),
//   and ATTNSCOPE_SOURCE_DIR/assets (the source tree) only for a binary that runs from the build
//   tree's own bin/ folder: an installed or copied binary never reads the source tree.
std::vector<std::filesystem::path> asset_search_path();

// The first existing `name` in asset_search_path(); throws ModelError naming every folder tried
// and how to point attnscope at the right one.
std::filesystem::path find_asset(const std::string& name);

}  // namespace attnscope
