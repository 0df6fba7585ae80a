// Command line parsing only (shared/DESIGN.md, "Command line"): the GUI's options here, each
// subcommand in its own file under app/cli/ (registered in app/cli/commands.cpp); the work happens
// in core/ and in run_gui(). Exit codes: 0 ok, 2 usage error, 1 runtime error with a one-line
// message on stderr.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "app/cli/command.h"
#include "app/cli/gui_options.h"
#include "app/gui_main.h"
#include "core/util/error.h"

int main(int argc, char** argv) {
  using namespace attnscope;
  CLI::App app{"attnscope — see how attention in transformers works, live"};
  app.set_version_flag("--version", ATTNSCOPE_VERSION);
  app.require_subcommand(0, 1);

  GuiOptions gui;
  add_model_option(&app, gui.model);
  app.add_option("--text,-t", gui.text, "first sentence (default: the \"bank\" example)");
  app.add_option("--text2", gui.text2, "second sentence, shown side by side");
  add_backend_option(&app, gui.backend);
  add_gui_display_options(&app, gui);
  app.add_option("--session", gui.session, "open this session file (.attnscope)");
  app.add_option("--lesson", gui.lesson_step,
                 "start the guided lesson (presentation mode), at step 1-8")
      ->expected(0, 1)
      ->default_str("1")
      ->check(CLI::Range(1, 8));
  app.add_option("--keys", gui.keys, "testing: press these keys once the traces are shown")
      ->group("");
  app.add_option("--drop", gui.drop, "testing: open this path as if dropped on the window")
      ->group("");
  app.add_option("--type-keys", gui.type_keys, "testing: type this into sentence 1")
      ->group("");  // hidden from --help
  app.add_option("--hover", gui.hover, "testing: pointer position X,Y in a headless run")
      ->group("");

  std::vector<std::unique_ptr<Command>> commands = make_commands();
  std::vector<CLI::App*> subcommands;
  for (auto& command : commands) subcommands.push_back(command->add_to(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  try {
    for (std::size_t i = 0; i < commands.size(); ++i)
      if (*subcommands[i]) return commands[i]->run();
    return run_gui(gui);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "attnscope: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope: %s\n", e.what());
    return 1;
  }
}
