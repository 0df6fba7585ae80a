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
    // The whole backend (every shader compiled), so "available" means it computes here.
    const OpenGlProbe gl = try_opengl_backend();
    if (gl.backend)
      std::printf("opengl available    %s\n", gl.renderer.c_str());
    else
      std::printf("opengl unavailable  %s\n", gl.why.c_str());
    if (gl.software)
      std::printf(
          "note: %s is a software renderer (Mesa's CPU rasterizer), slower than the CPU backend,\n"
          "      so auto never picks it; --backend opengl uses it anyway.\n",
          gl.renderer.substr(0, gl.renderer.find(" (")).c_str());
    SelectedBackend chosen = select_backend(BackendChoice::kAuto);
    const std::string& name = chosen.backend->name();
    std::printf("auto  uses %s\n", name == "cuda"     ? "CUDA"
                                   : name == "opengl" ? "OpenGL"
                                                      : "the CPU");
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
