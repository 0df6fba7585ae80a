// The registration list of the command line's subcommands (see command.h).
#include "app/cli/command.h"

#include <fstream>
#include <iostream>

#include "core/analysis/value_weighting.h"
#include "core/util/error.h"

namespace attnscope {

std::unique_ptr<Command> make_export_command();
std::unique_ptr<Command> make_generate_command();
std::unique_ptr<Command> make_tokenize_command();
std::unique_ptr<Command> make_models_command();
std::unique_ptr<Command> make_backends_command();
std::unique_ptr<Command> make_download_command();
std::unique_ptr<Command> make_view_command();
std::unique_ptr<Command> make_render_command();
std::unique_ptr<Command> make_heads_command();
std::unique_ptr<Command> make_predict_command();
std::unique_ptr<Command> make_lens_command();

std::vector<std::unique_ptr<Command>> make_commands() {
  std::vector<std::unique_ptr<Command>> all;
  all.push_back(make_export_command());
  all.push_back(make_generate_command());
  all.push_back(make_tokenize_command());
  all.push_back(make_models_command());
  all.push_back(make_backends_command());
  all.push_back(make_download_command());
  all.push_back(make_view_command());
  all.push_back(make_render_command());
  all.push_back(make_heads_command());
  all.push_back(make_predict_command());
  all.push_back(make_lens_command());
  return all;
}

CLI::Option* add_backend_option(CLI::App* app, std::string& backend) {
  return app->add_option("--backend,-b", backend, "compute backend")
      ->check(CLI::IsMember({"auto", "cpu", "cuda", "opengl"}))
      ->capture_default_str();
}

CLI::Option* add_model_option(CLI::App* app, std::string& model) {
  return app
      ->add_option("--model,-m", model,
                   "lesson, tiny, stories (all built in), a Hugging Face model folder, a cached "
                   "repo id, a GGUF file (or a folder holding one), an Ollama name such as "
                   "llama3.2:1b, or an LM Studio model (publisher/repo)")
      ->capture_default_str();
}

CLI::Option* add_weighting_option(CLI::App* app, std::string& weighting) {
  return app
      ->add_option("--weighting", weighting,
                   "raw: the attention weights; value-norm: each weight times the size of what "
                   "its key moves through the head (||v_j W_O,h||), rows renormalised")
      ->check(CLI::IsMember(weighting_names()))
      ->capture_default_str();
}

void write_output(const std::string& path, const std::string& what,
                  const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw Error("writing the " + what + " to standard output failed");
    return;
  }
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot write the " + what + " to '" + path + "'");
  write(f);
  f.flush();
  if (!f) throw Error("writing the " + what + " to '" + path + "' failed");
}

}  // namespace attnscope
