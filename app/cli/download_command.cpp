// attnscope download ID [--revision R] [--cache DIR]: fetch a model into the HF cache layout.
#include <unistd.h>

#include <cstdio>

#include "app/cli/command.h"
#include "core/model/hf/download.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

class DownloadCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub =
        app.add_subcommand("download", "fetch a model from the Hugging Face hub into the cache");
    sub->add_option("id", id_, "repo id, e.g. openai-community/gpt2")->required();
    sub->add_option("--revision", revision_, "branch, tag or commit")->capture_default_str();
    sub->add_option("--cache", cache_, "hub cache folder (default $HF_HUB_CACHE or $HF_HOME/hub)");
    sub->add_option("--deadline", deadline_s_,
                    "give up after this many seconds in all (0: never); a later run resumes")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e9));
    return sub;
  }

  // Progress on stderr: one line redrawn in place on a terminal, a line per file otherwise.
  int run() override {
    DownloadRequest req;
    req.repo_id = id_;
    req.revision = revision_;
    req.cache_dir = cache_;
    req.deadline_s = deadline_s_;
    const bool tty = isatty(STDERR_FILENO);
    int printed_file = 0;
    DownloadResult r = download_model(req, [&](const DownloadProgress& p) {
      if (tty) {
        std::fprintf(stderr, "\r%-78s", format_download_progress(p).c_str());
      } else if (p.waiting_s > 0) {
        std::fprintf(stderr, "%s\n", format_download_progress(p).c_str());
      } else if (p.file_index != printed_file && p.file_total > 0 && p.file_done == p.file_total) {
        std::fprintf(stderr, "%s\n", format_download_progress(p).c_str());
        printed_file = p.file_index;
      }
    });
    if (tty) std::fprintf(stderr, "\n");
    std::printf("%s (commit %s) is in %s\nopen it with: attnscope --model %s\n", id_.c_str(),
                r.commit.c_str(), r.folder.string().c_str(), id_.c_str());
    std::fflush(stdout);
    if (std::ferror(stdout)) throw Error("writing to standard output failed");
    return 0;
  }

 private:
  std::string id_, revision_ = "main", cache_;
  double deadline_s_ = DownloadRequest{}.deadline_s;
};

}  // namespace

std::unique_ptr<Command> make_download_command() {
  return std::make_unique<DownloadCommand>();
}

}  // namespace attnscope
