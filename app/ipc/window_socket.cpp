#include "app/ipc/window_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/util/message_line.h"

namespace attnscope {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxClients = 32;  // more at once are closed at accept
constexpr int kWriteLimitMs = 2000;      // a client that does not read its answer is dropped

std::string errno_text() {
  return std::strerror(errno);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool fill_address(const std::filesystem::path& path, sockaddr_un& addr) {
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  const std::string& s = path.native();
  if (s.empty() || s.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, s.c_str(), s.size() + 1);
  return true;
}

const char* kUsage = R"(expected {"op":"view","path":"/abs/trace.json"} or {"op":"status"})";

}  // namespace

std::filesystem::path window_socket_path() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime && runtime[0] == '/')
    return std::filesystem::path(runtime) / "attnscope" / "window.sock";
  return std::filesystem::path("/tmp") / ("attnscope-" + std::to_string(::getuid())) /
         "window.sock";
}

std::string prepare_socket_folder(const std::filesystem::path& folder) {
  const std::string name = "the socket folder " + folder.string();
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create " + name + ": " + errno_text();
  // Opened without following a symlink, then checked and narrowed through that descriptor: a swap
  // between the check and the chmod cannot redirect either.
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    struct stat st;
    if (::lstat(folder.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return name + " is a symlink; refusing to serve there";
    if (errno == ENOTDIR) return name + " is not a directory";
    return "cannot open " + name + ": " + errno_text();
  }
  struct stat st;
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = "cannot stat " + name + ": " + errno_text();
  } else if (st.st_uid != ::geteuid()) {
    problem = name + " belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " +
              std::to_string(::geteuid()) + "); refusing to serve there";
  } else if ((st.st_mode & 077) != 0 && ::fchmod(fd, 0700) != 0) {
    problem = "cannot make " + name + " private (0700): " + errno_text();
  }
  ::close(fd);
  return problem;
}

SocketRequest parse_socket_request(const std::string& line) {
  SocketRequest request;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    request.error =
        one_line_message(std::string("the request is not JSON (") + e.what() + "); " + kUsage);
    return request;
  }
  const auto op = j.is_object() ? j.find("op") : j.end();
  if (!j.is_object() || op == j.end() || !op->is_string()) {
    request.error = std::string("unknown request: ") + kUsage;
    return request;
  }
  const std::string name = op->get<std::string>();
  if (name == "status") {
    request.op = SocketRequest::Op::kStatus;
  } else if (name == "view") {
    const auto path = j.find("path");
    if (path == j.end() || !path->is_string() || path->get<std::string>().empty()) {
      request.error = R"(a view request needs "path": the trace file, e.g. )"
                      R"({"op":"view","path":"/abs/trace.json"})";
    } else if (const std::string p = path->get<std::string>(); p.find('\0') != std::string::npos) {
      request.error = "the trace path contains a NUL character";
    } else if (p[0] != '/') {
      request.error = one_line_message(
          "the trace path must be absolute (the window's working "
          "folder is not the caller's): " +
          p);
    } else {
      request.op = SocketRequest::Op::kView;
      request.path = p;
    }
  } else {
    request.error = one_line_message("unknown request \"" + name + "\": " + kUsage);
  }
  return request;
}

std::string answer_line(const nlohmann::json& answer) {
  return answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

nlohmann::json error_answer(const std::string& message) {
  return {{"ok", false}, {"error", message}};
}

struct WindowSocketServer::Client {
  enum class State { kReading, kWaiting, kWriting } state = State::kReading;
  int fd = -1;
  std::string in, out;
  std::size_t written = 0;
  Clock::time_point deadline;
};

std::unique_ptr<WindowSocketServer> WindowSocketServer::open(
    const std::filesystem::path& socket_path, std::function<void()> wake, std::string& why) {
  sockaddr_un addr;
  if (!fill_address(socket_path, addr)) {
    why = "the socket path " + socket_path.string() + " is longer than " +
          std::to_string(sizeof addr.sun_path - 1) + " bytes";
    return nullptr;
  }
  why = prepare_socket_folder(socket_path.parent_path());
  if (!why.empty()) return nullptr;

  std::unique_ptr<WindowSocketServer> server(new WindowSocketServer());
  server->path_ = socket_path;
  server->wake_window_ = std::move(wake);
  int& fd = server->listen_fd_;
  fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    why = "cannot create a socket: " + errno_text();
    return nullptr;
  }
  const auto* sa = reinterpret_cast<const sockaddr*>(&addr);
  for (int attempt = 0;; ++attempt) {
    if (::bind(fd, sa, sizeof addr) == 0) break;
    if (errno != EADDRINUSE || attempt == 2) {
      why = "cannot bind " + socket_path.string() + ": " + errno_text();
      return nullptr;
    }
    struct stat st;
    if (::lstat(socket_path.c_str(), &st) != 0) continue;  // gone meanwhile: bind again
    if (!S_ISSOCK(st.st_mode)) {
      why = socket_path.string() + " exists and is not a socket; not serving";
      return nullptr;
    }
    // A socket file: a window listens there (it keeps it), or it is left from one that died.
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const int rc = probe < 0 ? -1 : ::connect(probe, sa, sizeof addr);
    const int err = errno;
    close_fd(probe);
    if (rc == 0 || err == EAGAIN || err == EINPROGRESS) {
      why = "another attnscope window serves " + socket_path.string();
      return nullptr;
    }
    if (err != ECONNREFUSED && err != ENOENT) {
      why = "cannot tell whether " + socket_path.string() + " is alive: " + std::strerror(err);
      return nullptr;
    }
    ::unlink(socket_path.c_str());  // stale
  }
  struct stat st;
  if (::chmod(socket_path.c_str(), 0600) != 0 || ::lstat(socket_path.c_str(), &st) != 0) {
    why = "cannot make " + socket_path.string() + " private (0600): " + errno_text();
    ::unlink(socket_path.c_str());
    return nullptr;
  }
  server->dev_ = st.st_dev, server->ino_ = st.st_ino;
  if (::listen(fd, 16) != 0 || ::pipe2(server->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    why = "cannot listen on " + socket_path.string() + ": " + errno_text();
    return nullptr;  // the destructor removes the file
  }
  server->server_ = std::thread([s = server.get()] { s->serve(); });
  server->loader_ = std::thread([s = server.get()] { s->load_traces(); });
  return server;
}

WindowSocketServer::~WindowSocketServer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  load_wake_.notify_all();
  wake_server();
  if (server_.joinable()) server_.join();
  if (loader_.joinable()) loader_.join();
  close_fd(listen_fd_);
  close_fd(wake_pipe_[0]);
  close_fd(wake_pipe_[1]);
  // Removed only when it is still ours: a window that replaced a stale file of ours keeps its own.
  struct stat st;
  if (dev_ && ::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_)
    ::unlink(path_.c_str());
}

std::vector<WindowRequest> WindowSocketServer::take_requests() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<WindowRequest> out;
  out.swap(for_window_);
  return out;
}

void WindowSocketServer::answer(std::uint64_t id, const nlohmann::json& answer) {
  finish(id, answer_line(answer));
}

void WindowSocketServer::finish(std::uint64_t id, const std::string& line) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    answers_[id] = line;
  }
  wake_server();
}

void WindowSocketServer::wake_server() {
  if (wake_pipe_[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_pipe_[1], &byte, 1);  // full: already woken
  }
}

// The view requests' trace files, opened one at a time with `view FILE`'s own function: its checks
// and its messages.
void WindowSocketServer::load_traces() {
  for (;;) {
    std::pair<std::uint64_t, std::string> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      load_wake_.wait(lock, [&] { return stop_ || !loads_.empty(); });
      if (stop_) return;
      job = std::move(loads_.front());
      loads_.pop_front();
    }
    try {
      std::shared_ptr<const TraceModel> model = open_trace_model(job.second);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for_window_.push_back({job.first, SocketRequest::Op::kView, job.second, std::move(model)});
      }
      if (wake_window_) wake_window_();
    } catch (const std::exception& e) {
      finish(job.first, answer_line(error_answer(one_line_message(e.what()))));
    }
  }
}

void WindowSocketServer::serve() {
  std::map<std::uint64_t, Client> clients;  // by request id
  std::uint64_t next_id = 1;
  std::vector<pollfd> fds;
  std::vector<std::uint64_t> ids;  // fds[i + 2] is clients[ids[i]]
  const auto drop = [&](std::uint64_t id) {
    close_fd(clients[id].fd);
    clients.erase(id);
  };
  const auto reply = [](Client& c, std::string line) {
    c.out = std::move(line), c.written = 0, c.state = Client::State::kWriting;
    c.deadline = Clock::now() + std::chrono::milliseconds(kWriteLimitMs);
  };

  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) break;
      for (auto& [id, line] : answers_) {
        auto it = clients.find(id);
        if (it != clients.end() && it->second.state == Client::State::kWaiting)
          reply(it->second, std::move(line));
      }
      answers_.clear();
    }
    fds.clear(), ids.clear();
    fds.push_back({wake_pipe_[0], POLLIN, 0});
    fds.push_back({listen_fd_, static_cast<short>(clients.size() < kMaxClients ? POLLIN : 0), 0});
    Clock::time_point next_deadline = Clock::time_point::max();
    for (auto& [id, c] : clients) {
      short events = 0;
      if (c.state == Client::State::kReading) events = POLLIN;
      if (c.state == Client::State::kWriting) events = POLLOUT;
      fds.push_back({c.fd, events, 0});
      ids.push_back(id);
      if (c.state != Client::State::kWaiting) next_deadline = std::min(next_deadline, c.deadline);
    }
    int timeout = -1;
    if (next_deadline != Clock::time_point::max()) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - Clock::now())
              .count();
      timeout = static_cast<int>(std::clamp<long long>(ms + 1, 0, 60000));
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;

    if (fds[0].revents & POLLIN) {
      char buf[64];
      while (::read(wake_pipe_[0], buf, sizeof buf) > 0) {
      }
    }
    if (fds[1].revents & POLLIN) {
      for (;;) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        // Only this user's programs: a peer with another uid is closed before a byte is read.
        ucred cred{};
        socklen_t len = sizeof cred;
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
            cred.uid != ::geteuid() || clients.size() >= kMaxClients) {
          ::close(fd);
          refused_peers_.fetch_add(1);
          continue;
        }
        Client c;
        c.fd = fd;
        c.deadline = Clock::now() + std::chrono::milliseconds(read_limit_ms_.load());
        clients.emplace(next_id++, std::move(c));
      }
    }
    const auto now = Clock::now();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::uint64_t id = ids[i];
      Client& c = clients[id];
      const short revents = fds[i + 2].revents;
      if (c.state == Client::State::kReading && (revents & (POLLIN | POLLHUP | POLLERR))) {
        char buf[8192];
        const ssize_t n = ::read(c.fd, buf, sizeof buf);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0 && c.in.empty()) {  // closed without a request (a liveness probe)
          drop(id);
          continue;
        }
        if (n > 0) c.in.append(buf, static_cast<std::size_t>(n));
        std::size_t end = c.in.find('\n');
        if (end == std::string::npos && n <= 0) end = c.in.size();  // the last line, unterminated
        if (end == std::string::npos) {
          if (c.in.size() > kMaxRequestBytes)
            reply(c, answer_line(error_answer("the request line is longer than 64 KiB")));
          continue;
        }
        if (end > kMaxRequestBytes) {
          reply(c, answer_line(error_answer("the request line is longer than 64 KiB")));
          continue;
        }
        std::string line = c.in.substr(0, end);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        c.in.clear();
        SocketRequest request = parse_socket_request(line);
        if (request.op == SocketRequest::Op::kInvalid) {
          reply(c, answer_line(error_answer(request.error)));
        } else {
          c.state = Client::State::kWaiting;
          {
            std::lock_guard<std::mutex> lock(mutex_);
            if (request.op == SocketRequest::Op::kView)
              loads_.emplace_back(id, std::move(request.path));
            else
              for_window_.push_back({id, request.op, {}, nullptr});
          }
          if (request.op == SocketRequest::Op::kView)
            load_wake_.notify_one();
          else if (wake_window_)
            wake_window_();
        }
      } else if (c.state == Client::State::kWriting && (revents & (POLLOUT | POLLHUP | POLLERR))) {
        const ssize_t n = ::send(c.fd, c.out.data() + c.written, c.out.size() - c.written,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n > 0) c.written += static_cast<std::size_t>(n);
        if (n <= 0 || c.written == c.out.size()) drop(id);
        continue;
      } else if (c.state == Client::State::kWaiting && (revents & (POLLHUP | POLLERR))) {
        drop(id);  // gone before its answer: the answer is forgotten
        continue;
      }
      if (clients.count(id) && c.state != Client::State::kWaiting && now >= c.deadline) {
        if (c.state == Client::State::kReading) timed_out_.fetch_add(1);
        drop(id);
      }
    }
    // Answers for clients already gone are dropped with the next batch (answers_.clear()).
  }
  for (auto& [id, c] : clients) close_fd(c.fd);
}

}  // namespace attnscope
