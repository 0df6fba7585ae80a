#pragma once
// The bottom line: model, backend (and why it fell back to the CPU), tokens, compute and frame
// time, and the last notice (saved screenshot path, an error). Nothing is ever cut at the window's
// edge: what does not fit beside the fields wraps onto lines above them, the bar growing upwards
// over the panels. An error stays, whatever notices follow, until its × dismisses it.
#include <string>

#include <nlohmann/json.hpp>

#include "app/app.h"

namespace attnscope {

struct StatusBar {
  // `height`: the one-line bar's height; the bar is taller while a message needs more lines.
  void Draw(const App& app, float frame_ms, float height);
  // The bar's height in the last frame (screen units): a layout that leaves this much room at
  // the bottom is never covered by a long message.
  float height() const { return height_; }

  // What the last Draw showed, in pixels of the saved image, for the layout file: the bar's box,
  // each item's kind, text and box, the error kept and its dismiss button.
  nlohmann::json layout;

 private:
  std::string seen_message_;  // AppState::message as last seen: a change is a new notice
  bool seen_error_ = false;
  std::string error_;  // the newest error, kept until dismissed
  float height_ = 0;
};

}  // namespace attnscope
