#pragma once
// Fetching a model folder from the Hugging Face hub (libcurl) into the hub cache layout that
// resolve_model_spec() reads:
//   CACHE/models--ORG--NAME/snapshots/<commit sha>/FILE   (plain files; no blobs/ folder and no
//                                                          symlinks: simpler, and the hub cache
//                                                          readers accept it)
//   CACHE/models--ORG--NAME/refs/<revision>               (the commit sha, written last)
// Only the files attnscope reads are fetched: config.json, model.safetensors (or its shards and
// model.safetensors.index.json) and the tokenizer files. config.json comes last, so a snapshot
// holds a config.json only once its weights are complete.
//
// Each file is written to FILE.incomplete and renamed when complete. An interrupted or cancelled
// download leaves FILE.incomplete behind; the next attempt (in the same call after a dropped
// connection, or a later call) continues with an HTTP Range request; a server that ignores Range
// (answers 200) restarts the file from zero.
//
// The endpoint is $HF_ENDPOINT or https://huggingface.co; $HF_TOKEN, when set, is sent as a Bearer
// token. Runs on any thread; `cancel` is polled during transfers (at least once a second).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/util/error.h"

namespace attnscope {

struct DownloadRequest {
  std::string repo_id;              // "openai-community/gpt2" (a bare "gpt2" works on the hub too)
  std::string revision = "main";    // branch, tag or commit
  std::filesystem::path cache_dir;  // empty: default_hub_cache()
  std::string endpoint;             // empty: $HF_ENDPOINT, else https://huggingface.co
  std::string token;                // empty: $HF_TOKEN (if set)
  int attempts_per_file = 4;        // a dropped connection is retried, resuming where it stopped
  // Give up on a connection that delivers no byte for this long (huggingface_hub waits 10 s). A
  // server that accepted the connection but never answered is not asked again.
  long stall_timeout_s = 20;
  // The whole download (file list, every file, every retry) ends within this many seconds, or
  // stops with a DownloadError saying so; what arrived stays for resuming. A server that drips a
  // byte now and then never stalls for good, and each stall time-out restarted the wait. 0: no
  // limit. The default lets 15 GB through at 1 MB/s.
  double deadline_s = 6 * 3600;
};

// More weight shards than any real model has (the largest have a few hundred): a listing with more
// is refused before anything is fetched.
constexpr std::size_t kMaxWeightShards = 4096;

struct DownloadProgress {
  std::string file;                             // the file being fetched
  int file_index = 0, file_count = 0;           // 1-based index of `file` among the files to fetch
  std::uint64_t file_done = 0, file_total = 0;  // bytes of this file; total 0 when unknown
  std::uint64_t done = 0, total = 0;            // bytes of all files; total 0 when unknown
  double bytes_per_second = 0;                  // transfer speed in this call
  double waiting_s = 0;  // > 0: connected, but the server has sent nothing for this long
  // Overall progress in [0, 1] (by bytes when the sizes are known, else by files).
  double fraction() const;
};
// Called on the downloading thread, at most about ten times a second per file and once when each
// file completes.
using DownloadProgressFn = std::function<void(const DownloadProgress&)>;

// "[2/6] model.safetensors  120.5 MB / 548.1 MB   22%  11.3 MB/s" for progress bars and status
// lines.
std::string format_download_progress(const DownloadProgress& progress);

// For callers that show any long operation the same way: reports (fraction(), the line above).
DownloadProgressFn download_progress_adapter(ProgressFn progress);

struct DownloadResult {
  std::filesystem::path folder;  // the snapshot folder: open_model(folder) or the repo id opens it
  std::string commit;            // the commit sha the revision resolved to
  std::vector<std::string> files;  // the files in the folder, in download order
  std::uint64_t bytes_fetched =
      0;  // bytes transferred by this call (already present ones excluded)
};

// The hub or the network failed (the message has curl's or the server's reason).
struct DownloadError : Error {
  using Error::Error;
};
// `*cancel` became true; the partial file stays for a later resume.
struct DownloadCancelled : Error {
  using Error::Error;
};

// Throws UsageError (bad id; model or revision not found on the hub), ModelError (the repo has no
// safetensors weights or an unsupported model type), DownloadError, DownloadCancelled.
DownloadResult download_model(const DownloadRequest& request,
                              const DownloadProgressFn& progress = {},
                              const std::atomic<bool>* cancel = nullptr);

// $HF_ENDPOINT without a trailing slash, else "https://huggingface.co".
std::string hub_endpoint();

// Of a repo's files (the hub's "siblings"), those attnscope needs, in download order (config.json
// last). Throws ModelError when there is no config.json or no safetensors weights (with advice
// when only pytorch_model.bin is there), or more than kMaxWeightShards shards. Linear in the number
// of files (a listing of tens of thousands took seconds of searching).
std::vector<std::string> select_model_files(const std::string& repo_id,
                                            const std::vector<std::string>& repo_files);

}  // namespace attnscope
