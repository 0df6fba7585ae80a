#pragma once
// Open and save dialogs of the desktop, without a toolkit of our own: zenity (GNOME, GTK) or
// kdialog (KDE) when one is on PATH, run as a child process that the frame loop polls (the
// window keeps drawing while the dialog is open; it never waits on the child), else the typed
// path field of the caller. $ATTNSCOPE_FILE_DIALOG=zenity|kdialog|none chooses (none: always
// the typed path).
//
// The desktop portal (org.freedesktop.portal.FileChooser through libportal) is not used: it
// needs a GLib main loop beside GLFW's and a parent-window handle that GLFW 3.3 does not give
// on X11 or Wayland; zenity and kdialog themselves go through the portal where the desktop
// has one (GTK_USE_PORTAL, KDE's platform theme).
#include <sys/types.h>
#include <string>
#include <vector>

namespace attnscope {

enum class FileDialogKind { kOpen, kSave };

struct FileFilter {
  std::string name;                   // "Sessions"
  std::vector<std::string> patterns;  // {"*.attnscope", "*.json"}
};

// The dialog program to run: $ATTNSCOPE_FILE_DIALOG if set ("none" or empty: none), else zenity,
// else kdialog (kdialog first on KDE: $XDG_CURRENT_DESKTOP names KDE), found on $PATH. Returns
// its path, or "" when there is none.
std::string find_dialog_program();

// The command line (argv) that asks `program` (zenity or kdialog, by its file name) for a file.
// A save dialog of zenity confirms an overwrite itself (--confirm-overwrite).
std::vector<std::string> dialog_command(const std::string& program, FileDialogKind kind,
                                        const std::string& title, const std::string& suggested,
                                        const std::vector<FileFilter>& filters);

class FileDialog {
 public:
  enum class State { kIdle, kRunning, kChosen, kCancelled, kFailed };

  FileDialog() = default;
  FileDialog(const FileDialog&) = delete;
  FileDialog& operator=(const FileDialog&) = delete;
  ~FileDialog();  // a dialog still open is closed (SIGTERM) and reaped

  // Starts the dialog program; false (and nothing runs) when there is none or it cannot start:
  // the caller asks for a typed path instead.
  bool Start(FileDialogKind kind, const std::string& title, const std::string& suggested,
             const std::vector<FileFilter>& filters);
  // Never blocks: reads what the child printed and whether it ended. kChosen (path()), kCancelled
  // (it exited 1, or printed nothing) or kFailed (error()) once when it ended, kRunning while it
  // is open; then kIdle again.
  State Poll();
  bool running() const { return pid_ > 0; }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  // The dialog asked about replacing an existing file itself (zenity's save dialog).
  bool confirmed_overwrite() const { return confirms_overwrite_; }
  const std::string& program() const { return program_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string output_, path_, error_, program_;
  bool confirms_overwrite_ = false;
};

}  // namespace attnscope
