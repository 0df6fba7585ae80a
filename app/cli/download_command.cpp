// attnscope download ID [--revision R] [--cache DIR]: fetch a model into the hub cache as
// huggingface_hub lays it out (blobs/, snapshots/ links, refs/), with huggingface_hub's token; in
// offline mode (HF_HUB_OFFLINE=1) it says so and names what the cache has, or fails saying what is
// missing.
#include <unistd.h>

#include <cstdio>

#include "app/cli/command.h"
#include "core/model/hf/download.h"
#include "core/model/hf/hub_cache.h"
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
    sub->add_option("--cache", cache_,
                    "hub cache folder (default $HF_HUB_CACHE, else $HF_HOME/hub, else "
                    "~/.cache/huggingface/hub: the one Python's huggingface_hub uses)");
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
    if (tty && !r.offline) std::fprintf(stderr, "\n");
    if (r.offline)  // HF_HUB_OFFLINE: the hub was not asked, the cache answered
      std::printf(
          "offline mode is on (%s): nothing downloaded, the hub not asked; the cache "
          "has %s (commit %s) in %s\n",
          hub_offline_setting().c_str(), id_.c_str(), r.commit.c_str(), r.folder.string().c_str());
    else
      std::printf("%s (commit %s) is in %s\n", id_.c_str(), r.commit.c_str(),
                  r.folder.string().c_str());
    std::printf("open it with: attnscope --model %s\n", id_.c_str());
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
