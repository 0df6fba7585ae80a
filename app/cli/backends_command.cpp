// attnscope backends: which compute backends this machine can use, and why not.
#include <cstdio>

#include "app/cli/command.h"
#include "core/backend/select.h"

namespace attnscope {
namespace {

class BackendsCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    return app.add_subcommand("backends", "list the compute backends and whether they work here");
  }

  int run() override {
    SelectedBackend cpu = select_backend(BackendChoice::kCpu);
    std::printf("cpu   available    %s\n", cpu.backend->description().c_str());
    std::string why;
    if (auto cuda = try_cuda_backend(why))
      std::printf("cuda  available    %s\n", cuda->description().c_str());
    else
      std::printf("cuda  unavailable  %s\n", why.c_str());
    SelectedBackend chosen = select_backend(BackendChoice::kAuto);
    std::printf("auto  uses %s\n", chosen.backend->name() == "cuda" ? "CUDA" : "the CPU");
    if (cpu.backend->description().find("bf16x3") != std::string::npos)
      std::printf(
          "note: the CPU's linear layers run on AMX in bf16x3 (each float split in two "
          "bfloat16):\n"
          "      results within about 1e-5 (relative) of float arithmetic, not bit for bit.\n"
          "      ATTNSCOPE_CPU_GEMM=fp32 keeps them in float.\n");
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> make_backends_command() {
  return std::make_unique<BackendsCommand>();
}

}  // namespace attnscope
