#pragma once
// Fetching a model folder from the Hugging Face hub (libcurl) into the hub cache exactly as
// huggingface_hub's hf_hub_download / snapshot_download write it, so Python and attnscope share one
// copy:
//   CACHE/models--ORG--NAME/blobs/<etag>                 the file's bytes, named by its ETag: the
//                                                        SHA-256 of an LFS file (X-Linked-Etag),
//                                                        the git blob id of the others (ETag)
//   CACHE/models--ORG--NAME/snapshots/<commit>/FILE      a RELATIVE symlink ../../blobs/<etag>
//   CACHE/models--ORG--NAME/refs/<revision>              the commit hash (written last, and not for
//                                                        a revision that is itself the commit)
//   CACHE/.locks/models--ORG--NAME/<etag>.lock           flock'ed while a blob is written (the
//                                                        lock huggingface_hub takes for it)
// A file two revisions share is one blob. The ETag comes from a HEAD request on the file's
// resolve/ URL (relative redirects followed, a CDN redirect not), as get_hf_file_metadata does.
// Only the files attnscope reads are fetched: config.json, model.safetensors (or its shards and
// model.safetensors.index.json) and the tokenizer files. config.json comes last, so a snapshot
// holds a config.json only once its weights are complete.
//
// A blob is written to blobs/<etag>.<pid-random>.incomplete (a name no other process writes) and
// renamed into place. An interrupted or cancelled download leaves blobs/<etag>.incomplete behind
// (the name older huggingface_hub versions resumed too); the next attempt (in the same call after a
// dropped connection, or a later call) takes it over by renaming it to its own name and continues
// with an HTTP Range request; a server that ignores Range (answers 200) restarts the file from
// zero.
//
// Earlier attnscope versions wrote plain files into snapshots/<commit>/; they still open, and the
// next download of that model moves each into blobs/ and links it (nothing fetched again).
//
// The endpoint is $HF_ENDPOINT or https://huggingface.co. The token is huggingface_hub's
// (find_hub_token). With HF_HUB_OFFLINE=1 no connection is opened: the cached snapshot of the
// revision is returned, or a DownloadError says offline mode is on and what is missing. Runs on any
// thread; `cancel` is polled during transfers and lock waits (at least once a second).
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
  std::string token;                // empty: find_hub_token()
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
  // With waiting_s: waiting for another process's download of the same blob (its lock), not for
  // the server.
  bool waiting_for_lock = false;
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
  // Offline mode (HF_HUB_OFFLINE): the revision's snapshot as the cache holds it; the hub was not
  // asked.
  bool offline = false;
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

// The token huggingface_hub's get_token() finds (without its OIDC and Colab sources): $HF_TOKEN,
// else $HUGGING_FACE_HUB_TOKEN, else the token file (hub_token_path(): $HF_TOKEN_PATH, else
// $HF_HOME/token, else ~/.cache/huggingface/token). Carriage returns and newlines are removed and
// surrounding whitespace stripped; what is then empty is no token. With
// HF_HUB_DISABLE_IMPLICIT_TOKEN=1 none is used. A token file that exists but cannot be read throws
// a UsageError naming it. The token itself never appears in a message.
struct HubToken {
  std::string value;   // "" when there is none
  std::string source;  // "$HF_TOKEN", "$HUGGING_FACE_HUB_TOKEN" or the file's path
};
HubToken find_hub_token();

// Of a repo's files (the hub's "siblings"), those attnscope needs, in download order (config.json
// last). Throws ModelError when there is no config.json or no safetensors weights (with advice
// when only pytorch_model.bin is there), or more than kMaxWeightShards shards. Linear in the number
// of files (a listing of tens of thousands took seconds of searching).
std::vector<std::string> select_model_files(const std::string& repo_id,
                                            const std::vector<std::string>& repo_files);

}  // namespace attnscope
