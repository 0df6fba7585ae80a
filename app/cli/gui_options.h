#pragma once
// The options of the window's display (--screenshot, --scale, --frames, --window, --theme and the
// hidden --layout), shared by the plain GUI and the `view` subcommand.
#include <CLI/CLI.hpp>

#include "app/gui_main.h"

namespace attnscope {

void add_gui_display_options(CLI::App* app, GuiOptions& gui);

}  // namespace attnscope
