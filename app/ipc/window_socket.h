#pragma once
// The running window's trace socket (issue 25; shared/DESIGN.md "The window's trace socket"): a
// script (the Python package's head_view, show, …) hands the open window a trace file instead of
// opening a new window for each. An AF_UNIX stream socket, never a network port, in a folder only
// the user can enter, served only to peers with the window's own uid (SO_PEERCRED).
//
// Protocol: the client sends ONE line of JSON (at most 64 KiB, "\n"-terminated), the server answers
// ONE line of JSON and closes:
//   {"op":"view","path":"/abs/trace.json"} -> {"ok":true,"tokens":N,"layers":L,"heads":H} once
//       the window shows it, or {"ok":false,"error":"<what `attnscope view FILE` prints>"};
//   {"op":"status"} -> {"ok":true,"pid":P,"mode":"view"|"model"|"lesson","tokens":[…],
//       "source":"…", …};
//   anything else -> {"ok":false,"error":"…"}.
//
// Threads: the server has its own thread (accept, SO_PEERCRED, bounded reads with a 2 s limit,
// writes) and a loader thread that opens the trace file of a view request with open_trace_model,
// exactly as `view FILE` does (a 100 MB trace is read there, never on the UI thread). The UI thread
// only takes the requests that need the window (take_requests, once per frame) and answers them
// (answer); it never blocks on a client.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/trace/trace_model.h"

namespace attnscope {

// Longest request line (without its "\n") the server reads.
inline constexpr std::size_t kMaxRequestBytes = 64 * 1024;

// Where the socket lives: $XDG_RUNTIME_DIR/attnscope/window.sock when XDG_RUNTIME_DIR is set to an
// absolute path, else /tmp/attnscope-<uid>/window.sock.
std::filesystem::path window_socket_path();

// Creates the socket's folder (0700) if missing and checks it: a real directory (not a symlink),
// owned by this user; a folder of ours that others may enter is narrowed to 0700. Returns "" when
// it is fit, else why not (a sentence for a message).
std::string prepare_socket_folder(const std::filesystem::path& folder);

// One request line, parsed. `error` is non-empty (and `op` kInvalid) when it is not a request the
// server knows; it is then the answer's message.
struct SocketRequest {
  enum class Op { kInvalid, kStatus, kView } op = Op::kInvalid;
  std::string path;  // kView: the trace file (absolute)
  std::string error;
};
SocketRequest parse_socket_request(const std::string& line);

// A JSON answer as the one line the server writes (invalid UTF-8 in a token or a path replaced,
// never an exception), "\n" included.
std::string answer_line(const nlohmann::json& answer);
nlohmann::json error_answer(const std::string& message);

// A request the window answers (the server answered every other one itself).
struct WindowRequest {
  std::uint64_t id = 0;
  SocketRequest::Op op = SocketRequest::Op::kStatus;
  std::string path;                         // kView: as asked
  std::shared_ptr<const TraceModel> trace;  // kView: opened and checked off the UI thread
};

class WindowSocketServer {
 public:
  // Binds `socket_path` (its folder prepared first) and starts serving. Returns null, with `why`,
  // when another window already serves it (a connect succeeds: that window keeps it) or the folder
  // or the socket cannot be had; a stale socket file (nothing listens) is replaced. `wake` is
  // called from the server's threads when a request waits for the window (glfwPostEmptyEvent).
  static std::unique_ptr<WindowSocketServer> open(const std::filesystem::path& socket_path,
                                                  std::function<void()> wake, std::string& why);
  // Stops the threads, closes every connection and removes the socket file (when it is still the
  // one this server bound).
  ~WindowSocketServer();
  WindowSocketServer(const WindowSocketServer&) = delete;
  WindowSocketServer& operator=(const WindowSocketServer&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The requests waiting for the window, oldest first (never blocks).
  std::vector<WindowRequest> take_requests();
  // Sends `answer` to the client of request `id` and closes it (never blocks; a client gone
  // meanwhile is forgotten).
  void answer(std::uint64_t id, const nlohmann::json& answer);

  // Connections closed because their peer had another uid, or sent no line within the limit (tests
  // read them).
  int refused_peers() const { return refused_peers_.load(); }
  int timed_out_clients() const { return timed_out_.load(); }
  // How long a client may take to send its line (tests shorten it).
  void set_read_limit_ms(int ms) { read_limit_ms_.store(ms); }

 private:
  WindowSocketServer() = default;
  struct Client;
  void serve();
  void load_traces();
  void finish(std::uint64_t id, const std::string& line);  // any thread
  void wake_server();

  std::filesystem::path path_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::uint64_t dev_ = 0, ino_ = 0;  // the file bound: only it is removed
  std::function<void()> wake_window_;
  std::atomic<int> refused_peers_{0}, timed_out_{0}, read_limit_ms_{2000};

  std::mutex mutex_;
  std::condition_variable load_wake_;
  bool stop_ = false;
  std::deque<std::pair<std::uint64_t, std::string>> loads_;  // view requests to open: id, path
  std::vector<WindowRequest> for_window_;
  std::map<std::uint64_t, std::string> answers_;  // answer lines waiting to be written
  std::thread server_, loader_;
};

}  // namespace attnscope
