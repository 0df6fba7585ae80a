// Desktop conventions (issue 25 part 4) that need no window: where screenshots
// go (XDG_PICTURES_DIR from the environment, user-dirs.dirs or ~/Pictures; the
// file read as the xdg-user-dir program reads it), the window geometry in
// settings.json, and the file dialog's child process (a fake zenity/kdialog on
// disk: what it prints is the chosen path, exit 1 is "cancelled", and polling
// never waits for it).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "app/ui/file_dialog.h"
#include "app/ui/settings.h"

namespace fs = std::filesystem;
using namespace attnscope;

namespace {

fs::path temp_dir() {
  char tmpl[] = "/tmp/attnscope-desktop-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  if (!d) throw std::runtime_error("mkdtemp failed");
  return d;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Sets (or unsets, nullopt) environment variables for one scope, restoring them
// after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// What the xdg-user-dir program (package xdg-user-dirs) answers for PICTURES
// with this HOME and config folder: the independent reference for the file's
// reading. Empty when it is missing.
std::string xdg_user_dir(const fs::path& home, const fs::path& config) {
  if (::access("/usr/bin/xdg-user-dir", X_OK) != 0) return {};
  const std::string cmd = "env -u XDG_PICTURES_DIR HOME='" + home.string() + "' XDG_CONFIG_HOME='" +
                          config.string() + "' /usr/bin/xdg-user-dir PICTURES";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

fs::path write_script(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir / name;
  write(p, "#!/bin/sh\n" + body);
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

// Polls until the dialog ended (at most 10 s); returns the final state.
FileDialog::State wait_for(FileDialog& d) {
  for (int i = 0; i < 1000; ++i) {
    const FileDialog::State s = d.Poll();
    if (s != FileDialog::State::kRunning) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return FileDialog::State::kRunning;
}

}  // namespace

TEST(PicturesFolder, UserDirsFileIsReadAsXdgUserDirReadsIt) {
  const std::string home = "/home/ana";
  const std::string file =
      "# This file is written by xdg-user-dirs-update\n"
      "XDG_DESKTOP_DIR=\"$HOME/Schreibtisch\"\n"
      "XDG_PICTURES_DIR=\"$HOME/Bilder\"\n";
  EXPECT_EQ(user_dirs_value(file, "XDG_PICTURES_DIR", home), "/home/ana/Bilder");
  EXPECT_EQ(user_dirs_value(file, "XDG_DESKTOP_DIR", home), "/home/ana/Schreibtisch");
  EXPECT_EQ(user_dirs_value(file, "XDG_MUSIC_DIR", home), "");
  // Absolute paths, escapes, the home folder itself, the last line winning.
  EXPECT_EQ(user_dirs_value("XDG_PICTURES_DIR=\"/srv/Fotos\"\n", "XDG_PICTURES_DIR", home),
            "/srv/Fotos");
  EXPECT_EQ(
      user_dirs_value("XDG_PICTURES_DIR=\"$HOME/My \\\"Pics\\\"\"\n", "XDG_PICTURES_DIR", home),
      "/home/ana/My \"Pics\"");
  EXPECT_EQ(user_dirs_value("XDG_PICTURES_DIR=\"$HOME/\"\n", "XDG_PICTURES_DIR", home),
            "/home/ana");
  EXPECT_EQ(user_dirs_value("XDG_PICTURES_DIR=\"$HOME/a\"\nXDG_PICTURES_DIR=\"$HOME/b\"\n",
                            "XDG_PICTURES_DIR", home),
            "/home/ana/b");
  // Not settings: a relative path, no quotes, a commented line, another key
  // with the same start.
  EXPECT_EQ(user_dirs_value("XDG_PICTURES_DIR=\"Bilder\"\n", "XDG_PICTURES_DIR", home), "");
  EXPECT_EQ(user_dirs_value("XDG_PICTURES_DIR=$HOME/Bilder\n", "XDG_PICTURES_DIR", home), "");
  EXPECT_EQ(user_dirs_value("#XDG_PICTURES_DIR=\"$HOME/x\"\n", "XDG_PICTURES_DIR", home), "");
  EXPECT_EQ(user_dirs_value("XDG_PICTURES_DIRS=\"$HOME/x\"\n", "XDG_PICTURES_DIR", home), "");
}

TEST(PicturesFolder, AgreesWithTheXdgUserDirProgram) {
  const fs::path dir = temp_dir(), home = dir / "home", config = dir / "config";
  fs::create_directories(home);
  const ScopedEnv h("HOME", home.string()), c("XDG_CONFIG_HOME", config.string()),
      p("XDG_PICTURES_DIR", std::nullopt);
  for (const std::string value : {"$HOME/Bilder", "/srv/Fotos", "$HOME/My \\\"Pics\\\"",
                                  "$HOME/with space/and $dollar", "$HOME/Изображения"}) {
    SCOPED_TRACE(value);
    // The $dollar inside must stay literal for the shell too.
    std::string escaped = value;
    if (const auto i = escaped.find("$dollar"); i != std::string::npos) escaped.insert(i, "\\");
    write(config / "user-dirs.dirs", "XDG_PICTURES_DIR=\"" + escaped + "\"\n");
    const std::string reference = xdg_user_dir(home, config);
    if (reference.empty()) GTEST_SKIP() << "xdg-user-dir (package xdg-user-dirs) is not installed";
    EXPECT_EQ(pictures_folder().string(), reference);
  }
  fs::remove_all(dir);
}

TEST(PicturesFolder, EnvironmentThenUserDirsThenPictures) {
  const fs::path dir = temp_dir(), home = dir / "home", config = dir / "config";
  fs::create_directories(home);
  const ScopedEnv h("HOME", home.string()), c("XDG_CONFIG_HOME", config.string());
  {
    // Nothing set: ~/Pictures.
    const ScopedEnv p("XDG_PICTURES_DIR", std::nullopt);
    EXPECT_EQ(pictures_folder(), home / "Pictures");
    EXPECT_EQ(default_screenshot_folder(), home / "Pictures" / "attnscope");
    EXPECT_TRUE(fs::is_directory(home / "Pictures" / "attnscope"));
    // The file names another folder.
    write(config / "user-dirs.dirs", "XDG_PICTURES_DIR=\"$HOME/Bilder\"\n");
    EXPECT_EQ(pictures_folder(), home / "Bilder");
    EXPECT_EQ(default_screenshot_folder(), home / "Bilder" / "attnscope");
  }
  {
    // The environment wins over the file.
    const ScopedEnv p("XDG_PICTURES_DIR", (dir / "shots").string());
    EXPECT_EQ(pictures_folder(), dir / "shots");
    EXPECT_EQ(default_screenshot_folder(), dir / "shots" / "attnscope");
  }
  {
    // Without XDG_CONFIG_HOME the file is ~/.config/user-dirs.dirs.
    const ScopedEnv p("XDG_PICTURES_DIR", std::nullopt), c2("XDG_CONFIG_HOME", std::nullopt);
    EXPECT_EQ(pictures_folder(), home / "Pictures");
    write(home / ".config" / "user-dirs.dirs", "XDG_PICTURES_DIR=\"/tmp/elsewhere\"\n");
    EXPECT_EQ(pictures_folder(), fs::path("/tmp/elsewhere"));
  }
  {
    // A FIFO in the file's place is not read (it would block the window):
    // ~/Pictures.
    const ScopedEnv p("XDG_PICTURES_DIR", std::nullopt);
    fs::remove(config / "user-dirs.dirs");
    ASSERT_EQ(::mkfifo((config / "user-dirs.dirs").c_str(), 0600), 0);
    EXPECT_EQ(pictures_folder(), home / "Pictures");
  }
  fs::remove_all(dir);
}

TEST(Settings, WindowGeometryRoundTripsAndIsOptional) {
  const fs::path dir = temp_dir();
  const ScopedEnv c("XDG_CONFIG_HOME", dir.string());
  std::string problem;
  Settings none = load_settings(problem);
  EXPECT_TRUE(problem.empty());
  EXPECT_FALSE(none.has_window_position);
  EXPECT_FALSE(none.window_maximized);
  Settings s;
  s.has_window_position = true, s.window_x = -120, s.window_y = 48, s.window_maximized = true;
  s.window_width = 1200, s.window_height = 800;
  ASSERT_TRUE(save_settings(s, problem)) << problem;
  const Settings back = load_settings(problem);
  EXPECT_TRUE(problem.empty()) << problem;
  EXPECT_TRUE(back.has_window_position);
  EXPECT_EQ(back.window_x, -120);
  EXPECT_EQ(back.window_y, 48);
  EXPECT_TRUE(back.window_maximized);
  EXPECT_EQ(back.window_width, 1200);
  // An older file without a position keeps "no position", not (0, 0).
  write(dir / "attnscope" / "settings.json", R"({"window_width": 1000, "window_x": "left"})");
  const Settings old = load_settings(problem);
  EXPECT_FALSE(old.has_window_position);
  EXPECT_EQ(old.window_width, 1000);
  fs::remove_all(dir);
}

TEST(FileDialogCommand, ZenityAndKdialogAreAskedAsTheyDocument) {
  const std::vector<FileFilter> filters = {{"Sessions", {"*.attnscope", "*.json"}},
                                           {"All files", {"*"}}};
  EXPECT_EQ(dialog_command("/usr/bin/zenity", FileDialogKind::kSave, "Save session",
                           "/home/a/x.attnscope", filters),
            (std::vector<std::string>{
                "/usr/bin/zenity", "--file-selection", "--title=Save session", "--save",
                "--confirm-overwrite", "--filename=/home/a/x.attnscope",
                "--file-filter=Sessions | *.attnscope *.json", "--file-filter=All files | *"}));
  EXPECT_EQ(dialog_command("/usr/bin/zenity", FileDialogKind::kOpen, "Open", "/home/a/", {}),
            (std::vector<std::string>{"/usr/bin/zenity", "--file-selection", "--title=Open",
                                      "--filename=/home/a/"}));
  EXPECT_EQ(dialog_command("/usr/bin/kdialog", FileDialogKind::kOpen, "Open session",
                           "/home/a/x.attnscope", filters),
            (std::vector<std::string>{
                "/usr/bin/kdialog", "--getopenfilename", "/home/a/x.attnscope",
                "Sessions (*.attnscope *.json)|All files (*)", "--title", "Open session"}));
  EXPECT_EQ(dialog_command("kdialog", FileDialogKind::kSave, "S", "", {})[1], "--getsavefilename");
}

TEST(FileDialogProgram, FoundOnPathOrChosenOrNone) {
  const fs::path dir = temp_dir();
  write_script(dir, "zenity", "exit 0\n");
  write_script(dir, "kdialog", "exit 0\n");
  const ScopedEnv path("PATH", dir.string() + ":/usr/bin:/bin");
  {
    const ScopedEnv choice("ATTNSCOPE_FILE_DIALOG", std::nullopt),
        desktop("XDG_CURRENT_DESKTOP", "GNOME");
    EXPECT_EQ(find_dialog_program(), (dir / "zenity").string());
  }
  {
    const ScopedEnv choice("ATTNSCOPE_FILE_DIALOG", std::nullopt),
        desktop("XDG_CURRENT_DESKTOP", "KDE");
    EXPECT_EQ(find_dialog_program(), (dir / "kdialog").string());
  }
  {
    const ScopedEnv choice("ATTNSCOPE_FILE_DIALOG", "none");
    EXPECT_EQ(find_dialog_program(), "");
    FileDialog d;
    EXPECT_FALSE(d.Start(FileDialogKind::kOpen, "Open", "", {}));
    EXPECT_FALSE(d.running());
  }
  {
    const ScopedEnv choice("ATTNSCOPE_FILE_DIALOG", "kdialog");
    EXPECT_EQ(find_dialog_program(), (dir / "kdialog").string());
  }
  {
    const ScopedEnv choice("ATTNSCOPE_FILE_DIALOG", std::nullopt), p2("PATH", "/nonexistent");
    EXPECT_EQ(find_dialog_program(), "");
  }
  fs::remove_all(dir);
}

TEST(FileDialogProcess, ChosenCancelledFailedAndNeverWaitedOn) {
  const fs::path dir = temp_dir();
  const ScopedEnv path("PATH", dir.string() + ":/usr/bin:/bin"),
      choice("ATTNSCOPE_FILE_DIALOG", std::nullopt), desktop("XDG_CURRENT_DESKTOP", "GNOME");
  // Records its arguments one a line, then answers like zenity: the path and
  // exit 0.
  write_script(dir, "zenity",
               "for a in \"$@\"; do echo \"$a\"; done > \"" + (dir / "args").string() +
                   "\"\n"
                   "printf '%s\\n' \"" +
                   (dir / "chosen file.attnscope").string() + "\"\n");
  FileDialog d;
  ASSERT_TRUE(d.Start(FileDialogKind::kSave, "Save session", (dir / "s.attnscope").string(),
                      {{"Sessions", {"*.attnscope"}}}));
  EXPECT_EQ(wait_for(d), FileDialog::State::kChosen);
  EXPECT_EQ(d.path(), (dir / "chosen file.attnscope").string());
  EXPECT_TRUE(d.confirmed_overwrite());
  EXPECT_EQ(slurp(dir / "args"),
            "--file-selection\n--title=Save session\n--save\n"
            "--confirm-overwrite\n--filename=" +
                (dir / "s.attnscope").string() + "\n--file-filter=Sessions | *.attnscope\n");
  EXPECT_EQ(d.Poll(), FileDialog::State::kIdle);

  // Exit 1 is "cancelled", as zenity and kdialog say it.
  write_script(dir, "zenity", "exit 1\n");
  ASSERT_TRUE(d.Start(FileDialogKind::kOpen, "Open", "", {}));
  EXPECT_EQ(wait_for(d), FileDialog::State::kCancelled);
  EXPECT_FALSE(d.confirmed_overwrite());
  // Another status is a failure with a message (the caller falls back to the
  // typed path).
  write_script(dir, "zenity", "exit 5\n");
  ASSERT_TRUE(d.Start(FileDialogKind::kOpen, "Open", "", {}));
  EXPECT_EQ(wait_for(d), FileDialog::State::kFailed);
  EXPECT_NE(d.error().find("zenity"), std::string::npos) << d.error();
  EXPECT_NE(d.error().find("5"), std::string::npos) << d.error();

  // A dialog left open for a while: Poll returns at once, many times, until it
  // ends.
  write_script(dir, "zenity", "sleep 1\necho /tmp/later\n");
  ASSERT_TRUE(d.Start(FileDialogKind::kOpen, "Open", "", {}));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(d.Poll(), FileDialog::State::kRunning);
  EXPECT_TRUE(d.running());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
  EXPECT_EQ(wait_for(d), FileDialog::State::kChosen);
  EXPECT_EQ(d.path(), "/tmp/later");

  // Closing the app with the dialog open ends the dialog (no process left
  // behind).
  write_script(dir, "zenity", "echo $$ > \"" + (dir / "pid").string() + "\"\nexec sleep 60\n");
  pid_t child = -1;
  {
    FileDialog open;
    ASSERT_TRUE(open.Start(FileDialogKind::kOpen, "Open", "", {}));
    for (int i = 0; i < 500 && slurp(dir / "pid").empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    child = std::stoi(slurp(dir / "pid"));
  }
  EXPECT_NE(::kill(child, 0), 0) << "the dialog process outlived its FileDialog";
  fs::remove_all(dir);
}
