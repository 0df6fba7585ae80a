#include "app/ui/settings.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

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
                      {"screenshot_scale", s.screenshot_scale},
                      {"screenshot_folder", s.screenshot_folder},
                      {"recent_sessions", s.recent_sessions}};
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

std::filesystem::path default_screenshot_folder() {
  std::error_code ec;
  if (const char* home = std::getenv("HOME"); home && *home) {
    std::filesystem::path dir = std::filesystem::path(home) / "Pictures" / "attnscope";
    if (std::filesystem::create_directories(dir, ec) || std::filesystem::is_directory(dir, ec))
      return dir;
  }
  return std::filesystem::current_path(ec);
}

}  // namespace attnscope
