// attnscope view FILE [GUI options]: opens a stored trace (attnscope-trace/1 JSON or the
// safetensors trace of `export --format safetensors`) in every view, without a model. The file is
// read and validated before the window opens, so a bad one exits 1 with a one-line error.
#include "app/cli/command.h"
#include "app/cli/gui_options.h"
#include "app/gui_main.h"
#include "core/trace/trace_model.h"

namespace attnscope {
namespace {

class ViewCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "view", "open a stored trace (attnscope-trace/1 JSON or safetensors) in the window");
    sub->add_option("file", file_, "the trace file")->required();
    add_gui_display_options(sub, gui_);
    return sub;
  }

  int run() override {
    auto model = open_trace_model(file_);
    gui_.model = "trace " + model->source();
    gui_.text = model->trace().text;
    gui_.model_instance = std::move(model);
    return run_gui(gui_);
  }

 private:
  std::string file_;
  GuiOptions gui_;
};

}  // namespace

std::unique_ptr<Command> make_view_command() {
  return std::make_unique<ViewCommand>();
}

}  // namespace attnscope
