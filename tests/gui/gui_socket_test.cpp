// The running window's trace socket (issue 25) with the real window under Xvfb: a script's trace
// replaces what the window shows and the answer counts what the trace file holds; a bad trace is
// refused with exactly the line `attnscope view FILE` prints while the window keeps its trace; a
// second window leaves the socket to the first, a stale one is replaced, an idle client never
// stalls the frames, and the socket file goes when the window closes (SIGTERM included).
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "gui_test_util.h"
#include "tests/common/safetensors_file.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::read_json;
using test::run_app;
using test::shell_quote;
using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
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

std::string read_until_closed(int fd, int limit_ms) {
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

// One request line; the answer (null when none came or the connection was refused).
nlohmann::json ask(const fs::path& socket, const std::string& line, int limit_ms = 60000) {
  const int fd = connect_to(socket);
  if (fd < 0) return nullptr;
  const std::string data = line + "\n";
  if (::send(fd, data.data(), data.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(data.size())) {
    ::close(fd);
    return nullptr;
  }
  const std::string answer = read_until_closed(fd, limit_ms);
  ::close(fd);
  if (answer.empty() || answer.back() != '\n') return nullptr;
  return nlohmann::json::parse(answer, nullptr, false);
}
nlohmann::json ask_view(const fs::path& socket, const std::string& path) {
  return ask(socket, nlohmann::json{{"op", "view"}, {"path", path}}.dump());
}
nlohmann::json ask_status(const fs::path& socket) {
  return ask(socket, R"({"op":"status"})");
}

// The texts of a JSON trace's tokens, read by the test itself.
nlohmann::json token_texts(const std::string& trace_json) {
  nlohmann::json texts = nlohmann::json::array();
  const nlohmann::json trace = read_json(trace_json);
  for (const auto& t : trace["tokens"]) texts.push_back(t["text"]);
  return texts;
}

// What `attnscope view FILE` prints for a file it refuses, without "attnscope: " and the newline.
std::string view_file_message(const std::string& path, const std::string& dir) {
  const std::string err = dir + "/view.err";
  EXPECT_EQ(
      run_app("view " + shell_quote(path) + " --screenshot " + shell_quote(dir + "/no.png"), err),
      1);
  std::string line = slurp(err);
  const std::string prefix = "attnscope: ";
  EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return line.substr(std::min(line.size(), prefix.size()));
}

// A window started in the background, as a user would (not headless).
class Window {
 public:
  Window(const std::string& env, const std::string& args) {
    const char* bin = std::getenv("ATTNSCOPE_BIN");
    if (!bin) throw std::runtime_error("ATTNSCOPE_BIN is not set (run through ctest)");
    const std::string cmd = "exec env " + env + " " + shell_quote(bin) + " " + args;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Window() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  bool running() {
    if (exited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) exited_ = true, status_ = status;
    return !exited_;
  }
  // Sends `sig` and waits (at most `limit_s`); the exit code, -1 for a signal or no exit.
  int stop(int sig, int limit_s = 30) {
    if (running()) ::kill(pid_, sig);
    for (int i = 0; i < limit_s * 20 && running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (running()) return -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
};

class Socket : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = test::temp_dir();
    runtime = dir + "/run";
    fs::create_directories(runtime);
    fs::permissions(runtime, fs::perms::owner_all, fs::perm_options::replace);
    socket = fs::path(runtime) / "attnscope" / "window.sock";
    env = "XDG_RUNTIME_DIR=" + shell_quote(runtime) +
          " XDG_CONFIG_HOME=" + shell_quote(dir + "/config");
  }
  // A JSON trace of the fixture GPT-2 (and its safetensors twin when asked).
  std::string export_trace(const std::string& name, const std::string& text,
                           const std::string& format = "json") {
    const std::string out = dir + "/" + name;
    EXPECT_EQ(run_app("export --format " + format + " --model " +
                      shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32") + " --text " +
                      shell_quote(text) + " -o " + shell_quote(out)),
              0);
    return out;
  }
  // Waits until the window at `socket` answers status (the window is up and serving).
  nlohmann::json wait_serving(Window& w) {
    for (int i = 0; i < 1200; ++i) {
      if (!w.running()) break;
      nlohmann::json s = ask_status(socket);
      if (s.is_object() && s.value("ok", false) && !s.value("loading", true) &&
          !s["tokens"].empty())
        return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the window never served " << socket;
    return nullptr;
  }
  std::string dir, runtime, env;
  fs::path socket;
};

TEST_F(Socket, AScriptsTraceIsShownAndABadOneRefusedWithViewFilesMessage) {
  const std::string a = export_trace("a.json", "The bank of the river flooded the town");
  const std::string b_json =
      export_trace("b.json", "She deposited money at the bank today", "json");
  const std::string b =
      export_trace("b.safetensors", "She deposited money at the bank today", "safetensors");
  const std::string layout = dir + "/layout.json";
  Window w(env, "view " + shell_quote(a) + " --window 1000x700 --layout " + shell_quote(layout));
  nlohmann::json before = wait_serving(w);
  ASSERT_TRUE(before.is_object());
  EXPECT_EQ(before["mode"], "view");
  EXPECT_EQ(before["pid"], w.pid());
  EXPECT_EQ(before["source"], a);
  EXPECT_EQ(before["tokens"], token_texts(a));

  // The folder and the socket are this user's alone.
  struct stat st;
  ASSERT_EQ(::lstat(socket.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::lstat(socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // A good trace (safetensors): answered once shown, with what the file holds.
  const nlohmann::json b_file = read_json(b_json);
  nlohmann::json answer = ask_view(socket, b);
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["ok"], true) << answer;
  EXPECT_EQ(answer["tokens"], b_file["tokens"].size());
  EXPECT_EQ(answer["layers"], b_file["model"]["layers"]);
  EXPECT_EQ(answer["heads"], b_file["model"]["heads"]);
  nlohmann::json shown = ask_status(socket);
  EXPECT_EQ(shown["tokens"], token_texts(b_json));
  EXPECT_EQ(shown["source"], b);
  EXPECT_EQ(shown["mode"], "view");

  // Hostile traces: the same one line as `view FILE`; the window keeps showing b.
  const std::string rows = dir + "/rows.json";
  std::ofstream(rows) << R"({"format":"attnscope-trace/1","model":{"layers":1,"heads":1},)"
                      << R"("tokens":[{"text":"a"},{"text":"b"}],)"
                      << R"("attention":[[[[1,0],[0.7,0.7]]]]})";
  const std::string count = dir + "/count.json";
  std::ofstream(count) << R"({"format":"attnscope-trace/1","model":{"layers":1,"heads":1},)"
                       << R"("tokens":[{"text":"a"}],"attention":[[[[1,0],[0,1]]]]})";
  const std::string cut = dir + "/cut.json";
  std::ofstream(cut) << slurp(a).substr(0, 100);
  const std::string fifo = dir + "/fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string garbage = dir + "/garbage.safetensors";
  std::ofstream(garbage) << std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) << "junk";
  // tests/unit/hostile_files_test.cpp's: metadata nested 200,000 deep, 400,000 one-token layers.
  const std::string deep = dir + "/deep.safetensors";
  const nlohmann::json deep_meta = {
      {"format", "attnscope-trace/1"},
      {"model", std::string(200000, '[') + std::string(200000, ']')},
      {"tokens", R"([{"id":0,"text":"a","start":-1,"end":-1,"special":false}])"},
      {"text", ""}};
  test::write_safetensors_file(
      deep,
      {{"__metadata__", deep_meta},
       {"attention", {{"dtype", "F32"}, {"shape", {1, 1, 1, 1}}, {"data_offsets", {0, 4}}}}},
      std::string("\x00\x00\x80\x3f", 4));
  const std::string layers = dir + "/layers.json";
  {
    std::ofstream out(layers);
    out << R"({"format": "attnscope-trace/1", "model": {"name": "m", "layers": 1, "heads": 1},)"
        << R"( "tokens": [{"id": 0, "text": "a"}], "attention": [[[[1]]])";
    for (int l = 1; l < 400000; ++l) out << ",[[[1]]]";
    out << "]}";
  }
  for (const std::string& bad :
       {rows, count, cut, fifo, garbage, deep, layers, dir + "/missing.json", dir}) {
    const std::string expected = view_file_message(bad, dir);
    answer = ask_view(socket, bad);
    ASSERT_TRUE(answer.is_object()) << bad;
    EXPECT_EQ(answer["ok"], false) << bad;
    EXPECT_EQ(answer["error"], expected) << bad;
    EXPECT_EQ(ask_status(socket), shown) << bad;
  }
  // Requests that are not a trace at all.
  for (const std::string& line :
       {std::string("nonsense"), std::string(R"({"op":"dance"})"),
        std::string(R"({"op":"view","path":"b.json"})"), std::string(70000, 'x')}) {
    answer = ask(socket, line);
    ASSERT_TRUE(answer.is_object()) << line.substr(0, 40);
    EXPECT_EQ(answer["ok"], false);
    EXPECT_EQ(ask_status(socket), shown);
  }

  // SIGTERM closes the window as Quit does: exit 0, the layout written, the socket file gone.
  EXPECT_EQ(w.stop(SIGTERM), 0);
  EXPECT_FALSE(fs::exists(fs::symlink_status(socket)));
  const nlohmann::json lay = read_json(layout);
  EXPECT_EQ(lay["traces"][0]["trace_text"], b_file["text"]);
  EXPECT_EQ(lay["traces"][0]["tokens"].size(), b_file["tokens"].size());
}

TEST_F(Socket, ASecondWindowLeavesTheSocketToTheFirstAndAStaleOneIsReplaced) {
  const std::string a = export_trace("a.json", "one two three four");
  Window first(env, "view " + shell_quote(a) + " --window 800x600");
  ASSERT_TRUE(wait_serving(first).is_object());
  const std::string frames = dir + "/second.frames";
  // (--frame-file, which says when a window is up, belongs to the plain window: the lesson model.)
  Window second(env, "--window 800x600 --frame-file " + shell_quote(frames));
  for (int i = 0; i < 1200 && !fs::exists(frames) && second.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(second.running());
  EXPECT_EQ(ask_status(socket)["pid"], first.pid());  // the first one still has it

  // Killed without a chance to clean up: the file stays, stale; the next window replaces it.
  EXPECT_EQ(first.stop(SIGKILL), -1);
  ASSERT_TRUE(fs::is_socket(socket));
  EXPECT_EQ(ask_status(socket), nullptr);
  Window third(env, "view " + shell_quote(a) + " --window 800x600");
  const nlohmann::json s = wait_serving(third);
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s["pid"], third.pid());
  EXPECT_EQ(third.stop(SIGINT), 0);
  EXPECT_FALSE(fs::exists(fs::symlink_status(socket)));
  EXPECT_EQ(second.stop(SIGTERM), 0);  // never served: closes all the same

  // --no-socket: nothing is served.
  const std::string quiet_frames = dir + "/quiet.frames";
  Window quiet(env, "--no-socket --window 800x600 --frame-file " + shell_quote(quiet_frames));
  for (int i = 0; i < 1200 && !fs::exists(quiet_frames) && quiet.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(quiet.running());
  EXPECT_FALSE(fs::exists(fs::symlink_status(socket)));
}

TEST_F(Socket, AnIdleClientNeverStallsTheWindow) {
  const std::string frames = dir + "/frames";
  Window w(env, "--window 800x600 --frame-file " + shell_quote(frames));
  ASSERT_TRUE(wait_serving(w).is_object());
  const auto count = [&] { return std::atoi(slurp(frames).c_str()); };
  const auto start = Clock::now();
  const int idle = connect_to(socket);
  ASSERT_GE(idle, 0);
  const int before = count();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_GT(count(), before + 3) << "the window stopped drawing while a client sent nothing";
  const auto asked = Clock::now();
  EXPECT_EQ(ask_status(socket)["ok"], true);
  EXPECT_LT(Clock::now() - asked, std::chrono::milliseconds(1500));
  EXPECT_EQ(read_until_closed(idle, 10000), "");  // dropped, unanswered
  const auto dropped = Clock::now() - start;
  EXPECT_GE(dropped, std::chrono::milliseconds(1900));
  EXPECT_LT(dropped, std::chrono::milliseconds(6000));
  ::close(idle);
}

// A window on a model, where the user typed a sentence: a script's trace replaces what it shows (as
// view FILE would), and the typed sentence is kept to go back to (File > Back to …).
TEST_F(Socket, InModelModeATraceIsShownAndTheTypedSentenceKept) {
  const std::string a = export_trace("a.json", "a script computed this elsewhere");
  const std::string typed = "my own typed sentence";
  Window w(env, "--model " + shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32") + " --text " +
                    shell_quote(typed) + " --window 1000x700");
  const nlohmann::json before = wait_serving(w);
  ASSERT_TRUE(before.is_object());
  EXPECT_EQ(before["mode"], "model");
  EXPECT_EQ(before["text"], typed);
  EXPECT_EQ(ask_view(socket, a)["ok"], true);
  const nlohmann::json after = ask_status(socket);
  EXPECT_EQ(after["mode"], "view");
  EXPECT_EQ(after["tokens"], token_texts(a));
  ASSERT_TRUE(after.contains("back")) << after;
  EXPECT_EQ(after["back"]["text"], typed);
  EXPECT_EQ(after["back"]["source"], before["source"]);
  EXPECT_EQ(w.stop(SIGTERM), 0);
}

}  // namespace
}  // namespace attnscope
