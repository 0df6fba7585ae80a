#pragma once
#include <optional>
#include <string>

namespace attnscope {

struct GuiOptions {
  std::string model = "lesson";
  std::optional<std::string> text;   // first sentence; default: the "bank" example
  std::optional<std::string> text2;  // second sentence (shown side by side)
  std::string backend = "auto";
  std::string screenshot;   // non-empty: render, write this PNG, exit
  int scale = 1;            // screenshot scale: 1, 2 or 4
  int frames = 3;           // frames rendered before the screenshot
  std::string layout_file;  // optional JSON of where cells/labels were drawn (tests)
};

// Opens the window (or renders headless for --screenshot). Returns the process exit code.
int run_gui(const GuiOptions& options);

}  // namespace attnscope
