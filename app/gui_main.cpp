#include "app/gui_main.h"

#include <cstdio>

namespace attnscope {

// Placeholder until the GUI lands (issue 4): says so instead of pretending.
int run_gui(const GuiOptions&) {
  std::fprintf(stderr, "attnscope: the GUI is not built yet; try `attnscope export`\n");
  return 1;
}

}  // namespace attnscope
