// Hostile input at the command line (issue 15): exit codes (0 ok, 2 usage, 1 runtime) and
// one-line messages for empty options, full disks and closed pipes. Runs build/bin/attnscope.
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

// `args` is shell syntax: redirections such as "> /dev/full" or ">&-" apply to attnscope itself.
CliRun run(const std::string& args) {
  std::string cmd = "'";
  cmd.append(attnscope_exe().string()).append("' ").append(args).append(" 2>&3");
  return attnscope::test::run_shell("{ " + cmd + "; } 3>&1");
}

class HostileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(attnscope_exe())) GTEST_SKIP() << "the app was not built";
  }
};

TEST_F(HostileCli, EmptyModelIsAUsageErrorNotTheLessonModel) {
  const CliRun r = run("export --model '' --text hi");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(attnscope::test::one_line_containing(r.output, "attnscope: empty model spec"))
      << r.output;
  EXPECT_EQ(r.output.find("attnscope-trace"), std::string::npos) << r.output;
}

TEST_F(HostileCli, EmptyTextInTheEqualsFormWorksLikeTheSpacedForm) {
  const CliRun equals = run("export --model lesson --backend cpu --text=");
  const CliRun spaced = run("export --model lesson --backend cpu --text ''");
  EXPECT_EQ(equals.exit_code, 0) << equals.output;
  EXPECT_EQ(equals.output, spaced.output);
  EXPECT_EQ(run("tokenize --text= --model lesson").exit_code, 0);
}

TEST_F(HostileCli, FullDiskIsAFailureForEveryOutput) {
  for (const std::string& args :
       {std::string("export --text hi --backend cpu -o /dev/full"),
        std::string("export --text hi --backend cpu > /dev/full"),
        std::string("tokenize --text hi > /dev/full"), std::string("models > /dev/full"),
        std::string("backends > /dev/full")}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_TRUE(attnscope::test::one_line_containing(r.output, "failed")) << args << "\n"
                                                                          << r.output;
  }
}

TEST_F(HostileCli, ClosedStdoutIsAFailure) {
  for (const std::string& args : {std::string("models >&-"), std::string("backends >&-"),
                                  std::string("tokenize --text hi >&-")}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
  }
}

TEST_F(HostileCli, HugeFiniteWeightsExitOneNamingTheLayerInsteadOfWritingNaN) {
  // The fixture GPT-2 with every weight of layer 0's attention scaled by 1e30: finite numbers
  // whose products are not. Written with the test's own few lines of safetensors editing.
  const fs::path source = fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32";
  const fs::path dir =
      fs::temp_directory_path() / ("attnscope_cli_huge_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "vocab.json", "merges.txt"})
    fs::copy_file(source / f, dir / f);
  const std::string script =
      "import json,struct,sys\n"
      "b=bytearray(open(sys.argv[1],'rb').read());n=struct.unpack('<Q',b[:8])[0]\n"
      "h=json.loads(b[8:8+n]);s,e=h['h.0.attn.c_attn.weight']['data_offsets']\n"
      "for i in range(8+n+s,8+n+e,4):\n"
      " v=struct.unpack('<f',b[i:i+4])[0]*1e30;v=max(min(v,3.4e38),-3.4e38)\n"
      " b[i:i+4]=struct.pack('<f',v)\n"
      "open(sys.argv[2],'wb').write(b)\n";
  FILE* py = popen(("python3 - '" + (source / "model.safetensors").string() + "' '" +
                    (dir / "model.safetensors").string() + "'")
                       .c_str(),
                   "w");
  ASSERT_NE(py, nullptr);
  fputs(script.c_str(), py);
  if (pclose(py) != 0) GTEST_SKIP() << "python3 is not available";
  const CliRun r = run("export --backend cpu --text 'she sat by the bank' --model '" +
                       dir.string() + "' > /dev/null");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(attnscope::test::one_line_containing(r.output, "layer 0 (head ")) << r.output;
  fs::remove_all(dir);
}

}  // namespace
