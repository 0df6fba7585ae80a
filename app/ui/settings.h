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
  int screenshot_scale = 1;
  std::string screenshot_folder;             // empty: ~/Pictures/attnscope, else the current folder
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

// Where screenshots go by default: ~/Pictures/attnscope if it can be created, else ".".
std::filesystem::path default_screenshot_folder();

}  // namespace attnscope
