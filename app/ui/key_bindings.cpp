#include "app/ui/key_bindings.h"

#include "app/render/gl.h"  // glad before GLFW: the key codes
#include "app/testing/gui_script.h"

namespace attnscope {

namespace {
constexpr int kShift = GLFW_MOD_SHIFT, kCtrl = GLFW_MOD_CONTROL;
constexpr int kModMask = GLFW_MOD_SHIFT | GLFW_MOD_CONTROL | GLFW_MOD_ALT;

bool applies(KeyScope scope, bool typing, bool lesson) {
  switch (scope) {
    case KeyScope::kAlways:
      return true;
    case KeyScope::kExplorer:
      return !lesson && !typing;
    case KeyScope::kLesson:
      return lesson;
    case KeyScope::kLessonNotTyping:
      return lesson && !typing;
  }
  return false;
}
}  // namespace

const std::vector<KeyBinding>& key_bindings() {
  using A = Action;
  using S = KeyScope;
  static const std::vector<KeyBinding> kBindings = {
      {A::kLayerNext, GLFW_KEY_RIGHT, 0, S::kExplorer, "\xE2\x86\x92", "next layer"},
      {A::kLayerPrevious, GLFW_KEY_LEFT, 0, S::kExplorer, "\xE2\x86\x90", "previous layer"},
      {A::kHeadNext, GLFW_KEY_DOWN, 0, S::kExplorer, "\xE2\x86\x93", "next head"},
      {A::kHeadPrevious, GLFW_KEY_UP, 0, S::kExplorer, "\xE2\x86\x91", "previous head"},
      {A::kTimelineNext, GLFW_KEY_RIGHT, kShift, S::kExplorer, "Shift+\xE2\x86\x92",
       "next generated token (also \xE2\x86\x92 over the timeline)"},
      {A::kTimelinePrevious, GLFW_KEY_LEFT, kShift, S::kExplorer, "Shift+\xE2\x86\x90",
       "previous generated token"},
      {A::kFocusView, GLFW_KEY_F, 0, S::kExplorer, "F",
       "the view under the pointer fills the window (F or Esc: back)"},
      {A::kLeaveFocus, GLFW_KEY_ESCAPE, 0, S::kExplorer, "Esc", "back from a focused view"},
      {A::kTogglePanel, GLFW_KEY_B, kCtrl, S::kAlways, "Ctrl+B", "hide or show the left panel"},
      {A::kFontLarger, GLFW_KEY_EQUAL, kCtrl, S::kAlways, "Ctrl +",
       "larger text, labels and strokes (a presentation scale)"},
      {A::kFontLarger, GLFW_KEY_EQUAL, kCtrl | kShift, S::kAlways, "Ctrl +", nullptr},
      {A::kFontLarger, GLFW_KEY_KP_ADD, kCtrl, S::kAlways, "Ctrl +", nullptr},
      {A::kFontSmaller, GLFW_KEY_MINUS, kCtrl, S::kAlways, "Ctrl \xE2\x88\x92", "smaller text"},
      {A::kFontSmaller, GLFW_KEY_KP_SUBTRACT, kCtrl, S::kAlways, "Ctrl \xE2\x88\x92", nullptr},
      // F12, as Steam and many other programs take screenshots: PrtSc belongs to the desktop's
      // own screenshot tool, Ctrl+S to saving.
      {A::kScreenshot, GLFW_KEY_F12, 0, S::kAlways, "F12",
       "save a screenshot (PNG in the pictures folder)"},
      {A::kSaveSession, GLFW_KEY_S, kCtrl, S::kAlways, "Ctrl+S",
       "save the session (to its file; the first time, ask where)"},
      {A::kSaveSessionAs, GLFW_KEY_S, kCtrl | kShift, S::kAlways, "Ctrl+Shift+S",
       "save the session as a new file"},
      {A::kOpenSession, GLFW_KEY_O, kCtrl, S::kAlways, "Ctrl+O", "open a session"},
      {A::kFullscreen, GLFW_KEY_F11, 0, S::kAlways, "F11", "fullscreen"},
      {A::kLesson, GLFW_KEY_F5, 0, S::kAlways, "F5", "start or end the guided lesson"},
      {A::kQuit, GLFW_KEY_Q, kCtrl, S::kAlways, "Ctrl+Q", "quit"},
      {A::kLessonNext, GLFW_KEY_PAGE_DOWN, 0, S::kLesson, "PageDown", "lesson: next step"},
      {A::kLessonNext, GLFW_KEY_RIGHT, 0, S::kLessonNotTyping, "\xE2\x86\x92", nullptr},
      {A::kLessonPrevious, GLFW_KEY_PAGE_UP, 0, S::kLesson, "PageUp", "lesson: previous step"},
      {A::kLessonPrevious, GLFW_KEY_LEFT, 0, S::kLessonNotTyping, "\xE2\x86\x90", nullptr},
      {A::kLessonFirst, GLFW_KEY_HOME, 0, S::kLessonNotTyping, "Home", "lesson: first step"},
      {A::kLessonLast, GLFW_KEY_END, 0, S::kLessonNotTyping, "End", "lesson: last step"},
      {A::kLessonReveal, GLFW_KEY_SPACE, 0, S::kLessonNotTyping, "Space",
       "lesson: reveal the numbers (predict first)"},
      {A::kLessonUnscaled, GLFW_KEY_U, 0, S::kLessonNotTyping, "U",
       "lesson: softmax without \xC3\xB7\xE2\x88\x9A"
       "d_k"},
      {A::kLessonPositions, GLFW_KEY_P, 0, S::kLessonNotTyping, "P",
       "lesson: add positional encodings"},
      {A::kLessonLeave, GLFW_KEY_ESCAPE, 0, S::kLessonNotTyping, "Esc", "lesson: leave"},
  };
  return kBindings;
}

const char* shortcut(Action action) {
  for (const KeyBinding& b : key_bindings())
    if (b.action == action) return b.keys;
  return "";
}

std::vector<Action> triggered_actions(const std::vector<KeyPress>& presses, bool typing,
                                      bool lesson) {
  std::vector<Action> out;
  for (const KeyPress& p : presses)
    for (const KeyBinding& b : key_bindings())
      if (b.key == p.key && b.mods == (p.mods & kModMask) && applies(b.scope, typing, lesson)) {
        out.push_back(b.action);
        break;  // one action a press
      }
  return out;
}

}  // namespace attnscope
