#include "core/model/hf/download.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/json_file.h"
#include "core/util/sha256.h"

namespace attnscope {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool safe_path_part(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos &&
         s.find('\\') == std::string::npos;
}

// One HTTP GET, into memory or into a file that may be resumed from `resume_from` bytes.
struct Transfer {
  CURL* curl = nullptr;
  // Destination: memory when `path` is empty.
  fs::path path;
  std::uint64_t resume_from = 0;
  std::string memory;
  std::unique_ptr<std::FILE, FileCloser> file;
  // What came back.
  long status = 0;
  bool body_started = false;
  bool restarted = false;     // asked for a range, got the whole file (200)
  bool write_failed = false;  // disk error (errno_at_failure)
  bool bad_range = false;     // 206 for another offset than asked
  int errno_at_failure = 0;
  std::string content_range;   // of the last response
  std::string error_body;      // first bytes of a 4xx/5xx body
  std::uint64_t received = 0;  // body bytes written in this transfer
  // At most this many bytes of the file (its listed size), or of a memory answer; 0: no limit. A
  // server that streams more (no Content-Length) is cut off at the limit, not read to the end.
  std::uint64_t limit = 0;
  bool too_long = false;
  bool any_answer = false;  // a status line or header arrived
  // Called about once a second while the server has accepted the connection but sent nothing.
  std::function<void(double seconds)> on_wait;
  Clock::time_point started = Clock::now(), last_wait_report{};
  // Progress and cancel.
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(std::uint64_t file_bytes, std::uint64_t file_total)> on_bytes;

  std::uint64_t file_bytes() const { return (restarted ? 0 : resume_from) + received; }

  // On the first body byte: where it goes depends on the status (206 appends, 200 rewrites).
  bool start_body() {
    body_started = true;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300 || path.empty()) return true;
    if (status == 206) {
      unsigned long long first = 0;
      if (std::sscanf(content_range.c_str(), "bytes %llu-", &first) != 1 || first != resume_from) {
        bad_range = true;
        return false;
      }
    } else if (resume_from > 0) {
      restarted = true;  // the server ignored Range: start over
    }
    file.reset(std::fopen(path.c_str(), status == 206 ? "ab" : "wb"));
    if (!file) {
      write_failed = true;
      errno_at_failure = errno;
      return false;
    }
    return true;
  }

  static size_t on_write(char* data, size_t size, size_t count, void* self_ptr) {
    auto* self = static_cast<Transfer*>(self_ptr);
    const size_t n = size * count;
    if (!self->body_started && !self->start_body()) return 0;
    if (self->status < 200 || self->status >= 300) {
      if (self->error_body.size() < 2048) self->error_body.append(data, std::min<size_t>(n, 2048));
      return n;
    }
    if (self->limit > 0 && self->file_bytes() + n > self->limit) {
      self->too_long = true;
      return 0;  // curl stops the transfer
    }
    if (self->path.empty()) {
      self->memory.append(data, n);
    } else if (std::fwrite(data, 1, n, self->file.get()) != n) {
      self->write_failed = true;
      self->errno_at_failure = errno;
      return 0;
    }
    self->received += n;
    return n;
  }

  static size_t on_header(char* data, size_t size, size_t count, void* self_ptr) {
    auto* self = static_cast<Transfer*>(self_ptr);
    const size_t n = size * count;
    std::string line(data, n);
    self->any_answer = true;
    if (line.rfind("HTTP/", 0) == 0) self->content_range.clear();  // a new response (redirects)
    if (lower(line.substr(0, 14)) == "content-range:") {
      self->content_range = line.substr(14);
      self->content_range.erase(0, self->content_range.find_first_not_of(" \t"));
    }
    return n;
  }

  static int on_progress(void* self_ptr, curl_off_t dltotal, curl_off_t, curl_off_t, curl_off_t) {
    auto* self = static_cast<Transfer*>(self_ptr);
    if (self->cancel && self->cancel->load()) return 1;
    if (!self->any_answer && self->on_wait) {
      const auto now = Clock::now();
      const double waited = std::chrono::duration<double>(now - self->started).count();
      if (waited >= 2.0 && now - self->last_wait_report >= std::chrono::milliseconds(900)) {
        self->last_wait_report = now;
        self->on_wait(waited);
      }
    }
    if (self->on_bytes && self->body_started && self->status / 100 == 2) {
      // The whole file's size from Content-Length (the rest of it, for a 206), 0 when unknown.
      const std::uint64_t total =
          dltotal > 0 ? (self->restarted || self->status == 200 ? 0 : self->resume_from) +
                            static_cast<std::uint64_t>(dltotal)
                      : 0;
      self->on_bytes(self->file_bytes(), total);
    }
    return 0;
  }
};

struct Session {
  std::string endpoint, token, repo_id;
  long stall_timeout_s = 20;
  double deadline_s = 0;  // 0: none
  Clock::time_point deadline = Clock::time_point::max();

  // Throws DownloadError when the whole download's time is up.
  void check_deadline() const {
    if (Clock::now() < deadline) return;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", deadline_s);
    throw DownloadError("the download of " + repo_id + " did not finish within its " + seconds +
                        " s deadline (the server at " + endpoint +
                        " is too slow or keeps stalling); what arrived is kept: run it again "
                        "to resume");
  }

  // Performs a GET; returns curl's code and fills `t`. `error` gets curl's message.
  CURLcode get(const std::string& url, Transfer& t, std::string& error) const {
    init_curl_once();
    std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
    if (!curl) throw DownloadError("cannot start libcurl");
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    if (!token.empty()) {
      const std::string auth = "Authorization: Bearer " + token;
      headers.reset(curl_slist_append(nullptr, auth.c_str()));
    }
    char errbuf[CURL_ERROR_SIZE] = {0};
    CURL* h = curl.get();
    t.curl = h;
    const std::string range = std::to_string(t.resume_from) + "-";
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);  // the hub redirects weights to its CDN
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "attnscope/" ATTNSCOPE_VERSION);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 20L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, stall_timeout_s);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &Transfer::on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &Transfer::on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
    if (headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    if (t.resume_from > 0) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
    check_deadline();
    if (deadline != Clock::time_point::max()) {  // the rest of the whole download's time
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<long long>(1, left)));
    }
    t.started = Clock::now();
    CURLcode rc = curl_easy_perform(h);
    if (!t.body_started) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t.status);
    if (t.file && std::fflush(t.file.get()) != 0 && rc == CURLE_OK) {
      t.write_failed = true;
      t.errno_at_failure = errno;
    }
    t.file.reset();
    t.curl = nullptr;
    if (rc == CURLE_OPERATION_TIMEDOUT) check_deadline();
    error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT && !t.any_answer)
      error = "the server accepted the connection but sent nothing for " +
              std::to_string(stall_timeout_s) + " s";
    else if (rc == CURLE_OPERATION_TIMEDOUT)
      error = "no data arrived for " + std::to_string(stall_timeout_s) + " s (stalled)";
    return rc;
  }
};

std::string escape_url_part(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

bool valid_repo_id(const std::string& id) {
  static const std::regex pattern(R"(^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$)");
  return std::regex_match(id, pattern) && id.find("--") == std::string::npos &&
         id.find("..") == std::string::npos;
}

// The revision's commit and files, from GET {endpoint}/api/models/{id}/revision/{revision}.
struct RepoInfo {
  std::string sha;
  std::vector<std::string> files;
  std::vector<std::int64_t> sizes;  // -1 when the hub did not say
  std::vector<std::string> sha256;  // of the LFS files (weights); "" for the others
  nlohmann::json config;            // the hub's summary of config.json (may be null)
};

// The file list of a real repo is a few kB (a few hundred kB for repos with thousands of files).
constexpr std::uint64_t kMaxRepoInfoBytes = 16ull << 20;

RepoInfo fetch_repo_info(const Session& session, const DownloadRequest& req,
                         const std::atomic<bool>* cancel, const DownloadProgressFn& progress) {
  const std::string url = session.endpoint + "/api/models/" + req.repo_id + "/revision/" +
                          escape_url_part(req.revision) + "?blobs=true";
  Transfer t;
  t.cancel = cancel;
  t.limit = kMaxRepoInfoBytes;
  t.on_wait = [&](double seconds) {
    if (!progress) return;
    DownloadProgress p;
    p.file = "the file list";
    p.waiting_s = seconds;
    progress(p);
  };
  std::string error;
  CURLcode rc = session.get(url, t, error);
  if (rc == CURLE_ABORTED_BY_CALLBACK && cancel && cancel->load())
    throw DownloadCancelled("download of " + req.repo_id + " cancelled");
  if (t.too_long)
    throw DownloadError("the hub's answer for " + url + " is longer than " +
                        std::to_string(kMaxRepoInfoBytes) + " bytes: not a file list");
  if (rc != CURLE_OK)
    throw DownloadError("cannot reach the hub at " + session.endpoint + ": " + error);
  if (t.status == 404) {
    if (t.error_body.find("Revision") != std::string::npos)
      throw UsageError("revision '" + req.revision + "' of model " + req.repo_id +
                       " not found on the hub");
    throw UsageError(
        "model " + req.repo_id + " not found on the hub (" + session.endpoint +
        "); check the id, e.g. openai-community/gpt2 or google-bert/bert-base-uncased");
  }
  if (t.status == 401 || t.status == 403)
    throw UsageError("model " + req.repo_id + " not found on the hub or not accessible (HTTP " +
                     std::to_string(t.status) +
                     "): for a private or gated model, set HF_TOKEN to a token with access");
  if (t.status != 200)
    throw DownloadError("the hub answered HTTP " + std::to_string(t.status) + " for " + url);
  RepoInfo info;
  try {
    const nlohmann::json doc = nlohmann::json::parse(t.memory);
    info.sha = doc.at("sha").get<std::string>();
    for (const nlohmann::json& s : doc.at("siblings")) {
      info.files.push_back(s.at("rfilename").get<std::string>());
      auto size = s.find("size");
      info.sizes.push_back(size != s.end() && size->is_number_integer() ? size->get<std::int64_t>()
                                                                        : -1);
      std::string sha256;
      if (auto lfs = s.find("lfs"); lfs != s.end() && lfs->is_object())
        sha256 = lfs->value("sha256", std::string());
      const bool hex =
          sha256.size() == 64 && std::all_of(sha256.begin(), sha256.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
          });
      info.sha256.push_back(hex ? sha256 : std::string());
    }
    if (auto c = doc.find("config"); c != doc.end() && c->is_object()) info.config = *c;
  } catch (const nlohmann::json::exception& e) {
    throw DownloadError("unexpected answer from " + url + ": " + json_problem(e));
  }
  if (!safe_path_part(info.sha) ||
      !std::all_of(info.sha.begin(), info.sha.end(), [](char c) { return std::isalnum(c); }))
    throw DownloadError("unexpected commit id '" + quote_excerpt(info.sha) + "' from " + url);
  return info;
}

// Throttles progress reports and keeps the totals.
struct ProgressReporter {
  const DownloadProgressFn& fn;
  DownloadProgress state;
  std::uint64_t done_before_file = 0;  // bytes of the files already finished
  std::uint64_t fetched = 0;           // bytes transferred in this call
  Clock::time_point start = Clock::now(), last_report{};

  void update(std::uint64_t file_bytes, std::uint64_t newly_fetched, bool force) {
    fetched += newly_fetched;
    state.file_done = file_bytes;
    state.done = done_before_file + file_bytes;
    const auto now = Clock::now();
    const double secs = std::chrono::duration<double>(now - start).count();
    state.bytes_per_second = secs > 0 ? fetched / secs : 0.0;
    if (!fn) return;
    if (!force && now - last_report < std::chrono::milliseconds(100)) return;
    last_report = now;
    fn(state);
  }
};

// Whether `part` has the SHA-256 the hub lists (always, when it lists none). A file that does not
// is removed, and `error` says why: its bytes were damaged on the way, and resuming would keep
// them.
bool sha256_matches(const fs::path& part, const std::string& sha256, std::string& error) {
  if (sha256.empty()) return true;
  const std::string got = sha256_file_hex(part);
  if (got == sha256) return true;
  error = part.stem().string() + " has SHA-256 " + got + ", the hub lists " + sha256 +
          " (damaged in transfer; fetched again from the start)";
  std::error_code ec;
  fs::remove(part, ec);
  return false;
}

// Fetches one file into `final_path` (via final_path.incomplete). `expected` < 0 when unknown;
// `sha256` "" when the hub lists none (only its LFS files, the weights, have one). A file already
// in place with the right size is trusted, as huggingface_hub trusts its cache.
void fetch_file(const Session& session, const std::string& url, const fs::path& final_path,
                std::int64_t expected, const std::string& sha256, int attempts,
                ProgressReporter& progress, const std::atomic<bool>* cancel) {
  std::error_code ec;
  if (fs::is_regular_file(final_path, ec) &&
      (expected < 0 || fs::file_size(final_path, ec) == static_cast<std::uint64_t>(expected))) {
    progress.state.file_total = fs::file_size(final_path, ec);
    progress.update(progress.state.file_total, 0, true);
    return;  // fetched before
  }
  const fs::path part = final_path.string() + ".incomplete";
  std::string last_error;
  bool retried_full = false;
  for (int attempt = 1; attempt <= std::max(1, attempts); ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
    std::uint64_t have = fs::is_regular_file(part, ec) ? fs::file_size(part, ec) : 0;
    if (expected >= 0 && have > static_cast<std::uint64_t>(expected)) {
      fs::remove(part, ec);  // longer than the file: not ours to continue
      have = 0;
    }
    if (expected >= 0 && have == static_cast<std::uint64_t>(expected) && have > 0) {
      if (!sha256_matches(part, sha256, last_error)) continue;  // removed: fetched again next time
      fs::rename(part, final_path, ec);  // complete already (cancelled just before the rename)
      if (ec) throw DownloadError("cannot rename " + part.string() + ": " + ec.message());
      progress.update(have, 0, true);
      return;
    }
    Transfer t;
    t.path = part;
    t.resume_from = have;
    t.cancel = cancel;
    if (expected >= 0) t.limit = static_cast<std::uint64_t>(expected);
    t.on_wait = [&](double seconds) {
      progress.state.waiting_s = seconds;
      progress.update(have, 0, true);
      progress.state.waiting_s = 0;
    };
    std::uint64_t reported = have;
    t.on_bytes = [&](std::uint64_t bytes, std::uint64_t total) {
      if (progress.state.file_total == 0) progress.state.file_total = total;  // hub gave no size
      progress.update(bytes, bytes > reported ? bytes - reported : 0, false);
      reported = bytes;
    };
    progress.update(have, 0, true);
    std::string error;
    const CURLcode rc = session.get(url, t, error);
    const std::uint64_t now_have = t.file_bytes();
    progress.update(now_have, now_have > reported ? now_have - reported : 0, true);
    if (cancel && cancel->load())
      throw DownloadCancelled("download cancelled; " + std::to_string(now_have) + " bytes of " +
                              final_path.filename().string() + " kept for resuming");
    if (t.write_failed)
      throw DownloadError("cannot write " + part.string() + ": " +
                          std::strerror(t.errno_at_failure));
    if (t.too_long) {
      fs::remove(part, ec);  // the server does not send the file the hub lists: no retry helps
      throw DownloadError("the server sent more than the " + std::to_string(expected) +
                          " bytes the hub lists for " + final_path.filename().string() + " (" +
                          url + "); stopped reading there");
    }
    if (t.status == 416 && have > 0 && !retried_full) {
      fs::remove(part, ec);  // our partial file does not fit the server's: start over, once
      retried_full = true;
      ++attempts;
      continue;
    }
    if (t.status == 404)
      throw DownloadError(final_path.filename().string() + " not found on the hub (" + url + ")");
    if (t.status == 401 || t.status == 403)
      throw DownloadError("access denied to " + url + " (HTTP " + std::to_string(t.status) +
                          "): set HF_TOKEN to a token with access");
    if (t.bad_range) {
      fs::remove(part, ec);
      last_error = "the server resumed at another offset than asked (" + t.content_range + ")";
      continue;
    }
    if (rc != CURLE_OK) {
      last_error = error;  // dropped connection, timeout: resume on the next attempt
      if (rc == CURLE_OPERATION_TIMEDOUT && !t.any_answer) break;  // a silent server stays silent
      continue;
    }
    if (t.status / 100 != 2) {
      last_error = "HTTP " + std::to_string(t.status);
      continue;
    }
    if (!t.body_started) {  // an empty file: nothing was written
      std::unique_ptr<std::FILE, FileCloser> empty(std::fopen(part.c_str(), "wb"));
      if (!empty)
        throw DownloadError("cannot write " + part.string() + ": " + std::strerror(errno));
    }
    const std::uint64_t size = fs::file_size(part, ec);
    if (expected >= 0 && size != static_cast<std::uint64_t>(expected)) {
      last_error =
          "got " + std::to_string(size) + " bytes, the hub lists " + std::to_string(expected);
      fs::remove(part, ec);
      continue;
    }
    if (!sha256_matches(part, sha256, last_error)) continue;
    fs::rename(part, final_path, ec);
    if (ec) throw DownloadError("cannot rename " + part.string() + ": " + ec.message());
    progress.state.file_total = size;
    progress.update(size, 0, true);
    return;
  }
  throw DownloadError("downloading " + url + " failed: " + last_error +
                      " (run the download again to resume)");
}

// One download of a repo at a time (two writers would interleave their bytes in FILE.incomplete):
// an flock on CACHE/.locks/models--ORG--NAME/attnscope.lock, the folder huggingface_hub keeps its
// own locks in. Released when the process ends, however it ends.
class RepoLock {
 public:
  RepoLock(const fs::path& cache, const std::string& repo_id) {
    const fs::path dir = cache / ".locks" / repo_folder_name(repo_id);
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path file = dir / "attnscope.lock";
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw DownloadError("cannot create " + file.string() + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw DownloadError(repo_id +
                          " is already being downloaded (by another attnscope); wait for "
                          "it to finish or stop it");
    }
  }
  ~RepoLock() { ::close(fd_); }
  RepoLock(const RepoLock&) = delete;
  RepoLock& operator=(const RepoLock&) = delete;

 private:
  int fd_ = -1;
};

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 4) {
    bytes /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace

double DownloadProgress::fraction() const {
  if (total > 0) return std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  if (file_count <= 0) return 0.0;
  const double in_file =
      file_total > 0 ? static_cast<double>(file_done) / static_cast<double>(file_total) : 0.0;
  return std::min(1.0, (std::max(0, file_index - 1) + in_file) / file_count);
}

std::string format_download_progress(const DownloadProgress& p) {
  if (p.waiting_s > 0) {
    std::string s = p.file_count > 0 ? "[" + std::to_string(p.file_index) + "/" +
                                           std::to_string(p.file_count) + "] "
                                     : std::string();
    return s + p.file + "  waiting for the server: no answer for " +
           std::to_string(static_cast<int>(p.waiting_s)) + " s";
  }
  std::string s = "[" + std::to_string(p.file_index) + "/" + std::to_string(p.file_count) + "] " +
                  p.file + "  " + human_bytes(static_cast<double>(p.file_done));
  if (p.file_total > 0) s += " / " + human_bytes(static_cast<double>(p.file_total));
  char pct[16];
  std::snprintf(pct, sizeof pct, "  %3.0f%%", 100.0 * p.fraction());
  s += pct;
  s += "  " + human_bytes(p.bytes_per_second) + "/s";
  return s;
}

DownloadProgressFn download_progress_adapter(ProgressFn progress) {
  if (!progress) return {};
  return [progress = std::move(progress)](const DownloadProgress& p) {
    progress(p.fraction(), format_download_progress(p));
  };
}

namespace {

// "model-00001-of-00003.safetensors" (digits on both sides), checked by hand rather than with a
// std::regex per name: listings may hold tens of thousands of names.
bool is_shard_name(const std::string& f) {
  const std::string prefix = "model-", suffix = ".safetensors";
  if (f.size() <= prefix.size() + suffix.size() || f.compare(0, prefix.size(), prefix) != 0 ||
      f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  const std::string middle = f.substr(prefix.size(), f.size() - prefix.size() - suffix.size());
  const std::size_t of = middle.find("-of-");
  auto digits = [](const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  return of != std::string::npos && digits(middle.substr(0, of)) && digits(middle.substr(of + 4));
}

}  // namespace

std::string hub_endpoint() {
  const char* env = std::getenv("HF_ENDPOINT");
  std::string e = env && *env ? env : "https://huggingface.co";
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

std::vector<std::string> select_model_files(const std::string& repo_id,
                                            const std::vector<std::string>& repo_files) {
  const std::vector<std::string> tokenizer_files = {
      "tokenizer.json",         "vocab.json", "merges.txt", "vocab.txt", "tokenizer_config.json",
      "special_tokens_map.json"};
  const std::unordered_set<std::string> listed(repo_files.begin(), repo_files.end());
  auto has = [&](const std::string& name) { return listed.count(name) > 0; };
  if (!has("config.json"))
    throw ModelError(repo_id + " has no config.json: not a transformers model attnscope can open");
  std::vector<std::string> out;
  for (const std::string& f : tokenizer_files)
    if (has(f)) out.push_back(f);
  if (has("model.safetensors")) {
    out.push_back("model.safetensors");
  } else if (has("model.safetensors.index.json")) {
    out.push_back("model.safetensors.index.json");
    std::vector<std::string> shards;
    for (const std::string& f : listed)
      if (is_shard_name(f)) shards.push_back(f);
    if (shards.size() > kMaxWeightShards)
      throw ModelError(repo_id + " lists " + std::to_string(shards.size()) +
                       " weight shards, more than the " + std::to_string(kMaxWeightShards) +
                       " attnscope accepts (the largest real models have a few hundred); nothing "
                       "downloaded");
    std::sort(shards.begin(), shards.end());
    out.insert(out.end(), shards.begin(), shards.end());
  } else if (has("pytorch_model.bin")) {
    throw ModelError(repo_id +
                     " has only pytorch_model.bin on the hub; attnscope reads safetensors. Convert "
                     "it with Python and transformers: python3 -c \"from transformers import "
                     "AutoModel; AutoModel.from_pretrained('" +
                     repo_id + "').save_pretrained('DIR', safe_serialization=True)\" and open DIR");
  } else {
    throw ModelError(repo_id + " has no model.safetensors on the hub");
  }
  out.push_back("config.json");  // last: a snapshot with config.json is a complete one
  return out;
}

DownloadResult download_model(const DownloadRequest& req, const DownloadProgressFn& progress_fn,
                              const std::atomic<bool>* cancel) {
  if (!valid_repo_id(req.repo_id))
    throw UsageError("'" + req.repo_id + "' is not a repo id such as openai-community/gpt2");
  if (req.revision.empty() || req.revision.front() == '/' ||
      req.revision.find("..") != std::string::npos)
    throw UsageError("bad revision '" + req.revision + "'");
  Session session;
  session.endpoint = req.endpoint.empty() ? hub_endpoint() : req.endpoint;
  while (!session.endpoint.empty() && session.endpoint.back() == '/') session.endpoint.pop_back();
  session.token = req.token;
  if (session.token.empty())
    if (const char* t = std::getenv("HF_TOKEN")) session.token = t;
  session.stall_timeout_s = std::max(1L, req.stall_timeout_s);
  session.repo_id = req.repo_id;
  if (req.deadline_s > 0) {
    session.deadline_s = req.deadline_s;
    session.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(req.deadline_s));
  }

  auto check_cancel = [&] {
    if (cancel && cancel->load())
      throw DownloadCancelled("download of " + req.repo_id + " cancelled");
  };
  check_cancel();
  const RepoInfo info = fetch_repo_info(session, req, cancel, progress_fn);
  if (!info.config.is_null() && model_family(info.config).empty() &&
      (info.config.contains("model_type") || info.config.contains("architectures")))
    throw ModelError("model type " + model_type_name(info.config) +
                     " is not supported yet (attnscope opens " + hf_family_names() +
                     "); nothing downloaded");
  const std::vector<std::string> files = select_model_files(req.repo_id, info.files);

  const fs::path cache =
      req.cache_dir.empty() ? default_hub_cache() : expand_user(req.cache_dir.string());
  const fs::path repo_dir = cache / repo_folder_name(req.repo_id);
  DownloadResult result;
  result.commit = info.sha;
  result.folder = repo_dir / "snapshots" / info.sha;
  std::error_code ec;
  fs::create_directories(result.folder, ec);
  if (ec) throw DownloadError("cannot create " + result.folder.string() + ": " + ec.message());
  const RepoLock lock(cache, req.repo_id);

  ProgressReporter progress{progress_fn, {}};
  progress.state.file_count = static_cast<int>(files.size());
  std::vector<std::int64_t> sizes;
  std::vector<std::string> sha256;
  bool sizes_known = true;
  // Where each file sits in the listing: a map, not a search per file (quadratic in the listing).
  std::unordered_map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < info.files.size(); ++i) position.emplace(info.files[i], i);
  for (const std::string& f : files) {
    const std::size_t at = position.at(f);
    sizes.push_back(info.sizes[at]);
    sha256.push_back(info.sha256[at]);
    if (sizes.back() < 0)
      sizes_known = false;
    else if (sizes_known)
      progress.state.total += static_cast<std::uint64_t>(sizes.back());
  }
  if (!sizes_known) progress.state.total = 0;

  for (size_t i = 0; i < files.size(); ++i) {
    check_cancel();
    progress.state.file = files[i];
    progress.state.file_index = static_cast<int>(i) + 1;
    progress.state.file_total = sizes[i] > 0 ? static_cast<std::uint64_t>(sizes[i]) : 0;
    const std::string url = session.endpoint + "/" + req.repo_id + "/resolve/" + info.sha + "/" +
                            escape_url_part(files[i]);
    fetch_file(session, url, result.folder / files[i], sizes[i], sha256[i], req.attempts_per_file,
               progress, cancel);
    progress.done_before_file += fs::file_size(result.folder / files[i], ec);
    result.files.push_back(files[i]);
  }
  result.bytes_fetched = progress.fetched;

  // refs/<revision> last, atomically: resolve_model_spec() prefers the snapshot it names.
  const fs::path ref = repo_dir / "refs" / req.revision;
  fs::create_directories(ref.parent_path(), ec);
  const fs::path ref_tmp = ref.string() + ".incomplete";
  {
    std::ofstream out(ref_tmp, std::ios::binary | std::ios::trunc);
    out << info.sha;
    if (!out) throw DownloadError("cannot write " + ref_tmp.string());
  }
  fs::rename(ref_tmp, ref, ec);
  if (ec) throw DownloadError("cannot write " + ref.string() + ": " + ec.message());
  return result;
}

}  // namespace attnscope
