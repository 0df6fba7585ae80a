#include "app/ui/file_dialog.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>

extern char** environ;

namespace attnscope {

namespace {
constexpr std::size_t kMaxOutput = 64 * 1024;  // a path; more is not a path

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return {};
  std::string dirs = path;
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

std::string base_name(const std::string& program) {
  return std::filesystem::path(program).filename().string();
}
}  // namespace

std::string find_dialog_program() {
  if (const char* choice = std::getenv("ATTNSCOPE_FILE_DIALOG")) {
    const std::string c = choice;
    if (c.empty() || c == "none") return {};
    if (c.find('/') != std::string::npos) return ::access(c.c_str(), X_OK) == 0 ? c : "";
    return on_path(c);
  }
  const char* desktop = std::getenv("XDG_CURRENT_DESKTOP");
  const bool kde = desktop && std::string(desktop).find("KDE") != std::string::npos;
  static const char* const kGnomeFirst[] = {"zenity", "kdialog"};
  static const char* const kKdeFirst[] = {"kdialog", "zenity"};
  for (const char* name : kde ? kKdeFirst : kGnomeFirst)
    if (std::string p = on_path(name); !p.empty()) return p;
  return {};
}

std::vector<std::string> dialog_command(const std::string& program, FileDialogKind kind,
                                        const std::string& title, const std::string& suggested,
                                        const std::vector<FileFilter>& filters) {
  const bool save = kind == FileDialogKind::kSave;
  std::vector<std::string> argv = {program};
  if (base_name(program).find("kdialog") != std::string::npos) {
    // kdialog --getsavefilename START 'Sessions (*.attnscope *.json)|All files (*)' --title T
    argv.emplace_back(save ? "--getsavefilename" : "--getopenfilename");
    argv.emplace_back(suggested.empty() ? std::string(".") : suggested);
    std::string filter;
    for (const FileFilter& f : filters) {
      std::string patterns;
      for (const std::string& p : f.patterns) patterns += (patterns.empty() ? "" : " ") + p;
      filter += (filter.empty() ? "" : "|") + f.name + " (" + patterns + ")";
    }
    if (!filter.empty()) argv.push_back(filter);
    argv.push_back("--title");
    argv.push_back(title);
    return argv;
  }
  argv.push_back("--file-selection");
  argv.push_back("--title=" + title);
  if (save) {
    argv.push_back("--save");
    argv.push_back("--confirm-overwrite");
  }
  if (!suggested.empty()) argv.push_back("--filename=" + suggested);
  for (const FileFilter& f : filters) {
    std::string arg = "--file-filter=" + f.name + " |";
    for (const std::string& p : f.patterns) arg += " " + p;
    argv.push_back(arg);
  }
  return argv;
}

FileDialog::~FileDialog() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
}

bool FileDialog::Start(FileDialogKind kind, const std::string& title, const std::string& suggested,
                       const std::vector<FileFilter>& filters) {
  if (pid_ > 0) return true;  // one at a time: the open one stays
  path_.clear(), error_.clear(), output_.clear();
  program_ = find_dialog_program();
  if (program_.empty()) return false;
  const std::vector<std::string> args = dialog_command(program_, kind, title, suggested, filters);
  confirms_overwrite_ = kind == FileDialogKind::kSave && base_name(program_) == "zenity";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // GTK's and Qt's chatter ("GtkDialog mapped without a transient parent") is not ours to show.
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program_.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return false;
  }
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  pid_ = pid, out_fd_ = fds[0];
  return true;
}

FileDialog::State FileDialog::Poll() {
  if (pid_ <= 0) return State::kIdle;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n > 0) {
      if (output_.size() < kMaxOutput) output_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EAGAIN: nothing more yet; 0: the child closed its end
  }
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == 0) return State::kRunning;
  // Ended: what is left in the pipe is read now (the child wrote it before exiting).
  for (ssize_t n; (n = ::read(out_fd_, buf, sizeof buf)) > 0;)
    if (output_.size() < kMaxOutput) output_.append(buf, static_cast<std::size_t>(n));
  ::close(out_fd_);
  out_fd_ = -1, pid_ = -1;
  const std::string name = base_name(program_);
  if (done < 0 || !WIFEXITED(status)) {
    error_ = "the file dialog (" + name + ") did not finish";
    return State::kFailed;
  }
  const int code = WEXITSTATUS(status);
  if (code == 1) return State::kCancelled;  // both say "cancelled" with 1
  if (code != 0) {
    error_ = "the file dialog (" + name + ") failed (exit status " + std::to_string(code) + ")";
    return State::kFailed;
  }
  std::string path = output_.substr(0, output_.find('\n'));
  if (!path.empty() && path.back() == '\r') path.pop_back();
  if (path.empty()) return State::kCancelled;
  path_ = path;
  return State::kChosen;
}

}  // namespace attnscope
