// Where assets are read from (core/util/assets.h): $ATTNSCOPE_ASSETS, then the installed tree
// beside the executable, and the source tree only for this build tree's own executables. A copy of
// this test executable placed in another prefix's bin/ must never see the source tree.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/util/assets.h"
#include "core/util/error.h"
#include "tests/common/shell.h"

namespace {

namespace fs = std::filesystem;
using attnscope::asset_search_path;
using attnscope::find_asset;

const fs::path kSourceAssets = fs::path(ATTNSCOPE_SOURCE_DIR) / "assets";

class Assets : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* env = std::getenv("ATTNSCOPE_ASSETS")) saved_ = env, had_ = true;
    unsetenv("ATTNSCOPE_ASSETS");
  }
  void TearDown() override {
    if (had_) setenv("ATTNSCOPE_ASSETS", saved_.c_str(), 1);
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(Assets, BuildTreeExecutableFallsBackToTheSourceTree) {
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe").parent_path();
  const std::vector<fs::path> dirs = asset_search_path();
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], (exe_dir / ".." / "share" / "attnscope" / "assets").lexically_normal());
  EXPECT_EQ(dirs[1], kSourceAssets);
  EXPECT_EQ(find_asset("presets.json"), (kSourceAssets / "presets.json").lexically_normal());
}

TEST_F(Assets, EnvironmentComesFirst) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnscope_assets_env_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "presets.json") << "{}";
  setenv("ATTNSCOPE_ASSETS", dir.c_str(), 1);
  EXPECT_EQ(asset_search_path().front(), dir);
  EXPECT_EQ(find_asset("presets.json"), dir / "presets.json");
  fs::remove_all(dir);
}

// Run only by RelocatedExecutableNeverReadsTheSourceTree, in a copy of this executable: prints the
// search path and what presets.json and lesson_vectors.bin resolve to.
TEST(AssetsChild, PrintSearchPath) {
  if (!std::getenv("ATTNSCOPE_ASSETS_TEST_CHILD")) GTEST_SKIP() << "run by the relocation test";
  for (const fs::path& dir : asset_search_path()) std::printf("dir %s\n", dir.c_str());
  for (const char* name : {"presets.json", "lesson_vectors.bin"}) {
    try {
      std::printf("found %s\n", find_asset(name).c_str());
    } catch (const attnscope::ModelError& e) {
      std::printf("missing %s: %s\n", name, e.what());
    }
  }
}

TEST_F(Assets, RelocatedExecutableNeverReadsTheSourceTree) {
  const fs::path prefix =
      fs::temp_directory_path() / ("attnscope_assets_prefix_" + std::to_string(getpid()));
  fs::remove_all(prefix);
  fs::create_directories(prefix / "bin");
  const fs::path assets = prefix / "share" / "attnscope" / "assets";
  fs::create_directories(assets);
  std::ofstream(assets / "presets.json") << "{}";  // lesson_vectors.bin deliberately absent
  const fs::path copy = prefix / "bin" / "assets_test";
  fs::copy_file(fs::read_symlink("/proc/self/exe"), copy);
  const auto r = attnscope::test::run_shell("ATTNSCOPE_ASSETS_TEST_CHILD=1 '" + copy.string() +
                                            "' --gtest_filter=AssetsChild.PrintSearchPath 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dir " + assets.string() + "\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("found " + (assets / "presets.json").string() + "\n"), std::string::npos)
      << r.output;
  // The source tree has lesson_vectors.bin; the relocated copy must not find it there.
  EXPECT_NE(r.output.find("missing lesson_vectors.bin"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(kSourceAssets.string()), std::string::npos) << r.output;
  fs::remove_all(prefix);
}

}  // namespace
