// attnscope models: the models it can open, and where.
#include <cstdio>

#include "app/cli/command.h"
#include "core/model/registry.h"

namespace attnscope {
namespace {

class ModelsCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    return app.add_subcommand("models", "list the models attnscope can open");
  }

  int run() override {
    for (const ModelListing& m : list_models()) {
      std::printf("%-28s %-11s %s%s%s\n", m.spec.c_str(), m.kind.c_str(), m.where.c_str(),
                  m.note.empty() ? "" : "  — ", m.note.c_str());
    }
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> make_models_command() {
  return std::make_unique<ModelsCommand>();
}

}  // namespace attnscope
