#pragma once
// The options of the window's display (--screenshot, --scale, --frames, --window, --theme and the
// test-only ones hidden from --help: --layout, --export-view…), shared by the plain GUI and the
// `view` subcommand.
#include <CLI/CLI.hpp>

#include "app/gui_main.h"

namespace attnscope {

void add_gui_display_options(CLI::App* app, GuiOptions& gui);

}  // namespace attnscope
