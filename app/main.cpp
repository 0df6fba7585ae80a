// Command line parsing only (shared/DESIGN.md, "Command line"): the GUI's options here, each
// subcommand in its own file under app/cli/ (registered in app/cli/commands.cpp); the work happens
// in core/ and in run_gui(). Exit codes: 0 ok, 2 usage error, 1 runtime error with a one-line
// message on stderr.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli/command.h"
#include "app/cli/gui_options.h"
#include "app/gui_main.h"
#include "core/util/error.h"
#include "core/util/message_line.h"

namespace {

// "--text=" (an empty value in the = form) becomes "--text" "": CLI11 would otherwise take the
// next argument as the value, or report a usage error, while "--text ''" works.
std::vector<std::string> split_empty_assignments(int argc, char** argv) {
  std::vector<std::string> args;
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") options_ended = true;
    if (!options_ended && arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' &&
        arg.find('=') == arg.size() - 1) {
      args.push_back(arg.substr(0, arg.size() - 1));
      args.emplace_back();
    } else {
      args.push_back(std::move(arg));
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11's vector form takes the arguments reversed
  return args;
}

// Everything a command printed must have reached its destination: a full disk or a closed stdout
// is a failure (exit 1), never a silent exit 0.
int check_stdout(int rc) {
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (!failed) return rc;
  std::fprintf(stderr, "attnscope: writing to standard output failed (%s)\n",
               errno ? std::strerror(errno) : "output error");
  return rc == 0 ? 1 : rc;
}

// Every error message leaves here as one readable line of bounded length
// (core/util/message_line.h).
void print_error(const std::string& message) {
  std::fprintf(stderr, "attnscope: %s\n", attnscope::one_line_message(message).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace attnscope;
  // Named, so that --help starts "Usage: attnscope [OPTIONS] [SUBCOMMAND]" and each subcommand's
  // "Usage: attnscope render [OPTIONS]". Options only tests use are in the group "" (not listed).
  CLI::App app{"attnscope — see how attention in transformers works, live", "attnscope"};
  app.set_version_flag("--version", ATTNSCOPE_VERSION);
  app.require_subcommand(0, 1);

  GuiOptions gui;
  add_model_option(&app, gui.model);
  app.add_option("--text,-t", gui.text, "first sentence (default: the \"bank\" example)");
  app.add_option("--text2", gui.text2, "second sentence, shown side by side");
  app.add_option("--target", gui.target,
                 "encoder-decoders (bart, marian, t5): the first sentence's translation to show "
                 "(default: the model's own)");
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
  app.add_option("--ready-file", gui.ready_file,
                 "testing: focus sentence 1's text box, then create this file")
      ->group("");
  app.add_option("--frame-file", gui.frame_file,
                 "testing: once settled, write the number of frames drawn to this file (an idle "
                 "window then draws every 0.05 s)")
      ->group("");
  app.add_option("--hover", gui.hover, "testing: pointer position X,Y in a headless run")
      ->group("");
  app.add_option("--generate", gui.generate,
                 "testing: once the traces are shown, press Generate on sentence 1 for N tokens")
      ->check(CLI::Range(1, 4096))
      ->group("");

  std::vector<std::unique_ptr<Command>> commands = make_commands();
  std::vector<CLI::App*> subcommands;
  for (auto& command : commands) subcommands.push_back(command->add_to(app));

  try {
    std::vector<std::string> args = split_empty_assignments(argc, argv);
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    print_error(std::string(e.what()) + " (run with --help for more information)");
    return 2;
  }

  try {
    for (std::size_t i = 0; i < commands.size(); ++i)
      if (*subcommands[i]) return check_stdout(commands[i]->run());
    return check_stdout(run_gui(gui));
  } catch (const UsageError& e) {
    print_error(e.what());
    return 2;
  } catch (const std::exception& e) {
    print_error(e.what());
    return 1;
  }
}
