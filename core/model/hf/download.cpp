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
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <regex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/file_read.h"
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
  std::string content_range;  // of the last response
  // HEAD instead of GET, redirects not followed (the caller follows relative ones itself).
  bool head_only = false;
  std::map<std::string, std::string> headers;  // of the last response, names in lower case
  std::string error_body;                      // first bytes of a 4xx/5xx body
  std::uint64_t received = 0;                  // body bytes written in this transfer
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
    if (line.rfind("HTTP/", 0) == 0) {  // a new response (redirects)
      self->content_range.clear();
      self->headers.clear();
    }
    if (lower(line.substr(0, 14)) == "content-range:") {
      self->content_range = line.substr(14);
      self->content_range.erase(0, self->content_range.find_first_not_of(" \t"));
    }
    const size_t colon = line.find(':');
    if (colon != std::string::npos && self->headers.size() < 200) {
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      value.erase(value.find_last_not_of(" \t\r\n") + 1);
      self->headers[lower(line.substr(0, colon))] = value.substr(0, 4096);
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
  std::string token_source;  // where the token came from ("" when none is sent), for messages
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
    auto add_header = [&](const std::string& line) {
      if (curl_slist* l = curl_slist_append(headers.get(), line.c_str())) {
        headers.release();
        headers.reset(l);
      }
    };
    if (!token.empty()) add_header("Authorization: Bearer " + token);
    // The file's real size, not a compressed one's (as get_hf_file_metadata asks).
    if (t.head_only) add_header("Accept-Encoding: identity");
    char errbuf[CURL_ERROR_SIZE] = {0};
    CURL* h = curl.get();
    t.curl = h;
    const std::string range = std::to_string(t.resume_from) + "-";
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    // The hub redirects weights to its CDN; a HEAD must stop at that redirect (its headers name
    // the blob, and a CDN URL signed for GET refuses a HEAD).
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, t.head_only ? 0L : 1L);
    if (t.head_only) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
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
  std::vector<std::int64_t> sizes;   // -1 when the hub did not say
  std::vector<std::string> sha256;   // of the LFS files (weights); "" for the others
  std::vector<std::string> blob_id;  // the git blob id ("blobId"), "" when not listed
  nlohmann::json config;             // the hub's summary of config.json (may be null)
};

bool is_hex(const std::string& s, size_t size) {
  return s.size() == size && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

// What to do about an HTTP 401/403, by where the token came from.
std::string token_advice(const Session& session) {
  if (session.token_source.empty())
    return "no token was sent: for a private or gated model set HF_TOKEN, or run `hf auth login` "
           "(`huggingface-cli login`), which writes " +
           hub_token_path().string();
  return "the token from " + session.token_source +
         " was sent and has no access to it (accept the model's terms on its hub page, or set "
         "HF_TOKEN to a token with access)";
}

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
                     std::to_string(t.status) + "): " + token_advice(session));
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
      info.sha256.push_back(is_hex(sha256, 64) ? sha256 : std::string());
      auto blob = s.find("blobId");
      const std::string blob_id =
          blob != s.end() && blob->is_string() ? blob->get<std::string>() : std::string();
      info.blob_id.push_back(is_hex(blob_id, 40) ? blob_id : std::string());
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
bool sha256_matches(const fs::path& part, const std::string& sha256, const std::string& file_name,
                    std::string& error) {
  if (sha256.empty()) return true;
  const std::string got = sha256_file_hex(part);
  if (got == sha256) return true;
  error = file_name + " has SHA-256 " + got + ", the hub lists " + sha256 +
          " (damaged in transfer; fetched again from the start)";
  std::error_code ec;
  fs::remove(part, ec);
  return false;
}

// "<pid>-<8 random hex digits>": a name part no other process (nor call) uses.
std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%ld-%08x", static_cast<long>(::getpid()),
                rd() ^ (counter++ * 0x9e3779b9u));
  return buf;
}

// The partial file of one blob download: blobs/<etag>.<unique>.incomplete, written by this call
// alone. A leftover blobs/<etag>.incomplete (an earlier call's, or an older huggingface_hub's) is
// taken over by renaming it to that name: rename is atomic, so of two processes only one gets
// it. When the download does not complete, what arrived goes back to blobs/<etag>.incomplete for
// the next one to resume; a complete one is renamed to the blob.
class PartFile {
 public:
  explicit PartFile(const fs::path& blob)
      : resume_(blob.string() + ".incomplete"),
        path_(blob.string() + "." + unique_suffix() + ".incomplete") {
    std::error_code ec;
    fs::rename(resume_, path_, ec);  // no leftover: start from nothing
  }
  ~PartFile() {
    std::error_code ec;
    if (!fs::exists(path_, ec)) return;
    if (fs::file_size(path_, ec) > 0 && !ec)
      fs::rename(path_, resume_, ec);
    else
      fs::remove(path_, ec);
  }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path resume_, path_;
};

// Fetches one file into `blob` (blobs/<etag>, via a PartFile). `expected` < 0 when unknown;
// `sha256` "" when unknown (only LFS files, the weights, have one).
void fetch_blob(const Session& session, const std::string& url, const fs::path& blob,
                const std::string& file_name, std::int64_t expected, const std::string& sha256,
                int attempts, ProgressReporter& progress, const std::atomic<bool>* cancel) {
  std::error_code ec;
  const PartFile part_file(blob);
  const fs::path& part = part_file.path();
  const fs::path& final_path = blob;
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
      if (!sha256_matches(part, sha256, file_name, last_error))
        continue;                        // removed: fetched again next time
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
                              file_name + " kept for resuming");
    if (t.write_failed)
      throw DownloadError("cannot write " + part.string() + ": " +
                          std::strerror(t.errno_at_failure));
    if (t.too_long) {
      fs::remove(part, ec);  // the server does not send the file the hub lists: no retry helps
      throw DownloadError("the server sent more than the " + std::to_string(expected) +
                          " bytes the hub lists for " + file_name + " (" + url +
                          "); stopped reading there");
    }
    if (t.status == 416 && have > 0 && !retried_full) {
      fs::remove(part, ec);  // our partial file does not fit the server's: start over, once
      retried_full = true;
      ++attempts;
      continue;
    }
    if (t.status == 404) throw DownloadError(file_name + " not found on the hub (" + url + ")");
    if (t.status == 401 || t.status == 403)
      throw DownloadError("access denied to " + url + " (HTTP " + std::to_string(t.status) +
                          "): " + token_advice(session));
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
    if (!sha256_matches(part, sha256, file_name, last_error)) continue;
    fs::rename(part, final_path, ec);
    if (ec) throw DownloadError("cannot rename " + part.string() + ": " + ec.message());
    progress.state.file_total = size;
    progress.update(size, 0, true);
    return;
  }
  throw DownloadError("downloading " + url + " failed: " + last_error +
                      " (run the download again to resume)");
}

// What a HEAD on a file's resolve/ URL says (get_hf_file_metadata): the blob's name, the commit
// and the size.
struct FileMeta {
  std::string etag, commit;
  std::int64_t size = -1;
};

// huggingface_hub's _normalize_etag: `W/"x"` and `"x"` give x.
std::string normalize_etag(const std::string& etag) {
  const size_t begin = etag.find_first_not_of("W/");
  if (begin == std::string::npos) return "";
  std::string out = etag.substr(begin);
  const size_t first = out.find_first_not_of('"');
  if (first == std::string::npos) return "";
  out = out.substr(first);
  out.erase(out.find_last_not_of('"') + 1);
  return out;
}

// A name that is safe as blobs/<etag>: the hub's are 40 or 64 hex digits.
bool safe_blob_name(const std::string& s) {
  return !s.empty() && s.size() <= 200 && s[0] != '.' &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

// "http://host:port" of a URL.
std::string url_origin(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return path == std::string::npos ? url : url.substr(0, path);
}

std::int64_t header_int(const std::map<std::string, std::string>& headers,
                        const std::string& name) {
  auto it = headers.find(name);
  if (it == headers.end() || it->second.empty() ||
      !std::all_of(it->second.begin(), it->second.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
      it->second.size() > 18)
    return -1;
  return std::stoll(it->second);
}

std::string header(const std::map<std::string, std::string>& headers, const std::string& name) {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

// HEAD on the file's resolve/ URL, following relative redirects only (a renamed repo, the hub's
// resolve-cache) and stopping at an absolute one (the CDN), as huggingface_hub does.
FileMeta fetch_file_meta(const Session& session, std::string url, const std::string& file_name,
                         int attempts, ProgressReporter& progress,
                         const std::atomic<bool>* cancel) {
  std::string last_error;
  int hops = 0;
  for (int attempt = 1; attempt <= std::max(1, attempts); ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
    Transfer t;
    t.head_only = true;
    t.cancel = cancel;
    t.on_wait = [&](double seconds) {
      progress.state.waiting_s = seconds;
      progress.update(0, 0, true);
      progress.state.waiting_s = 0;
    };
    std::string error;
    const CURLcode rc = session.get(url, t, error);
    if (cancel && cancel->load()) throw DownloadCancelled("download cancelled");
    if (rc != CURLE_OK) {
      last_error = error;
      if (rc == CURLE_OPERATION_TIMEDOUT && !t.any_answer) break;  // a silent server stays silent
      continue;
    }
    const std::string location = header(t.headers, "location");
    if (t.status / 100 == 3 && !location.empty() && location[0] == '/' &&
        location.rfind("//", 0) != 0) {
      if (++hops > 10) throw DownloadError("too many redirects for " + url);
      url = url_origin(url) + location;
      --attempt;  // a redirect is no failed attempt
      continue;
    }
    if (t.status == 404) throw DownloadError(file_name + " not found on the hub (" + url + ")");
    if (t.status == 401 || t.status == 403)
      throw DownloadError("access denied to " + url + " (HTTP " + std::to_string(t.status) +
                          "): " + token_advice(session));
    if (t.status == 429 || t.status / 100 == 5) {
      last_error = "HTTP " + std::to_string(t.status);
      continue;
    }
    if (t.status / 100 != 2 && t.status / 100 != 3)
      throw DownloadError("the hub answered HTTP " + std::to_string(t.status) + " for " + url);
    FileMeta meta;
    meta.commit = header(t.headers, "x-repo-commit");
    std::string etag = header(t.headers, "x-linked-etag");
    if (etag.empty()) etag = header(t.headers, "etag");
    meta.etag = normalize_etag(etag);
    meta.size = header_int(t.headers, "x-linked-size");
    if (meta.size < 0 && t.status / 100 == 2) meta.size = header_int(t.headers, "content-length");
    return meta;
  }
  throw DownloadError("asking the hub about " + file_name + " (" + url + ") failed: " + last_error +
                      " (run the download again to resume)");
}

// huggingface_hub's lock on one blob: an flock on CACHE/.locks/models--ORG--NAME/<etag>.lock
// (what its filelock takes), so attnscope and Python never write the same blob at once. Waits
// for a holder (reporting it), stops on cancel and the download's deadline. Where the file
// system has no flock the download goes on unlocked: each writer has its own part file anyway.
class BlobLock {
 public:
  BlobLock(const fs::path& file, const Session& session, const std::atomic<bool>* cancel,
           const std::function<void(double)>& on_wait) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0664);
    if (fd_ < 0) return;  // a read-only .locks/: the unique part file still keeps blobs whole
    const auto start = Clock::now();
    auto last_report = start;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) return;  // no flock here
      if (cancel && cancel->load()) {
        ::close(fd_);
        throw DownloadCancelled("download cancelled while waiting for " + file.string());
      }
      try {
        session.check_deadline();
      } catch (...) {
        ::close(fd_);
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const auto now = Clock::now();
      if (now - last_report >= std::chrono::milliseconds(900)) {
        last_report = now;
        on_wait(std::chrono::duration<double>(now - start).count());
      }
    }
  }
  ~BlobLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  BlobLock(const BlobLock&) = delete;
  BlobLock& operator=(const BlobLock&) = delete;

 private:
  int fd_ = -1;
};

// snapshots/<commit>/FILE as a relative symlink to blobs/<etag> (../../blobs/<etag>, one more ../
// per folder in FILE), replacing what is there (an old plain file, a stale link) atomically.
// Where symlinks cannot be made (a FAT drive), a copy of the blob, as huggingface_hub falls back.
void link_pointer(const fs::path& pointer, const fs::path& blob, const std::string& file_name) {
  std::string target;
  const auto depth = 2 + std::count(file_name.begin(), file_name.end(), '/');
  for (long i = 0; i < depth; ++i) target += "../";
  target += "blobs/" + blob.filename().string();
  std::error_code ec;
  if (fs::is_symlink(pointer, ec) && fs::read_symlink(pointer, ec).string() == target) return;
  fs::create_directories(pointer.parent_path(), ec);
  const fs::path tmp =
      pointer.parent_path() / (pointer.filename().string() + "." + unique_suffix() + ".tmp");
  if (::symlink(target.c_str(), tmp.c_str()) != 0) {
    fs::copy_file(blob, tmp, fs::copy_options::overwrite_existing, ec);
    if (ec) throw DownloadError("cannot write " + tmp.string() + ": " + ec.message());
  }
  fs::rename(tmp, pointer, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw DownloadError("cannot write " + pointer.string() + ": " + ec.message());
  }
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
    if (p.waiting_for_lock)
      return s + p.file + "  waiting for another download of the same file to finish (" +
             std::to_string(static_cast<int>(p.waiting_s)) + " s)";
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

namespace {

// huggingface_hub's _clean_token: no carriage returns or newlines, no surrounding whitespace.
std::string clean_token(std::string token) {
  token.erase(
      std::remove_if(token.begin(), token.end(), [](char c) { return c == '\r' || c == '\n'; }),
      token.end());
  const size_t begin = token.find_first_not_of(" \t\v\f");
  if (begin == std::string::npos) return "";
  token.erase(token.find_last_not_of(" \t\v\f") + 1);
  return token.substr(begin);
}

bool env_true(const char* name) {
  const char* v = std::getenv(name);
  std::string upper = v ? v : "";
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE";
}

// The revision's commit as the cache records it: the revision itself when it is a commit hash,
// else refs/<revision>; "" when unknown.
std::string cached_commit(const fs::path& repo_dir, const std::string& revision) {
  if (is_hex(revision, 40)) return revision;
  std::string sha;
  try {
    sha = read_regular_file(repo_dir / "refs" / revision, "ref", 4096);
  } catch (const FileError&) {
    return "";
  }
  sha.erase(sha.find_last_not_of(" \t\r\n") + 1);
  return safe_path_part(sha) ? sha : "";
}

// Offline (HF_HUB_OFFLINE): the cached snapshot of the revision, as snapshot_download returns it
// offline, or a DownloadError saying what is missing. No connection is opened.
DownloadResult offline_download(const DownloadRequest& req, const fs::path& cache,
                                const std::string& setting) {
  const fs::path repo_dir = cache / repo_folder_name(req.repo_id);
  const std::string lead = "offline mode is on (" + setting + "): cannot download " + req.repo_id +
                           " (revision " + req.revision + ") and ";
  const std::string advice = "; unset " + setting.substr(0, setting.find('=')) + " to download it";
  std::error_code ec;
  if (!fs::is_directory(repo_dir, ec))
    throw DownloadError(lead + "it is not in the hub cache (no " + repo_dir.string() + ")" +
                        advice);
  const std::string commit = cached_commit(repo_dir, req.revision);
  if (commit.empty())
    throw DownloadError(lead + "the cache does not know that revision (no " +
                        (repo_dir / "refs" / req.revision).string() + ")" + advice);
  DownloadResult result;
  result.commit = commit;
  result.folder = repo_dir / "snapshots" / commit;
  result.offline = true;
  if (!fs::is_regular_file(result.folder / "config.json", ec) ||
      find_weights(result.folder) != WeightsStatus::safetensors)
    throw DownloadError(lead + "its cached snapshot " + result.folder.string() +
                        " is incomplete (no config.json or no model.safetensors)" + advice);
  for (const auto& entry : fs::directory_iterator(result.folder, ec))
    result.files.push_back(entry.path().filename().string());
  std::sort(result.files.begin(), result.files.end());
  return result;
}

// refs/<revision> = commit, atomically (a tmp file renamed), only when it changes; none for a
// revision that is the commit itself (as _cache_commit_hash_for_specific_revision).
void write_ref(const fs::path& repo_dir, const std::string& revision, const std::string& commit) {
  if (revision == commit) return;
  const fs::path ref = repo_dir / "refs" / revision;
  if (cached_commit(repo_dir, revision) == commit) return;
  std::error_code ec;
  fs::create_directories(ref.parent_path(), ec);
  const fs::path tmp = ref.string() + "." + unique_suffix() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << commit;
    if (!out) throw DownloadError("cannot write " + tmp.string());
  }
  fs::rename(tmp, ref, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw DownloadError("cannot write " + ref.string() + ": " + ec.message());
  }
}

}  // namespace

HubToken find_hub_token() {
  if (env_true("HF_HUB_DISABLE_IMPLICIT_TOKEN")) return {};
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    // huggingface_hub: os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"):
    // an empty HF_TOKEN gives way to the other.
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    const std::string token = clean_token(v);
    if (token.empty()) break;  // set, but blank: then the file
    return {token, std::string("$") + name};
  }
  const fs::path file = hub_token_path();
  std::string text;
  try {
    text = read_regular_file(file, "token file", 64 << 10);
  } catch (const FileError& e) {
    if (e.problem == FileProblem::kMissing) return {};
    throw UsageError(std::string(e.what()) +
                     " (the Hugging Face token file; fix it, or set HF_TOKEN instead)");
  }
  const std::string token = clean_token(text);
  if (token.empty()) return {};
  return {token, file.string()};
}

DownloadResult download_model(const DownloadRequest& req, const DownloadProgressFn& progress_fn,
                              const std::atomic<bool>* cancel) {
  if (!valid_repo_id(req.repo_id))
    throw UsageError("'" + req.repo_id + "' is not a repo id such as openai-community/gpt2");
  if (req.revision.empty() || req.revision.front() == '/' || req.revision.back() == '/' ||
      req.revision.find("..") != std::string::npos || req.revision.find('\\') != std::string::npos)
    throw UsageError("bad revision '" + req.revision + "'");
  const fs::path cache =
      req.cache_dir.empty() ? default_hub_cache() : expand_user(req.cache_dir.string());
  if (const std::string offline = hub_offline_setting(); !offline.empty())
    return offline_download(req, cache, offline);

  Session session;
  session.endpoint = req.endpoint.empty() ? hub_endpoint() : req.endpoint;
  while (!session.endpoint.empty() && session.endpoint.back() == '/') session.endpoint.pop_back();
  session.token = req.token;
  if (!session.token.empty()) {
    session.token_source = "the request";
  } else {
    const HubToken token = find_hub_token();
    session.token = token.value;
    session.token_source = token.source;
  }
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

  const fs::path repo_dir = cache / repo_folder_name(req.repo_id);
  const fs::path locks_dir = cache / ".locks" / repo_folder_name(req.repo_id);
  DownloadResult result;
  result.commit = info.sha;
  result.folder = repo_dir / "snapshots" / info.sha;
  std::error_code ec;
  fs::create_directories(result.folder, ec);
  if (ec) throw DownloadError("cannot create " + result.folder.string() + ": " + ec.message());
  fs::create_directories(repo_dir / "blobs", ec);
  if (ec)
    throw DownloadError("cannot create " + (repo_dir / "blobs").string() + ": " + ec.message());
  const RepoLock lock(cache, req.repo_id);

  ProgressReporter progress{progress_fn, {}};
  progress.state.file_count = static_cast<int>(files.size());
  std::vector<std::int64_t> sizes;
  std::vector<std::string> sha256, blob_ids;
  bool sizes_known = true;
  // Where each file sits in the listing: a map, not a search per file (quadratic in the listing).
  std::unordered_map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < info.files.size(); ++i) position.emplace(info.files[i], i);
  for (const std::string& f : files) {
    const std::size_t at = position.at(f);
    sizes.push_back(info.sizes[at]);
    sha256.push_back(info.sha256[at]);
    blob_ids.push_back(info.blob_id[at]);
    if (sizes.back() < 0)
      sizes_known = false;
    else if (sizes_known)
      progress.state.total += static_cast<std::uint64_t>(sizes.back());
  }
  if (!sizes_known) progress.state.total = 0;

  for (size_t i = 0; i < files.size(); ++i) {
    check_cancel();
    const std::string& name = files[i];
    progress.state.file = name;
    progress.state.file_index = static_cast<int>(i) + 1;
    progress.state.file_total = sizes[i] > 0 ? static_cast<std::uint64_t>(sizes[i]) : 0;
    const fs::path pointer = result.folder / name;
    auto right_size = [&](const fs::path& p) {
      std::error_code e;
      return fs::is_regular_file(p, e) &&
             (sizes[i] < 0 || fs::file_size(p, e) == static_cast<std::uint64_t>(sizes[i]));
    };
    // In place already (a link into blobs/, ours or Python's): trusted, as huggingface_hub trusts
    // its cache. A plain file (an earlier attnscope's layout) is moved into blobs/ below.
    const bool plain_file = right_size(pointer) && !fs::is_symlink(pointer, ec);
    if (right_size(pointer) && !plain_file) {
      progress.state.file_total = fs::file_size(pointer, ec);
      progress.update(progress.state.file_total, 0, true);
    } else {
      const std::string url = session.endpoint + "/" + req.repo_id + "/resolve/" + info.sha + "/" +
                              escape_url_part(name);
      const FileMeta meta =
          fetch_file_meta(session, url, name, req.attempts_per_file, progress, cancel);
      if (!meta.commit.empty() && meta.commit != info.sha)
        throw DownloadError("the hub answered commit " + quote_excerpt(meta.commit) + " for " +
                            name + " at commit " + info.sha + " (" + url + ")");
      std::string etag = meta.etag;
      if (etag.empty()) etag = !sha256[i].empty() ? sha256[i] : blob_ids[i];
      if (!safe_blob_name(etag))
        throw DownloadError(
            "the hub sent " +
            (etag.empty() ? std::string("no ETag") : "the ETag '" + quote_excerpt(etag) + "'") +
            " for " + name + " (" + url + "): cannot name its blob");
      if (!sha256[i].empty() && is_hex(etag, 64) && etag != sha256[i])
        throw DownloadError("the hub's ETag " + etag + " for " + name + " is not the SHA-256 " +
                            sha256[i] + " it lists");
      const std::string expect_sha = !sha256[i].empty() ? sha256[i] : is_hex(etag, 64) ? etag : "";
      if (sizes[i] < 0 && meta.size >= 0) {
        sizes[i] = meta.size;
        progress.state.file_total = static_cast<std::uint64_t>(meta.size);
      }
      const fs::path blob = repo_dir / "blobs" / etag;
      const BlobLock blob_lock(locks_dir / (etag + ".lock"), session, cancel, [&](double seconds) {
        progress.state.waiting_s = seconds;
        progress.state.waiting_for_lock = true;
        progress.update(0, 0, true);
        progress.state.waiting_s = 0;
        progress.state.waiting_for_lock = false;
      });
      if (plain_file && !right_size(blob)) {
        fs::rename(pointer, blob, ec);  // moved, not copied: the same bytes, now shared
        if (ec) throw DownloadError("cannot move " + pointer.string() + ": " + ec.message());
      } else if (!right_size(blob)) {
        // An earlier attnscope's partial file goes on as the blob's.
        const fs::path old_part = pointer.string() + ".incomplete";
        if (fs::is_regular_file(old_part, ec) && !fs::exists(blob.string() + ".incomplete", ec))
          fs::rename(old_part, blob.string() + ".incomplete", ec);
        fetch_blob(session, url, blob, name, sizes[i], expect_sha, req.attempts_per_file, progress,
                   cancel);
      }
      link_pointer(pointer, blob, name);
      progress.state.file_total = fs::file_size(blob, ec);
      progress.update(progress.state.file_total, 0, true);
    }
    progress.done_before_file += fs::file_size(pointer, ec);
    result.files.push_back(name);
  }
  result.bytes_fetched = progress.fetched;

  // refs/<revision> last: resolve_model_spec() prefers the snapshot it names.
  write_ref(repo_dir, req.revision, info.sha);
  return result;
}

}  // namespace attnscope
