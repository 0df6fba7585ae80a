#include "app/ipc/window_inbox.h"

#include <unistd.h>

#include <cstdio>

#include "app/lesson/lesson_steps.h"
#include "core/trace/trace_model.h"

namespace attnscope {
namespace {

// A script's trace not shown within this long is answered with an error (the window keeps going).
constexpr auto kShowLimit = std::chrono::seconds(60);

nlohmann::json status_of(const App& app, const std::string& back_label,
                         const std::string& back_text) {
  const AppState& st = app.state;
  const auto* stored = dynamic_cast<const TraceModel*>(st.model.get());
  nlohmann::json tokens = nlohmann::json::array();
  const auto& result = st.slots[0].result;
  if (result && result->trace)
    for (const Token& t : result->trace->tokens) tokens.push_back(t.text);
  std::string source = st.model_spec;
  if (stored) source = stored->path().empty() ? stored->source() : stored->path().string();
  nlohmann::json status = {{"ok", true},
                           {"pid", static_cast<long long>(::getpid())},
                           {"mode", st.lesson_mode.active ? "lesson"
                                    : stored              ? "view"
                                                          : "model"},
                           {"tokens", std::move(tokens)},
                           {"source", source},
                           {"text", st.slots[0].text},
                           {"layers", st.model_info.layers},
                           {"heads", st.model_info.heads},
                           {"loading", app.load_progress().busy}};
  // What File > Back to … shows again: the model and the sentence typed before the first trace.
  if (!back_label.empty())
    status["back"] = nlohmann::json{{"source", back_label}, {"text", back_text}};
  return status;
}

}  // namespace

void WindowInbox::start(std::function<void()> wake_window) {
  std::string why;
  const std::filesystem::path path = window_socket_path();
  server_ = WindowSocketServer::open(path, std::move(wake_window), why);
  if (!server_ && why.rfind("another attnscope window", 0) != 0)
    std::fprintf(stderr, "attnscope: not accepting traces from scripts: %s\n", why.c_str());
}

bool WindowInbox::poll(App& app) {
  if (!server_) return false;
  for (WindowRequest& r : server_->take_requests()) {
    if (r.op == SocketRequest::Op::kStatus)
      server_->answer(r.id, status_of(app, previous_.label, previous_.texts[0]));
    else
      queued_.push_back(std::move(r));
  }
  if (current_ || queued_.empty()) return false;
  current_ = std::move(queued_.front());
  queued_.pop_front();
  current_since_ = std::chrono::steady_clock::now();
  current_seen_ = false, foreign_frames_ = 0;

  AppState& st = app.state;
  // What the user was doing, kept to go back to: the first trace a script sends replaces the
  // sentences typed on a real model (a stored trace shows its own text), not a later one.
  if (st.model && !st.lesson_mode.active && !dynamic_cast<const TraceModel*>(st.model.get()) &&
      !app.load_progress().busy) {
    previous_.label = st.model_spec;
    previous_.model = st.model;
    for (int s = 0; s < kSlots; ++s)
      previous_.texts[s] = st.slots[s].text, previous_.labels[s] = st.slots[s].label;
    previous_.show_second = st.show_second;
  }
  if (st.lesson_mode.active) leave_lesson(app);
  app.use_model(current_->trace, "trace " + current_->trace->source());
  st.message = "showing the trace " + current_->path + " sent by a script";
  st.message_is_error = false;
  return true;
}

void WindowInbox::after_draw(const App& app) {
  if (!current_ || !server_) return;
  const AppState& st = app.state;
  const bool ours = st.model == current_->trace;
  const bool loading = app.load_progress().busy;
  current_seen_ = current_seen_ || ours;
  foreign_frames_ = !ours && !loading ? foreign_frames_ + 1 : 0;
  std::optional<nlohmann::json> answer;
  const SlotState& s = st.slots[0];
  // Drawn: the result this frame's views read (not only the worker's newest) answers the newest
  // job, which ran on this trace.
  const bool drawn = s.result && s.result->id == s.submitted_id;
  if (ours && !loading && drawn && app.settled()) {
    if (!s.result->error.empty())
      answer = error_answer(s.result->error);
    else if (s.result->trace)
      answer = nlohmann::json{{"ok", true},
                              {"tokens", s.result->trace->tokens.size()},
                              {"layers", st.model_info.layers},
                              {"heads", st.model_info.heads}};
  } else if ((current_seen_ && !ours) || foreign_frames_ >= 2) {
    // Two frames in a row: a load that finished between update() and here is applied next frame.
    answer = error_answer("another model was opened in the window before the trace " +
                          current_->path + " was shown");
  } else if (std::chrono::steady_clock::now() - current_since_ > kShowLimit) {
    answer = error_answer("the window did not show the trace " + current_->path + " within 60 s");
  }
  if (!answer) return;
  server_->answer(current_->id, *answer);
  current_.reset();
}

void WindowInbox::go_back(App& app) {
  if (previous_.label.empty()) return;
  AppState& st = app.state;
  for (int s = 0; s < kSlots; ++s) {
    st.slots[s].text = previous_.texts[s], st.slots[s].label = previous_.labels[s];
    st.slots[s].locked_token = -1;
  }
  st.show_second = previous_.show_second;
  app.use_model(previous_.model, previous_.label);
  st.message = "back to " + previous_.label + " and the sentences typed there";
  st.message_is_error = false;
  previous_ = {};
}

}  // namespace attnscope
