// The window's trace socket without a window (app/ipc/window_socket.h): where it lives and with
// which permissions, who may talk to it, and what it answers to good and hostile requests. The
// window's side (showing the trace, status from what it shows) is tests/gui/gui_socket_test.cpp.
#include "app/ipc/window_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/trace/trace_model.h"
#include "core/util/message_line.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string fresh_dir() {
  std::string tmpl = (fs::temp_directory_path() / "attnscope-socket-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

int connect_to(const fs::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& data) {
  for (std::size_t at = 0; at < data.size();) {
    const ssize_t n = ::send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return false;
    at += static_cast<std::size_t>(n);
  }
  return true;
}

// Everything the server writes until it closes (or `limit_ms` passes: then "<timeout>").
std::string read_until_closed(int fd, int limit_ms = 5000) {
  std::string out;
  const auto end = Clock::now() + std::chrono::milliseconds(limit_ms);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (left <= 0) return out + "<timeout>";
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

// One request as a client sends it; the answer line as parsed JSON (null when none came).
nlohmann::json ask(const fs::path& socket, const std::string& data, std::string* raw = nullptr) {
  const int fd = connect_to(socket);
  if (fd < 0) return nullptr;
  send_all(fd, data);
  const std::string answer = read_until_closed(fd);
  ::close(fd);
  if (raw) *raw = answer;
  if (answer.empty() || answer.back() != '\n') return nullptr;
  return nlohmann::json::parse(answer, nullptr, false);
}

// The window's part for tests: answers every status request with {"ok":true,"n":N} and counts the
// view requests it was handed.
struct FakeWindow {
  WindowSocketServer& server;
  std::atomic<bool> stop{false};
  std::atomic<int> status_seen{0}, views_seen{0};
  std::vector<WindowRequest> views;  // read after stop
  std::thread thread;
  explicit FakeWindow(WindowSocketServer& s) : server(s) {
    thread = std::thread([this] {
      while (!stop) {
        for (WindowRequest& r : server.take_requests()) {
          if (r.op == SocketRequest::Op::kStatus) {
            server.answer(r.id, {{"ok", true}, {"n", ++status_seen}});
          } else {
            ++views_seen;
            server.answer(r.id, {{"ok", true}, {"tokens", r.trace->trace().tokens.size()}});
            views.push_back(std::move(r));
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  ~FakeWindow() {
    stop = true;
    thread.join();
  }
};

class WindowSocket : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fresh_dir();
    socket = fs::path(dir) / "attnscope" / "window.sock";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::unique_ptr<WindowSocketServer> open_server() {
    std::string why;
    auto server = WindowSocketServer::open(socket, {}, why);
    EXPECT_NE(server, nullptr) << why;
    return server;
  }
  std::string dir;
  fs::path socket;
};

const char* kGoodTrace =
    R"({"format":"attnscope-trace/1","model":{"name":"t","kind":"t","layers":1,"heads":1},)"
    R"("text":"a b","tokens":[{"id":0,"text":"a","start":0,"end":1,"special":false},)"
    R"({"id":1,"text":"b","start":2,"end":3,"special":false}],"attention":[[[[1,0],[0.5,0.5]]]]})";

TEST(WindowSocketPath, RuntimeDirElseAPerUserFolderInTmp) {
  const char* saved = std::getenv("XDG_RUNTIME_DIR");
  const std::string keep = saved ? saved : "";
  ::setenv("XDG_RUNTIME_DIR", "/run/user/1234", 1);
  EXPECT_EQ(window_socket_path(), fs::path("/run/user/1234/attnscope/window.sock"));
  const fs::path fallback = "/tmp/attnscope-" + std::to_string(::getuid()) + "/window.sock";
  ::setenv("XDG_RUNTIME_DIR", "relative/dir",
           1);  // the spec says to ignore a relative one
  EXPECT_EQ(window_socket_path(), fallback);
  ::setenv("XDG_RUNTIME_DIR", "", 1);
  EXPECT_EQ(window_socket_path(), fallback);
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(window_socket_path(), fallback);
  if (saved) ::setenv("XDG_RUNTIME_DIR", keep.c_str(), 1);
}

TEST_F(WindowSocket, FolderIs0700SocketIs0600AndTheFileGoesWithTheServer) {
  {
    auto server = open_server();
    ASSERT_NE(server, nullptr);
    struct stat st;
    ASSERT_EQ(::lstat(socket.parent_path().c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    ASSERT_EQ(::lstat(socket.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_uid, ::geteuid());
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(socket)));
}

TEST_F(WindowSocket, AFolderOthersMayEnterIsNarrowedTo0700) {
  fs::create_directory(socket.parent_path());
  ::chmod(socket.parent_path().c_str(), 0755);
  auto server = open_server();
  struct stat st;
  ASSERT_EQ(::lstat(socket.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(WindowSocket, ASymlinkedFolderIsRefused) {
  const fs::path elsewhere = fs::path(dir) / "elsewhere";
  fs::create_directory(elsewhere);
  ::chmod(elsewhere.c_str(), 0700);
  fs::create_directory_symlink(elsewhere, socket.parent_path());
  std::string why;
  EXPECT_EQ(WindowSocketServer::open(socket, {}, why), nullptr);
  EXPECT_NE(why.find("symlink"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(elsewhere / "window.sock"));
}

TEST_F(WindowSocket, AFolderOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the folder to another user";
  fs::create_directory(socket.parent_path());
  ::chmod(socket.parent_path().c_str(), 0700);
  ASSERT_EQ(::chown(socket.parent_path().c_str(), 65534, 65534), 0);
  std::string why;
  EXPECT_EQ(WindowSocketServer::open(socket, {}, why), nullptr);
  EXPECT_NE(why.find("belongs to uid 65534"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(fs::symlink_status(socket)));
}

TEST_F(WindowSocket, ASecondWindowDoesNotStealALiveSocket) {
  auto first = open_server();
  ASSERT_NE(first, nullptr);
  FakeWindow window(*first);
  std::string why;
  EXPECT_EQ(WindowSocketServer::open(socket, {}, why), nullptr);
  EXPECT_NE(why.find("another attnscope window serves"), std::string::npos) << why;
  // The first one still serves, through the same file.
  EXPECT_EQ(ask(socket, "{\"op\":\"status\"}\n")["ok"], true);
  EXPECT_TRUE(fs::exists(fs::symlink_status(socket)));
}

TEST_F(WindowSocket, AStaleSocketIsReplaced) {
  // What a window killed with SIGKILL leaves: a socket file nobody listens on.
  fs::create_directory(socket.parent_path());
  ::chmod(socket.parent_path().c_str(), 0700);
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
  }
  ASSERT_TRUE(fs::is_socket(socket));
  EXPECT_LT(connect_to(socket), 0);  // refused: stale
  auto server = open_server();
  ASSERT_NE(server, nullptr);
  FakeWindow window(*server);
  EXPECT_EQ(ask(socket, "{\"op\":\"status\"}\n")["ok"], true);
}

TEST_F(WindowSocket, AFileThatIsNotASocketIsLeftAlone) {
  fs::create_directory(socket.parent_path());
  ::chmod(socket.parent_path().c_str(), 0700);
  std::ofstream(socket) << "precious";
  std::string why;
  EXPECT_EQ(WindowSocketServer::open(socket, {}, why), nullptr);
  EXPECT_NE(why.find("not a socket"), std::string::npos) << why;
  std::ifstream in(socket);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "precious");
}

TEST_F(WindowSocket, StatusGoesToTheWindowAndItsAnswerComesBack) {
  auto server = open_server();
  ASSERT_NE(server, nullptr);
  FakeWindow window(*server);
  std::string raw;
  const nlohmann::json a = ask(socket, "{\"op\":\"status\"}\n", &raw);
  EXPECT_EQ(a["ok"], true) << raw;
  EXPECT_EQ(a["n"], 1);
  // One line, then the server closed (read_until_closed returned without a timeout).
  EXPECT_EQ(raw.find('\n'), raw.size() - 1) << raw;
  // Without the final newline (the client shuts its side down instead) it is read as well.
  const int fd = connect_to(socket);
  ASSERT_GE(fd, 0);
  send_all(fd, "{\"op\":\"status\"}");
  ::shutdown(fd, SHUT_WR);
  EXPECT_EQ(nlohmann::json::parse(read_until_closed(fd))["n"], 2);
  ::close(fd);
}

TEST_F(WindowSocket, BadRequestsAreAnsweredWithAnErrorLineNeverTheWindow) {
  auto server = open_server();
  ASSERT_NE(server, nullptr);
  FakeWindow window(*server);
  struct Case {
    std::string data, says;
  };
  const std::vector<Case> cases = {
      {"not json\n", "not JSON"},
      {"{\"op\":\"status\"\n", "not JSON"},
      {"[1,2]\n", "unknown request"},
      {"\"status\"\n", "unknown request"},
      {"{}\n", "unknown request"},
      {"{\"op\":42}\n", "unknown request"},
      {"{\"op\":\"explode\"}\n", "unknown request \"explode\""},
      {"{\"op\":\"view\"}\n", "needs \"path\""},
      {"{\"op\":\"view\",\"path\":7}\n", "needs \"path\""},
      {"{\"op\":\"view\",\"path\":\"\"}\n", "needs \"path\""},
      {"{\"op\":\"view\",\"path\":\"trace.json\"}\n", "must be absolute"},
      {"{\"op\":\"view\",\"path\":\"/tmp/a\\u0000b\"}\n", "NUL"},
      {std::string(kMaxRequestBytes + 10, 'x') + "\n", "longer than 64 KiB"},
      {std::string(200000, 'x'), "longer than 64 KiB"},  // never a newline
      {std::string(60000, '[') + "\n", "not JSON"},      // deep nesting within the limit
      {"\xff\xfe{\"op\":\"status\"}\n", "not JSON"},
  };
  for (const Case& c : cases) {
    std::string raw;
    const nlohmann::json a = ask(socket, c.data, &raw);
    ASSERT_TRUE(a.is_object()) << c.data.substr(0, 60) << " -> " << raw.substr(0, 200);
    EXPECT_EQ(a["ok"], false) << c.data.substr(0, 60);
    const std::string error = a.value("error", "");
    EXPECT_NE(error.find(c.says), std::string::npos) << c.data.substr(0, 60) << " -> " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos);
  }
  EXPECT_EQ(window.status_seen, 0);
  EXPECT_EQ(window.views_seen, 0);
  // And the server still serves, a deeply nested (valid) request too.
  const std::string deep = std::string(30000, '[') + std::string(30000, ']');
  EXPECT_EQ(ask(socket, "{\"op\":\"status\",\"x\":" + deep + "}\n")["ok"], true);
  EXPECT_EQ(window.status_seen, 1);
}

TEST_F(WindowSocket, ATraceIsOpenedBeforeTheWindowSeesItAndABadOneNeverReachesIt) {
  auto server = open_server();
  ASSERT_NE(server, nullptr);
  FakeWindow window(*server);
  const std::string good = dir + "/good.json";
  std::ofstream(good) << kGoodTrace;
  nlohmann::json a = ask(socket, nlohmann::json{{"op", "view"}, {"path", good}}.dump() + "\n");
  EXPECT_EQ(a["ok"], true) << a;
  EXPECT_EQ(a["tokens"], 2);
  EXPECT_EQ(window.views_seen, 1);

  // Hostile files: the answer is exactly what open_trace_model (view FILE) says, as one line.
  const std::string bad_rows = dir + "/bad rows.json";
  std::ofstream(bad_rows) << R"({"format":"attnscope-trace/1","model":{"layers":1,"heads":1},)"
                          << R"("tokens":[{"text":"a"},{"text":"b"}],)"
                          << R"("attention":[[[[1,0],[0.7,0.7]]]]})";
  const std::string fifo = dir + "/fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string truncated = dir + "/cut.json";
  std::ofstream(truncated) << std::string(kGoodTrace).substr(0, 80);
  for (const std::string& path : {bad_rows, fifo, truncated, dir + "/missing.json", dir}) {
    std::string expected;
    try {
      open_trace_model(path);
    } catch (const std::exception& e) {
      expected = one_line_message(e.what());
    }
    ASSERT_FALSE(expected.empty()) << path;
    a = ask(socket, nlohmann::json{{"op", "view"}, {"path", path}}.dump() + "\n");
    EXPECT_EQ(a["ok"], false) << path;
    EXPECT_EQ(a["error"], expected) << path;
  }
  EXPECT_EQ(window.views_seen, 1);
}

TEST_F(WindowSocket, AnIdleClientIsDroppedWhileOthersAreServed) {
  auto server = open_server();
  ASSERT_NE(server, nullptr);
  server->set_read_limit_ms(1000);
  FakeWindow window(*server);
  const auto start = Clock::now();
  const int idle = connect_to(socket);
  ASSERT_GE(idle, 0);
  const int slow = connect_to(socket);  // half a line, then nothing
  ASSERT_GE(slow, 0);
  send_all(slow, "{\"op\":");
  // Meanwhile another client is answered at once.
  EXPECT_EQ(ask(socket, "{\"op\":\"status\"}\n")["ok"], true);
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_EQ(read_until_closed(idle, 5000), "");  // closed, not timed out here
  EXPECT_EQ(read_until_closed(slow, 5000), "");
  const auto waited = Clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(900));
  EXPECT_LT(waited, std::chrono::milliseconds(3000));
  EXPECT_EQ(server->timed_out_clients(), 2);
  ::close(idle);
  ::close(slow);
  EXPECT_EQ(window.status_seen, 1);
}

TEST_F(WindowSocket, TheDefaultLimitForAnIdleClientIsTwoSeconds) {
  auto server = open_server();
  ASSERT_NE(server, nullptr);
  const auto start = Clock::now();
  const int idle = connect_to(socket);
  ASSERT_GE(idle, 0);
  EXPECT_EQ(read_until_closed(idle, 6000), "");
  const auto waited = Clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(1900));
  EXPECT_LT(waited, std::chrono::milliseconds(4000));
  ::close(idle);
}

TEST_F(WindowSocket, ManyClientsAtOnceNeitherCrashNorStopIt) {
  auto server = open_server();
  ASSERT_NE(server, nullptr);
  server->set_read_limit_ms(500);
  std::vector<int> fds;
  for (int i = 0; i < 60; ++i) fds.push_back(connect_to(socket));  // more than it keeps
  FakeWindow window(*server);
  for (int fd : fds) ::close(fd);
  EXPECT_EQ(ask(socket, "{\"op\":\"status\"}\n")["ok"], true);
  // A client gone before its answer: the window's answer is simply forgotten.
  const int gone = connect_to(socket);
  send_all(gone, "{\"op\":\"status\"}\n");
  ::close(gone);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(ask(socket, "{\"op\":\"status\"}\n")["ok"], true);
}

// Peers of another uid: the folder (0700) and the socket (0600) keep them out; where those were
// opened up by mistake, SO_PEERCRED still does, and the server closes them without an answer.
TEST_F(WindowSocket, AnotherUserIsRefusedByThePermissionsAndByPeerCredentials) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another user";
  auto server = open_server();
  ASSERT_NE(server, nullptr);
  FakeWindow window(*server);
  // The child: 0 = could not connect, 1 = connected and got no answer, 2 = got an answer.
  const auto as_nobody = [&]() {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(9);
      const int fd = connect_to(socket);
      if (fd < 0) ::_exit(0);
      const char request[] = "{\"op\":\"status\"}\n";
      [[maybe_unused]] ssize_t n = ::send(fd, request, sizeof request - 1, MSG_NOSIGNAL);
      char buf[256];
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) ::_exit(3);
      n = ::read(fd, buf, sizeof buf);
      ::_exit(n > 0 ? 2 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(as_nobody(),
            0);  // the folder and the socket file are this user's alone
  EXPECT_EQ(server->refused_peers(), 0);
  ASSERT_EQ(::chmod(socket.parent_path().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(socket.c_str(), 0666), 0);
  EXPECT_EQ(as_nobody(), 1);  // connected, closed unanswered
  EXPECT_EQ(server->refused_peers(), 1);
  EXPECT_EQ(window.status_seen, 0);
  EXPECT_EQ(ask(socket, "{\"op\":\"status\"}\n")["ok"],
            true);  // this user still is served
}

}  // namespace
}  // namespace attnscope
