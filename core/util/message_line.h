#pragma once
// An error message as one readable line of bounded length, whatever the core or a library put in
// it: what the command line prints after "attnscope: " and what the window's trace socket answers
// (app/ipc/window_socket.h), so both say the same.
#include <string>

namespace attnscope {

// Control characters (a newline in a file name, a parser's message) become spaces, a run of more
// than 160 bytes without a space (a 3,000-character model name, a path, a quoted token) keeps its
// first 100 and last 40 bytes around an ellipsis, and the line stops at about 1,000 bytes. Cuts
// never split a UTF-8 sequence.
std::string one_line_message(const std::string& message);

}  // namespace attnscope
