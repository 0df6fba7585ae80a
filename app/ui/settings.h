#pragma once
// Settings remembered between runs: $XDG_CONFIG_HOME/attnscope/settings.json (or
// ~/.config/attnscope/settings.json). A missing or broken file gives the defaults.
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

struct Settings {
  bool light_theme = false;
  float font_scale = 1.0f;
  bool left_panel = true;  // the controls on the left are shown (Ctrl+B)
  std::string colormap = "viridis";
  bool fixed_range = false;
  int window_width = 1600;
  int window_height = 1000;
  // Where the window was (screen coordinates of its top-left corner) and whether it was maximized;
  // restored only when that corner lies in a connected monitor's work area (gui_main.cpp).
  bool has_window_position = false;
  int window_x = 0, window_y = 0;
  bool window_maximized = false;
  int screenshot_scale = 1;
  std::string screenshot_folder;             // empty: default_screenshot_folder()
  std::vector<std::string> recent_sessions;  // newest first, at most kMaxRecentSessions
};

inline constexpr int kMaxRecentSessions = 8;
// Puts `path` first in the recent list (once), dropping the oldest beyond kMaxRecentSessions.
void remember_session(Settings& settings, const std::string& path);

std::filesystem::path settings_path();  // empty when neither XDG_CONFIG_HOME nor HOME is set
// Loads the settings; `problem` says why the file was ignored (empty when fine or missing).
Settings load_settings(std::string& problem);
// Returns false (and `problem`) when the file cannot be written. The file is replaced atomically
// (core/util/atomic_file.h): a crash while saving leaves the previous settings, never a torn file.
bool save_settings(const Settings& settings, std::string& problem);

// The user's pictures folder: $XDG_PICTURES_DIR, else XDG_PICTURES_DIR in
// $XDG_CONFIG_HOME/user-dirs.dirs (~/.config/user-dirs.dirs; what xdg-user-dirs-update writes and
// xdg-user-dir reads), else ~/Pictures. Empty without HOME (and no absolute setting).
std::filesystem::path pictures_folder();
// The value of `key` in the text of a user-dirs.dirs file, as xdg-user-dir reads it: a line
// KEY="$HOME/Bilder" or KEY="/abs/path" (shell quoting: \" \\ \$ \` escapes); "$HOME" alone is
// the home folder. Empty when the key is missing or its value is neither form.
std::string user_dirs_value(const std::string& text, const std::string& key,
                            const std::string& home);
// Where screenshots and exported views go by default: pictures_folder()/attnscope if it can be
// created, else the current folder.
std::filesystem::path default_screenshot_folder();

}  // namespace attnscope
