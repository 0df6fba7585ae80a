#pragma once
// A tiny HTTP/1.1 server for the download tests: serves fixture bodies from memory on 127.0.0.1 at
// an ephemeral port, one connection at a time, "Connection: close" on every answer. Supports GET,
// HEAD (the GET's status and headers, no body), extra headers per path (the hub's ETag,
// X-Linked-Etag, X-Repo-Commit, …), `Range: bytes=N-` (206, or 200 when told to ignore ranges,
// 416 past the end), 404, 302
// redirects, dropping the connection part-way through a body (to test resuming) and sending slowly
// (to test cancelling). Every loop is bounded by a timeout or the stop flag, so tests always end.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace attnscope::testing {

class FixtureHttpServer {
 public:
  struct Request {
    std::string method, path, range, authorization;  // path without the query
    std::string target;                              // path with the query
  };

  FixtureHttpServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd_ < 0) throw std::runtime_error("socket() failed");
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // ephemeral
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 16) != 0)
      throw std::runtime_error("bind/listen on 127.0.0.1 failed");
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~FixtureHttpServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  FixtureHttpServer(const FixtureHttpServer&) = delete;
  FixtureHttpServer& operator=(const FixtureHttpServer&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void serve(const std::string& path, std::string body) {
    std::lock_guard lock(mutex_);
    bodies_[path] = std::move(body);
  }
  // Header lines ("Name: value\r\n" each) added to every answer for `path`: 200, 206, 302, HEAD.
  void headers(const std::string& path, std::string lines) {
    std::lock_guard lock(mutex_);
    headers_[path] = std::move(lines);
  }
  // Requests for `path` get this status line ("401 Unauthorized") and a short JSON error body.
  void fail(const std::string& path, std::string status) {
    std::lock_guard lock(mutex_);
    failures_[path] = std::move(status);
  }
  void redirect(const std::string& path, const std::string& location) {
    std::lock_guard lock(mutex_);
    redirects_[path] = location;
  }
  // The next `times` GETs of `path` (HEADs not counted) send the headers of the full answer but
  // only `bytes` bytes of its body, then close the connection.
  void drop_after(const std::string& path, size_t bytes, int times = 1) {
    std::lock_guard lock(mutex_);
    drops_[path] = {bytes, times};
  }
  void ignore_range(bool on) { ignore_range_ = on; }
  // GETs of `path` are read and then never answered: the connection stays open and silent (until
  // the client gives up, the server stops, or 60 s pass).
  void silent(const std::string& path) {
    std::lock_guard lock(mutex_);
    silent_.insert(path);
  }
  // GETs of `path` get a 200 without Content-Length and `bytes` bytes of body, more than any
  // listing says; bytes_streamed() tells how many the client took before closing.
  void stream_endless(const std::string& path, size_t bytes) {
    std::lock_guard lock(mutex_);
    endless_[path] = bytes;
  }
  size_t bytes_streamed() const { return streamed_; }
  // Bodies go out in `chunk`-byte pieces with `pause` between them.
  void throttle(size_t chunk, std::chrono::milliseconds pause) {
    chunk_ = chunk;
    pause_ms_ = static_cast<int>(pause.count());
  }
  std::vector<Request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::vector<Request> requests_for(const std::string& path) const {
    std::vector<Request> out;
    for (const Request& r : requests())
      if (r.path == path) out.push_back(r);
    return out;
  }

 private:
  void loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int conn = ::accept(listen_fd_, nullptr, nullptr);
      if (conn < 0) continue;
      timeval tv{2, 0};
      ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ::setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      handle(conn);
      ::shutdown(conn, SHUT_WR);
      ::close(conn);
    }
  }

  static std::string header_value(const std::string& head, const std::string& name) {
    // Case-insensitive search for "\r\nName:".
    std::string lower_head = head, key = "\r\n" + name + ":";
    for (char& c : lower_head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t at = lower_head.find(key);
    if (at == std::string::npos) return "";
    size_t begin = head.find_first_not_of(' ', at + key.size());
    size_t end = head.find("\r\n", begin);
    return head.substr(begin, end - begin);
  }

  bool send_all(int fd, const char* data, size_t n) {
    while (n > 0) {
      if (stop_) return false;
      ssize_t sent = ::send(fd, data, n, MSG_NOSIGNAL);
      if (sent <= 0) return false;
      data += sent;
      n -= static_cast<size_t>(sent);
    }
    return true;
  }

  void handle(int fd) {
    std::string head;
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536 &&
           std::chrono::steady_clock::now() < deadline) {
      ssize_t got = ::recv(fd, buf, sizeof buf, 0);
      if (got <= 0) return;
      head.append(buf, static_cast<size_t>(got));
    }
    Request req;
    size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
    if (sp1 == std::string::npos || sp2 == std::string::npos) return;
    req.method = head.substr(0, sp1);
    req.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
    req.path = req.target.substr(0, req.target.find('?'));
    req.range = header_value(head, "Range");
    req.authorization = header_value(head, "Authorization");

    std::string body, location, extra, failure;
    bool found = false, is_redirect = false, is_silent = false;
    size_t endless = 0;
    size_t drop_at = std::string::npos;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(req);
      is_silent = silent_.count(req.path) > 0;
      if (auto e = endless_.find(req.path); e != endless_.end()) endless = e->second;
      if (auto h = headers_.find(req.path); h != headers_.end()) extra = h->second;
      if (auto f = failures_.find(req.path); f != failures_.end()) failure = f->second;
      if (auto r = redirects_.find(req.path); r != redirects_.end()) {
        is_redirect = true;
        location = r->second;
      } else if (auto b = bodies_.find(req.path); b != bodies_.end()) {
        found = true;
        body = b->second;
        auto d = drops_.find(req.path);  // a HEAD sends no body to drop
        if (req.method == "GET" && d != drops_.end() && d->second.second > 0) {
          drop_at = d->second.first;
          --d->second.second;
        }
      }
    }
    if (is_silent) {
      hold_silently(fd);
    } else if (req.method != "GET" && req.method != "HEAD") {
      send_text(fd, "405 Method Not Allowed", "");
    } else if (!failure.empty()) {
      send_text(fd, failure, "{\"error\":\"" + failure + "\"}", req.method == "HEAD");
    } else if (endless > 0) {
      if (req.method == "HEAD") {
        const std::string h = "HTTP/1.1 200 OK\r\n" + extra + "Connection: close\r\n\r\n";
        send_all(fd, h.data(), h.size());
      } else {
        send_endless(fd, endless);
      }
    } else if (is_redirect) {
      std::string h = "HTTP/1.1 302 Found\r\nLocation: " + location + "\r\n" + extra +
                      "Content-Length: 0\r\nConnection: close\r\n\r\n";
      send_all(fd, h.data(), h.size());
    } else if (!found) {
      send_text(fd, "404 Not Found", "{\"error\":\"Repository Not Found\"}", req.method == "HEAD");
    } else {
      send_body(fd, req, body, drop_at, extra);
    }
  }

  void hold_silently(int fd) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!stop_ && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) {
        char c;
        if (::recv(fd, &c, 1, 0) <= 0) return;  // the client gave up
      }
    }
  }

  void send_endless(int fd, size_t bytes) {
    const std::string h = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
    if (!send_all(fd, h.data(), h.size())) return;
    const std::string chunk(16384, 'x');
    streamed_ = 0;
    while (streamed_ < bytes && !stop_) {
      const size_t n = std::min(chunk.size(), bytes - streamed_);
      if (!send_all(fd, chunk.data(), n)) return;
      streamed_ += n;
    }
  }

  void send_text(int fd, const std::string& status, const std::string& text,
                 bool head_only = false) {
    std::string h = "HTTP/1.1 " + status + "\r\nContent-Length: " + std::to_string(text.size()) +
                    "\r\nConnection: close\r\n\r\n" + (head_only ? std::string() : text);
    send_all(fd, h.data(), h.size());
  }

  void send_body(int fd, const Request& req, const std::string& body, size_t drop_at,
                 const std::string& extra) {
    size_t from = 0;
    unsigned long long asked = 0;
    const bool ranged =
        !ignore_range_ && std::sscanf(req.range.c_str(), "bytes=%llu-", &asked) == 1;
    if (ranged && asked >= body.size()) {
      send_text(fd, "416 Range Not Satisfiable", "");
      return;
    }
    std::string h;
    if (ranged) {
      from = static_cast<size_t>(asked);
      h = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + std::to_string(from) + "-" +
          std::to_string(body.size() - 1) + "/" + std::to_string(body.size()) + "\r\n";
    } else {
      h = "HTTP/1.1 200 OK\r\n";
    }
    h += extra + "Content-Length: " + std::to_string(body.size() - from) +
         "\r\nAccept-Ranges: bytes\r\nConnection: close\r\n\r\n";
    if (!send_all(fd, h.data(), h.size()) || req.method == "HEAD") return;
    const size_t end =
        drop_at == std::string::npos ? body.size() : std::min(body.size(), from + drop_at);
    const size_t chunk = chunk_ > 0 ? chunk_.load() : body.size() + 1;
    for (size_t at = from; at < end; at += chunk) {
      if (!send_all(fd, body.data() + at, std::min(chunk, end - at))) return;
      if (pause_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_));
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false}, ignore_range_{false};
  std::atomic<size_t> chunk_{0};
  std::atomic<int> pause_ms_{0};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> bodies_, redirects_, headers_, failures_;
  std::map<std::string, std::pair<size_t, int>> drops_;
  std::set<std::string> silent_;
  std::map<std::string, size_t> endless_;
  std::atomic<size_t> streamed_{0};
  std::vector<Request> requests_;
};

}  // namespace attnscope::testing
