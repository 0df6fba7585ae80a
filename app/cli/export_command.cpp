// attnscope export --model M --text T [--backend B] [-o FILE|-]: the JSON trace of one forward
// pass.
#include <cstdio>

#include "app/cli/command.h"
#include "core/backend/select.h"
#include "core/model/registry.h"
#include "core/trace/json_writer.h"
#include "core/trace/trace_check.h"

namespace attnscope {
namespace {

class ExportCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub =
        app.add_subcommand("export", "write the JSON attention trace (attnscope-trace/1)");
    add_model_option(sub, model_);
    sub->add_option("--text,-t", text_, "the text")->required();
    add_backend_option(sub, backend_);
    sub->add_option("-o,--output", out_, "output file, - for stdout")->capture_default_str();
    return sub;
  }

  int run() override {
    auto model = open_model(model_);
    SelectedBackend sel = select_backend(parse_backend_choice(backend_));
    if (!sel.fallback_reason.empty())
      std::fprintf(stderr, "attnscope: using the CPU: %s\n", sel.fallback_reason.c_str());
    const AttentionTrace trace = model->run(text_, *sel.backend);
    check_attention_rows(trace);  // never write NaN or unnormalised rows (exit 1 instead)
    write_output(out_, "trace", [&](std::ostream& out) { write_trace_json(trace, out); });
    return 0;
  }

 private:
  std::string model_ = "lesson", text_, backend_ = "auto", out_ = "-";
};

}  // namespace

std::unique_ptr<Command> make_export_command() {
  return std::make_unique<ExportCommand>();
}

}  // namespace attnscope
