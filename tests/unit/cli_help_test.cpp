// --help names the program (issue 25): "Usage: attnscope [OPTIONS] [SUBCOMMAND]" at the top, each
// subcommand's usage "attnscope <sub>"; options only tests use (--layout) are not listed but work.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/shell.h"

namespace {

namespace fs = std::filesystem;
using attnscope::test::app_exe;
using attnscope::test::run_shell;
using attnscope::test::ShellRun;

ShellRun run(const std::string& args) {
  std::string cmd = "'";
  cmd.append(app_exe().string()).append("' ").append(args).append(" 2>&1");
  return run_shell(cmd);
}

// The subcommands the top-level help lists under "Subcommands:".
std::vector<std::string> listed_subcommands(const std::string& help) {
  std::vector<std::string> subs;
  std::istringstream in(help.substr(help.find("\nSubcommands:\n") + 1));
  std::string line;
  std::getline(in, line);  // "Subcommands:"
  while (std::getline(in, line) && line.rfind("  ", 0) == 0) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    subs.push_back(name);
  }
  return subs;
}

bool lists_option(const std::string& help, const std::string& option) {
  // An option line starts with two spaces and names the option before any description.
  std::istringstream in(help);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  -", 0) != 0) continue;
    const std::string names = line.substr(2, line.find(' ', 2) - 2);
    std::istringstream parts(names);
    std::string part;
    while (std::getline(parts, part, ','))
      if (part == option) return true;
  }
  return false;
}

class CliHelp : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(app_exe())) GTEST_SKIP() << "the app was not built";
  }
};

TEST_F(CliHelp, UsageLineNamesTheProgram) {
  const ShellRun r = run("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("\nUsage: attnscope [OPTIONS] [SUBCOMMAND]\n"), std::string::npos)
      << r.output;
  EXPECT_TRUE(lists_option(r.output, "--model")) << r.output;
  EXPECT_TRUE(lists_option(r.output, "--screenshot")) << r.output;
}

TEST_F(CliHelp, EverySubcommandsUsageNamesTheProgram) {
  const std::vector<std::string> subs = listed_subcommands(run("--help").output);
  ASSERT_GE(subs.size(), 11u);
  for (const std::string& sub : subs) {
    const ShellRun r = run(sub + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.output.find("\nUsage: attnscope " + sub + " [OPTIONS]"), std::string::npos)
        << r.output;
  }
}

TEST_F(CliHelp, TestOnlyOptionsAreNotListed) {
  for (const char* args : {"--help", "view --help", "render --help"}) {
    const ShellRun r = run(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    for (const char* hidden : {"--layout", "--export-view", "--keys", "--frame-file", "--hover"})
      EXPECT_FALSE(lists_option(r.output, hidden)) << args << " lists " << hidden;
    EXPECT_EQ(r.output.find("testing:"), std::string::npos) << r.output;
  }
}

TEST_F(CliHelp, HiddenLayoutOptionIsStillAccepted) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnscope_cli_help_" + std::to_string(getpid()));
  fs::create_directories(dir);
  // render writes the figure and the layout file without a display.
  const fs::path svg = dir / "f.svg", layout = dir / "layout.json";
  ShellRun r = run("render --text 'The bank of the river' -o '" + svg.string() + "' --layout '" +
                   layout.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_regular_file(layout));
  EXPECT_GT(fs::file_size(layout), 2u);
  // view takes the window's --layout: parsed before the trace is read, so a missing trace is a
  // runtime error (1), not an unknown option (2).
  r = run("view '" + (dir / "no_such_trace.json").string() + "' --layout '" + layout.string() +
          "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("not expected"), std::string::npos) << r.output;
  // An unknown option next to it is still refused.
  EXPECT_EQ(run("view '" + (dir / "no_such_trace.json").string() + "' --no-such-option").exit_code,
            2);
  fs::remove_all(dir);
}

}  // namespace
