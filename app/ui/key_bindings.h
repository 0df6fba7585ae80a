#pragma once
// Every keyboard shortcut in one table, read by the frame loop (which keys do what), the menus
// (the shortcut shown beside an item) and the Help menu (the list of keys), so a key is bound in
// one place. What an action does is MainWindow::Perform (app/ui/main_window.h), the one code path
// for a key press and a menu click alike.
#include <string>
#include <vector>

namespace attnscope {

struct KeyPress;  // app/testing/gui_script.h: a GLFW key code and its modifier bits

enum class Action {
  kLayerNext,  // → (over the generation timeline: its next step)
  kLayerPrevious,
  kHeadNext,
  kHeadPrevious,
  kTimelineNext,  // Shift+→
  kTimelinePrevious,
  kFontLarger,
  kFontSmaller,
  kScreenshot,     // F12 (Ctrl+S saves the session, as in every other application)
  kSaveSession,    // Ctrl+S: to the session's file, else as Save as
  kSaveSessionAs,  // Ctrl+Shift+S
  kOpenSession,    // Ctrl+O
  kQuit,
  kFullscreen,
  kLesson,       // F5: enter or leave the guided lesson
  kFocusView,    // F: the view under the pointer fills the window (again: back)
  kLeaveFocus,   // Esc
  kTogglePanel,  // Ctrl+B: the left panel
  kLessonNext,
  kLessonPrevious,
  kLessonFirst,
  kLessonLast,
  kLessonReveal,
  kLessonUnscaled,
  kLessonPositions,
  kLessonLeave,
};

// When a binding applies.
enum class KeyScope {
  kAlways,          // even while a text box has the keyboard (Ctrl combinations, F keys)
  kExplorer,        // the explorer, no text box active
  kLesson,          // the lesson, even while typing (PageUp/PageDown: presenters' clickers)
  kLessonNotTyping  // the lesson, no text box active
};

struct KeyBinding {
  Action action;
  int key;   // GLFW key code
  int mods;  // exactly these of Shift, Ctrl, Alt
  KeyScope scope;
  const char* keys;  // as shown to people: "Ctrl+S"
  const char* what;  // what it does, for the Help menu
};

const std::vector<KeyBinding>& key_bindings();
// The keys of the first binding of `action` ("" when it has none), for a menu item.
const char* shortcut(Action action);
// The actions `presses` trigger now, in the order pressed.
std::vector<Action> triggered_actions(const std::vector<KeyPress>& presses, bool typing,
                                      bool lesson);

}  // namespace attnscope
