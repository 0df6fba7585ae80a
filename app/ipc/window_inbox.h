#pragma once
// The window's side of the trace socket (app/ipc/window_socket.h), on the UI thread: once per frame
// it takes the requests the server passed on, answers `status` from what the window shows, and
// shows a `view` request's trace the way `attnscope view FILE` and a dropped trace do
// (App::use_model with the TraceModel the server opened and checked), answering once the window
// shows it. Nothing here blocks: the file was read on the server's loader thread.
//
// The sentences typed before a script's first trace (and the model they ran on) are kept: File >
// "Back to …" shows them again (go_back).
#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/app.h"
#include "app/ipc/window_socket.h"

namespace attnscope {

class WindowInbox {
 public:
  // Serves the socket at window_socket_path() unless another window does; why it does not serve
  // goes to stderr (silent when another window has it: that one gets the traces).
  void start(std::function<void()> wake_window);
  bool serving() const { return server_ != nullptr; }

  // After App::update, every frame. Returns true when a script's trace starts showing this frame
  // (the window raises itself then).
  bool poll(App& app);
  // After the frame was drawn: answers the view request whose trace the window now shows.
  void after_draw(const App& app);
  // A request is being shown: the frame loop keeps drawing instead of waiting for events.
  bool busy() const { return current_.has_value() || !queued_.empty(); }

  // What the window showed before the first trace a script sent (empty: nothing to go back to).
  const std::string& back_label() const { return previous_.label; }
  void go_back(App& app);

 private:
  std::unique_ptr<WindowSocketServer> server_;
  std::deque<WindowRequest> queued_;      // view requests after the one being shown
  std::optional<WindowRequest> current_;  // the view request being shown
  std::chrono::steady_clock::time_point current_since_;
  bool current_seen_ = false;  // the window's model was current_'s trace at some frame
  int foreign_frames_ = 0;     // frames with no load on its way and another model shown
  struct Previous {
    std::string label;  // "" when there is nothing to go back to
    std::shared_ptr<const Model> model;
    std::array<std::string, kSlots> texts, labels;
    bool show_second = true;
  } previous_;
};

}  // namespace attnscope
