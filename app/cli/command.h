#pragma once
// One subcommand of the command line (shared/DESIGN.md, "Command line"): a new subcommand is one
// new file app/cli/<name>_command.cpp plus a line in commands.cpp. main.cpp only parses and
// dispatches; the work happens in core/ (and run_gui for the window).
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>

namespace attnscope {

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand with its options to `app` and returns it.
  virtual CLI::App* add_to(CLI::App& app) = 0;
  // Runs after a successful parse when this subcommand was given. Returns the exit code; throws
  // UsageError (exit 2) or any other exception (exit 1) with a one-line message.
  virtual int run() = 0;
};

// Every subcommand, in the order --help lists them (commands.cpp is the registration list).
std::vector<std::unique_ptr<Command>> make_commands();

// Options several subcommands share, spelled once.
// --backend/-b with the choices core/backend/select.h knows.
CLI::Option* add_backend_option(CLI::App* app, std::string& backend);
// --model/-m: lesson, tiny, stories, a Hugging Face model folder, a cached repo id, or a GGUF
// model (a file, a folder holding one, an Ollama name, an LM Studio model).
CLI::Option* add_model_option(CLI::App* app, std::string& model);
// --weighting raw|value-norm (core/analysis/value_weighting.h): apply it with apply_weighting
// right after the run or the read, so everything the command computes sees the weighted trace.
CLI::Option* add_weighting_option(CLI::App* app, std::string& weighting);

// Output files: "-" is stdout. Both throw Error with the path when the write failed (a full disk,
// a closed stdout), so a failed write never exits 0.
void write_output(const std::string& path, const std::string& what,
                  const std::function<void(std::ostream&)>& write);

}  // namespace attnscope
