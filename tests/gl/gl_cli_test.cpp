// The opengl backend through the command line: `export --backend opengl` gives the CPU's trace for
// every model kind, `backends` explains why `auto` leaves llvmpipe alone, and a compute shader the
// driver rejects becomes a clear message with the CPU used instead. Runs in CI on llvmpipe.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/backend/select.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path attnscope_exe() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "attnscope";
}

struct CliRun {
  int exit_code;
  std::string out, err;
};

// Runs the executable with `env` (VAR=value ... or empty) before it; stdout and stderr apart.
CliRun run(const std::string& env, const std::string& args) {
  const fs::path err_file =
      fs::temp_directory_path() / ("attnscope_gl_cli_" + std::to_string(::getpid()) + ".err");
  std::string cmd = env;
  cmd.append(" '").append(attnscope_exe().string()).append("' ").append(args);
  cmd.append(" 2>'").append(err_file.string()).append("'");
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "", "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  std::ifstream f(err_file);
  std::string err((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  fs::remove(err_file);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err};
}

class OpenGlCli : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fs::exists(attnscope_exe())) << "the app was not built"; }
};

double worst_attention_diff(const json& a, const json& b) {
  EXPECT_EQ(a["attention"].size(), b["attention"].size());
  double worst = 0;
  for (std::size_t l = 0; l < a["attention"].size(); ++l)
    for (std::size_t h = 0; h < a["attention"][l].size(); ++h)
      for (std::size_t i = 0; i < a["attention"][l][h].size(); ++i)
        for (std::size_t j = 0; j < a["attention"][l][h][i].size(); ++j)
          worst = std::max(worst, std::abs(a["attention"][l][h][i][j].get<double>() -
                                           b["attention"][l][h][i][j].get<double>()));
  return worst;
}

// The whole trace on opengl against the CPU's through the command line, for each kind of model the
// CLI opens: the two built-in ones (lesson, and tiny, a Llama-style decoder), the GPT-2 and BERT
// fixtures. Every decoder family's own arithmetic on opengl is compared in process by
// gl_decoder_equivalence_test (attention and logits) and gl_probe_equivalence_test; running their
// seven fixtures again here, two processes each, cost ~25 s of CI on llvmpipe and checked nothing new.
TEST_F(OpenGlCli, ExportOnOpenGlGivesTheCpusTrace) {
  const std::string fixtures = ATTNSCOPE_FIXTURES;
  const std::string text = "The bank of the river, said she, was 42 steps away.";
  const std::vector<std::string> models = {"lesson", "tiny", fixtures + "/gpt2-tiny-f32",
                                           fixtures + "/bert-tiny-uncased-f16"};
  for (const std::string& model : models) {
    SCOPED_TRACE(model);
    const std::string args = "export --model '" + model + "' --text '" + text + "' --backend ";
    // The CPU in float (no AMX bf16x3), the reference the harness uses.
    const CliRun cpu = run("ATTNSCOPE_CPU_GEMM=fp32", args + "cpu");
    const CliRun gl = run("", args + "opengl");
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    ASSERT_EQ(gl.exit_code, 0) << gl.err;
    EXPECT_EQ(gl.err, "");  // no fallback message
    const json a = json::parse(cpu.out), b = json::parse(gl.out);
    EXPECT_EQ(b["backend"], "opengl");
    EXPECT_EQ(a["tokens"], b["tokens"]);
    EXPECT_LE(worst_attention_diff(a, b), 1e-4);
  }
}

TEST_F(OpenGlCli, BackendsNamesTheRendererAndWhyAutoSkipsASoftwareOne) {
  const CliRun r = run("", "backends");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opengl available"), std::string::npos) << r.out;
  const attnscope::OpenGlProbe gl = attnscope::try_opengl_backend();
  ASSERT_TRUE(gl.backend) << gl.why;
  EXPECT_NE(r.out.find(gl.renderer), std::string::npos) << r.out;
  if (gl.software) {
    EXPECT_NE(r.out.find("software renderer"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("auto never picks it"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("auto  uses OpenGL"), std::string::npos) << r.out;
  }
}

// llvmpipe (what CI has) is slower than the CPU backend: auto must not pick it.
TEST_F(OpenGlCli, AutoNeverPicksASoftwareRenderer) {
  const attnscope::OpenGlProbe gl = attnscope::try_opengl_backend(/*hardware_only=*/true);
  ASSERT_TRUE(gl.available) << gl.why;
  if (!gl.software) GTEST_SKIP() << "a hardware GPU: " << gl.renderer;
  EXPECT_FALSE(gl.backend);
  EXPECT_NE(gl.why.find("software renderer"), std::string::npos) << gl.why;
  const attnscope::SelectedBackend sel = attnscope::select_backend(attnscope::BackendChoice::kAuto);
  EXPECT_NE(sel.backend->name(), "opengl");
  EXPECT_NE(sel.fallback_reason.find("software renderer"), std::string::npos)
      << sel.fallback_reason;
  const CliRun r = run("", "export --text 'the cat sat' --backend auto");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(json::parse(r.out)["backend"], "opengl");
}

// A shader the driver rejects (here: a syntax error put in through the override folder) is named
// with the driver's error line, and the CPU computes instead.
TEST_F(OpenGlCli, ABrokenShaderFallsBackToTheCpuWithAClearMessage) {
  const fs::path dir = fs::temp_directory_path() / ("attnscope_broken_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "softmax_rows.comp.glsl")
      << "#version 430\nlayout(local_size_x = 256) in;\nvoid main() {\n  this is not glsl;\n}\n";
  const CliRun r = run("ATTNSCOPE_SHADER_DIR='" + dir.string() + "'",
                       "export --text 'the cat sat' --backend opengl");
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["backend"], "cpu");
  // One line: which shader, that it failed, the driver's line (with the line number 4).
  EXPECT_NE(r.err.find("using the CPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("softmax_rows.comp.glsl failed to compile"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":4("), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Without the module (or without libEGL) the executable still starts and says why.
TEST_F(OpenGlCli, MissingModuleIsARuntimeErrorNotACrash) {
  const CliRun r = run("ATTNSCOPE_GL_MODULE=/nonexistent/libattnscope_gl.so",
                       "export --text 'the cat sat' --backend opengl");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("OpenGL is not available"), std::string::npos) << r.err;
  const CliRun b = run("ATTNSCOPE_GL_MODULE=/nonexistent/libattnscope_gl.so", "backends");
  EXPECT_EQ(b.exit_code, 0);
  EXPECT_NE(b.out.find("opengl unavailable"), std::string::npos) << b.out;
}

// Where libEGL is missing (here: an unloadable libEGL.so.1 found first through LD_LIBRARY_PATH),
// the executable, which does not link it, starts; only the opengl module fails, and says why.
TEST_F(OpenGlCli, WithoutLibEglTheExecutableStartsAndSaysWhy) {
  std::string deps;
  if (FILE* p = popen(("ldd '" + attnscope_exe().string() + "'").c_str(), "r")) {
    std::array<char, 4096> buf;
    while (size_t n = fread(buf.data(), 1, buf.size(), p)) deps.append(buf.data(), n);
    pclose(p);
  }
  EXPECT_NE(deps.find("libc.so"), std::string::npos) << deps;  // ldd did answer
  EXPECT_EQ(deps.find("libEGL"), std::string::npos) << deps;
  const fs::path dir = fs::temp_directory_path() / ("attnscope_no_egl_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "libEGL.so.1") << "";  // not a library
  const std::string env = "LD_LIBRARY_PATH='" + dir.string() + "'";
  const CliRun b = run(env, "backends");
  const CliRun gl = run(env, "export --text 'the cat sat' --backend opengl");
  const CliRun cpu = run(env, "export --text 'the cat sat' --backend auto");
  fs::remove_all(dir);
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("opengl unavailable"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("libEGL.so.1"), std::string::npos) << b.out;
  EXPECT_EQ(gl.exit_code, 1);
  EXPECT_NE(gl.err.find("OpenGL is not available"), std::string::npos) << gl.err;
  EXPECT_EQ(std::count(gl.err.begin(), gl.err.end(), '\n'), 1) << gl.err;
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_EQ(json::parse(cpu.out)["backend"], "cpu");
}

}  // namespace
