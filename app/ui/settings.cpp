#include "app/ui/settings.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/util/atomic_file.h"
#include "core/util/file_read.h"

#include <nlohmann/json.hpp>

namespace attnscope {

std::filesystem::path settings_path() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return std::filesystem::path(xdg) / "attnscope" / "settings.json";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::filesystem::path(home) / ".config" / "attnscope" / "settings.json";
  return {};
}

Settings load_settings(std::string& problem) {
  Settings s;
  std::filesystem::path path = settings_path();
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return s;
  try {
    // Read as a regular file of at most 1 MB: a FIFO named settings.json would otherwise block
    // the window before it opens (the problem is shown, the defaults are used).
    nlohmann::json j = nlohmann::json::parse(read_regular_file(path, "settings", 1u << 20));
    s.light_theme = j.value("light_theme", s.light_theme);
    s.font_scale = std::clamp(j.value("font_scale", s.font_scale), 0.5f, 2.5f);
    s.left_panel = j.value("left_panel", s.left_panel);
    s.colormap = j.value("colormap", s.colormap);
    s.fixed_range = j.value("fixed_range", s.fixed_range);
    s.window_width = std::clamp(j.value("window_width", s.window_width), 640, 8192);
    s.window_height = std::clamp(j.value("window_height", s.window_height), 400, 8192);
    if (j.contains("window_x") && j.contains("window_y") && j["window_x"].is_number_integer() &&
        j["window_y"].is_number_integer()) {
      // Any int: the monitor check at start decides; a far-off value is just not restored.
      s.window_x = j["window_x"].get<int>(), s.window_y = j["window_y"].get<int>();
      s.has_window_position = true;
    }
    s.window_maximized = j.value("window_maximized", s.window_maximized);
    int scale = j.value("screenshot_scale", s.screenshot_scale);
    s.screenshot_scale = (scale == 2 || scale == 4) ? scale : 1;
    s.screenshot_folder = j.value("screenshot_folder", s.screenshot_folder);
    if (j.contains("recent_sessions") && j["recent_sessions"].is_array())
      for (const auto& r : j["recent_sessions"])
        if (r.is_string() && static_cast<int>(s.recent_sessions.size()) < kMaxRecentSessions)
          s.recent_sessions.push_back(r.get<std::string>());
  } catch (const std::exception& e) {
    problem = "ignored " + path.string() + ": " + e.what();
    return Settings{};
  }
  return s;
}

bool save_settings(const Settings& s, std::string& problem) {
  std::filesystem::path path = settings_path();
  if (path.empty()) return true;
  nlohmann::json j = {{"light_theme", s.light_theme},
                      {"font_scale", s.font_scale},
                      {"left_panel", s.left_panel},
                      {"colormap", s.colormap},
                      {"fixed_range", s.fixed_range},
                      {"window_width", s.window_width},
                      {"window_height", s.window_height},
                      {"window_maximized", s.window_maximized},
                      {"screenshot_scale", s.screenshot_scale},
                      {"screenshot_folder", s.screenshot_folder},
                      {"recent_sessions", s.recent_sessions}};
  if (s.has_window_position) j["window_x"] = s.window_x, j["window_y"] = s.window_y;
  try {
    write_file_atomically(path, j.dump(2) + "\n");
  } catch (const std::exception& e) {
    problem = e.what();
    return false;
  }
  return true;
}

void remember_session(Settings& settings, const std::string& path) {
  auto& list = settings.recent_sessions;
  list.erase(std::remove(list.begin(), list.end(), path), list.end());
  list.insert(list.begin(), path);
  if (static_cast<int>(list.size()) > kMaxRecentSessions) list.resize(kMaxRecentSessions);
}

std::string user_dirs_value(const std::string& text, const std::string& key,
                            const std::string& home) {
  std::string value;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] == '#' || line.compare(i, key.size(), key) != 0) continue;
    i = line.find_first_not_of(" \t", i + key.size());
    if (i == std::string::npos || line[i] != '=') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || line[i] != '"') continue;
    ++i;
    std::string raw;
    bool closed = false;
    for (; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        raw += line[++i];
      } else if (line[i] == '"') {
        closed = true;
        break;
      } else {
        raw += line[i];
      }
    }
    if (!closed) continue;
    // xdg-user-dir's rule: "$HOME" or "$HOME/…" relative to the home folder, else an absolute
    // path; anything else (a relative path, another variable) is not a setting. The last line
    // with the key wins, as when the shell sources the file.
    if (raw == "$HOME" || raw.rfind("$HOME/", 0) == 0) {
      if (home.empty()) continue;
      value = home + raw.substr(5);
    } else if (!raw.empty() && raw[0] == '/') {
      value = raw;
    }
  }
  // "$HOME/" names the home folder itself: without the trailing slash.
  while (value.size() > 1 && value.back() == '/') value.pop_back();
  return value;
}

std::filesystem::path pictures_folder() {
  const char* env = std::getenv("XDG_PICTURES_DIR");
  if (env && *env && env[0] == '/') return env;
  const char* home_env = std::getenv("HOME");
  const std::string home = home_env && *home_env ? home_env : "";
  std::filesystem::path config;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg && xdg[0] == '/')
    config = xdg;
  else if (!home.empty())
    config = std::filesystem::path(home) / ".config";
  if (!config.empty()) {
    try {
      // A regular file of at most 64 kB: a FIFO there must not block the window.
      const std::string text = read_regular_file(config / "user-dirs.dirs", "user-dirs", 1u << 16);
      if (std::string v = user_dirs_value(text, "XDG_PICTURES_DIR", home); !v.empty()) return v;
    } catch (const std::exception&) {
      // Missing or unreadable: the default below, as xdg-user-dir does.
    }
  }
  if (home.empty()) return {};
  return std::filesystem::path(home) / "Pictures";
}

std::filesystem::path default_screenshot_folder() {
  std::error_code ec;
  if (const std::filesystem::path pictures = pictures_folder(); !pictures.empty()) {
    std::filesystem::path dir = pictures / "attnscope";
    if (std::filesystem::create_directories(dir, ec) || std::filesystem::is_directory(dir, ec))
      return dir;
  }
  return std::filesystem::current_path(ec);
}

}  // namespace attnscope
