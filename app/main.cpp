// Command line parsing only (shared/DESIGN.md, "Command line"); the work happens in core/ and in
// run_gui(). Exit codes: 0 ok, 2 usage error, 1 runtime error with a one-line message on stderr.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/gui_main.h"
#include "core/backend/select.h"
#include "core/model/hf/download.h"
#include "core/model/registry.h"
#include "core/trace/json_writer.h"
#include "core/util/error.h"

namespace {

using namespace attnscope;

int cmd_export(const std::string& model_spec, const std::string& text, const std::string& backend,
               const std::string& out_path) {
  auto model = open_model(model_spec);
  SelectedBackend sel = select_backend(parse_backend_choice(backend));
  if (!sel.fallback_reason.empty())
    std::fprintf(stderr, "attnscope: using the CPU: %s\n", sel.fallback_reason.c_str());
  AttentionTrace trace = model->run(text, *sel.backend);
  if (out_path == "-") {
    write_trace_json(trace, std::cout);
    return std::cout.good() ? 0 : 1;
  }
  std::ofstream f(out_path, std::ios::binary);
  if (!f) throw Error("cannot write '" + out_path + "'");
  write_trace_json(trace, f);
  if (!f) throw Error("writing '" + out_path + "' failed");
  return 0;
}

int cmd_tokenize(const std::string& model_spec, const std::string& text, bool special) {
  auto model = open_model(model_spec);
  nlohmann::ordered_json doc = {{"tokens", tokens_to_json(model->tokenize(text), special)}};
  std::cout << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  return 0;
}

// Which compute backends this machine can use, and why not.
int cmd_backends() {
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
        "note: the CPU's linear layers run on AMX in bf16x3 (each float split in two bfloat16):\n"
        "      results within about 1e-5 (relative) of float arithmetic, not bit for bit.\n"
        "      ATTNSCOPE_CPU_GEMM=fp32 keeps them in float.\n");
  return 0;
}

int cmd_models() {
  for (const ModelListing& m : list_models()) {
    std::printf("%-28s %-8s %s%s%s\n", m.spec.c_str(), m.kind.c_str(), m.where.c_str(),
                m.note.empty() ? "" : "  — ", m.note.c_str());
  }
  return 0;
}

// Progress on stderr: one line redrawn in place on a terminal, a line per file otherwise.
int cmd_download(const std::string& id, const std::string& revision, const std::string& cache) {
  DownloadRequest req;
  req.repo_id = id;
  req.revision = revision;
  req.cache_dir = cache;
  const bool tty = isatty(STDERR_FILENO);
  int printed_file = 0;
  DownloadResult r = download_model(req, [&](const DownloadProgress& p) {
    if (tty) {
      std::fprintf(stderr, "\r%-78s", format_download_progress(p).c_str());
    } else if (p.file_index != printed_file && p.file_total > 0 && p.file_done == p.file_total) {
      std::fprintf(stderr, "%s\n", format_download_progress(p).c_str());
      printed_file = p.file_index;
    }
  });
  if (tty) std::fprintf(stderr, "\n");
  std::printf("%s (commit %s) is in %s\nopen it with: attnscope --model %s\n", id.c_str(),
              r.commit.c_str(), r.folder.string().c_str(), id.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attnscope — see how attention in transformers works, live"};
  app.set_version_flag("--version", ATTNSCOPE_VERSION);
  app.require_subcommand(0, 1);

  GuiOptions gui;
  app.add_option("--model,-m", gui.model,
                 "lesson, a Hugging Face model folder, or a cached repo id")
      ->capture_default_str();
  app.add_option("--text,-t", gui.text, "first sentence (default: the \"bank\" example)");
  app.add_option("--text2", gui.text2, "second sentence, shown side by side");
  app.add_option("--backend,-b", gui.backend, "compute backend")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--screenshot", gui.screenshot, "render headless, write this PNG and exit");
  app.add_option("--scale", gui.scale, "screenshot scale")
      ->check(CLI::IsMember({1, 2, 4}))
      ->capture_default_str();
  app.add_option("--frames", gui.frames, "frames rendered before the screenshot")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--layout", gui.layout_file, "write where views were drawn (JSON, for tests)");
  app.add_option("--window", gui.window_size, "window size, e.g. 1280x720")
      ->check([](const std::string& v) {
        int w = 0, h = 0;
        char x = 0, extra = 0;
        return std::sscanf(v.c_str(), "%d%c%d%c", &w, &x, &h, &extra) == 3 && x == 'x' &&
                       w >= 320 && h >= 240 && w <= 8192 && h <= 8192
                   ? std::string()
                   : std::string("expected WIDTHxHEIGHT, e.g. 1280x720");
      });
  app.add_option("--theme", gui.theme, "color theme (light is made for projectors)")
      ->check(CLI::IsMember({"dark", "light"}));
  app.add_option("--type-keys", gui.type_keys, "testing: type this into sentence 1")
      ->group("");  // hidden from --help
  app.add_option("--hover", gui.hover, "testing: pointer position X,Y in a headless run")
      ->group("");

  std::string model = "lesson", text, backend = "auto", out = "-";
  bool special = false;
  auto* exp = app.add_subcommand("export", "write the JSON attention trace (attnscope-trace/1)");
  exp->add_option("--model,-m", model, "model spec")->capture_default_str();
  exp->add_option("--text,-t", text, "the text")->required();
  exp->add_option("--backend,-b", backend, "compute backend")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  exp->add_option("-o,--output", out, "output file, - for stdout")->capture_default_str();

  auto* tok = app.add_subcommand("tokenize", "write the tokens of a text as JSON");
  tok->add_option("--model,-m", model, "model spec")->capture_default_str();
  tok->add_option("--text,-t", text, "the text")->required();
  tok->add_flag("--special", special, "include added special tokens ([CLS], [SEP])");

  auto* models = app.add_subcommand("models", "list the models attnscope can open");
  auto* backends =
      app.add_subcommand("backends", "list the compute backends and whether they work here");

  std::string dl_id, dl_revision = "main", dl_cache;
  auto* dl =
      app.add_subcommand("download", "fetch a model from the Hugging Face hub into the cache");
  dl->add_option("id", dl_id, "repo id, e.g. openai-community/gpt2")->required();
  dl->add_option("--revision", dl_revision, "branch, tag or commit")->capture_default_str();
  dl->add_option("--cache", dl_cache, "hub cache folder (default $HF_HUB_CACHE or $HF_HOME/hub)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  try {
    if (*exp) return cmd_export(model, text, backend, out);
    if (*tok) return cmd_tokenize(model, text, special);
    if (*models) return cmd_models();
    if (*backends) return cmd_backends();
    if (*dl) return cmd_download(dl_id, dl_revision, dl_cache);
    return run_gui(gui);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "attnscope: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope: %s\n", e.what());
    return 1;
  }
}
