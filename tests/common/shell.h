#pragma once
// Runs a shell command line and collects what it prints: the CLI tests' one way to run attnscope.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace attnscope::test {

struct ShellRun {
  int exit_code;       // -1 when the command did not exit normally
  std::string output;  // what the command line sends to its stdout (redirect stderr as needed)
};

inline ShellRun run_shell(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Whether one line of a program's output (stderr) holds `part`: messages stay on one line.
inline bool one_line_containing(const std::string& output, const std::string& part) {
  for (std::size_t at = 0; at < output.size();) {
    const std::size_t end = std::min(output.find('\n', at), output.size());
    if (output.substr(at, end - at).find(part) != std::string::npos) return true;
    at = end + 1;
  }
  return false;
}

// The attnscope binary the build puts beside the test executables (build/bin).
inline std::filesystem::path app_exe() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "attnscope";
}

// `attnscope ARGS`: stdout only, or with stderr folded in. (Built with append: `"'" + string`
// trips GCC 12's false -Wrestrict.)
inline ShellRun run_app(const std::string& args, bool with_stderr = false) {
  std::string cmd = "'";
  cmd.append(app_exe().string()).append("' ").append(args);
  cmd.append(with_stderr ? " 2>&1" : " 2>/dev/null");
  return run_shell(cmd);
}

}  // namespace attnscope::test
