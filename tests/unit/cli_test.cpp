// The command-line contract of shared/DESIGN.md: exit codes, and an executable that starts on a
// machine without the CUDA runtime.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/common/shell.h"

namespace {

namespace fs = std::filesystem;

fs::path attnscope_exe() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "attnscope";
}

using CliRun = attnscope::test::ShellRun;

CliRun run(const std::string& args) {
  // Built with append: GCC 12 gives a false -Wrestrict on a chain of operator+ here.
  std::string cmd = "'";
  cmd.append(attnscope_exe().string()).append("' ").append(args).append(" 2>&1");
  return attnscope::test::run_shell(cmd);
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(attnscope_exe())) GTEST_SKIP() << "the app was not built";
  }
};

TEST_F(Cli, HelpExitsZeroAndListsSubcommands) {
  const CliRun r = run("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"export", "tokenize", "models", "--screenshot", "--backend"})
    EXPECT_NE(r.output.find(word), std::string::npos) << word;
}

TEST_F(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run("--no-such-flag").exit_code, 2);
  EXPECT_EQ(run("export --text hi --backend tpu").exit_code, 2);
  EXPECT_EQ(run("export").exit_code, 2);  // --text is required
  EXPECT_EQ(run("--scale 3 --screenshot x.png").exit_code, 2);
}

TEST_F(Cli, UnknownModelIsAOneLineUsageError) {
  const CliRun r = run("export --model no-such-model-anywhere --text hi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no-such-model-anywhere"), std::string::npos);
}

TEST_F(Cli, ExecutableDoesNotLinkTheCudaRuntime) {
  // The CUDA backend is a dlopen'ed module: the executable itself must start without libcudart.
  const std::string out =
      attnscope::test::run_shell("ldd '" + attnscope_exe().string() + "'").output;
  EXPECT_EQ(out.find("libcudart"), std::string::npos) << out;
  EXPECT_EQ(out.find("libcublas"), std::string::npos) << out;
}

TEST_F(Cli, BackendsSaysCpuAndWhyCudaIsMissing) {
  const CliRun r = run("backends");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("cpu   available"), std::string::npos) << r.output;
  // The CPU's kernel is named, and the reduced-precision AMX one says how to avoid it.
  if (r.output.find("AMX bf16x3") != std::string::npos) {
    EXPECT_NE(r.output.find("ATTNSCOPE_CPU_GEMM=fp32"), std::string::npos) << r.output;
  }
  if (r.output.find("cuda  unavailable") != std::string::npos) {
    EXPECT_NE(r.output.find("auto  uses the CPU"), std::string::npos) << r.output;
  }
}

TEST_F(Cli, CudaRequestedWithoutDeviceIsARuntimeError) {
  const CliRun b = run("backends");
  if (b.output.find("cuda  unavailable") == std::string::npos) GTEST_SKIP() << "CUDA works here";
  // The model is opened first; only count the backend error when the lesson model exists.
  const CliRun r = run("export --text hi --backend cuda");
  if (r.output.find("lesson model is not built") != std::string::npos) GTEST_SKIP();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("CUDA is not available"), std::string::npos) << r.output;
}

}  // namespace
