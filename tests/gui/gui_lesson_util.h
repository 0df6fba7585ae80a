#pragma once
// What the guided lesson's GUI tests share: running the app in the lesson (plain or from a
// session), finding its layout records, the core's own traces as the reference, and checking a
// drawn grid against them.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/lesson/lesson_model.h"
#include "core/util/matrix.h"
#include "gui_test_util.h"

namespace attnscope::test {

inline const std::string kLessonSentence = "she sat on the bank of the river and watched the water";

struct AppRun {
  int rc = -1;
  nlohmann::json layout;
  Image image;
  std::string dir;
};

// The app at `window` ("1280x720") with a screenshot and a layout file, then `args`.
AppRun run_lesson(const std::string& args, const std::string& window = "1280x720");

// A session file in a fresh folder that opens the lesson at `step` in the light theme with
// `text` (the word `selected` focused), the lesson options `lesson` and the font scale; `extra`
// is merged into its "view" object. Returns its path.
struct LessonSession {
  int step = 1;
  std::string text = kLessonSentence;
  int selected = 4;  // "bank"
  nlohmann::json lesson = nlohmann::json::object();
  float font_scale = 1.0f;
  std::string model = "lesson";  // the explorer's model (steps 7 and 8 show it beside)
  nlohmann::json view = nlohmann::json::object();
};
std::string write_lesson_session(const LessonSession& s);

const nlohmann::json* find_record(const nlohmann::json& layout, const std::string& view,
                                  const std::string& name = "");
std::vector<const nlohmann::json*> find_records(const nlohmann::json& layout,
                                                const std::string& view, const std::string& name);
// The lesson record's "texts": every label and number the step drew.
std::vector<std::string> lesson_texts(const nlohmann::json& layout);

AttentionTrace core_trace(const std::string& text, LessonOptions o = {});

// The grid's values are `want` (masked entries null), and each cell's top-left pixels (away from
// the number in its middle) have the colormap color of its value.
void check_grid(const nlohmann::json& grid, const Matrix& want, const Matrix* masked,
                const Image& img, const std::string& colormap = "viridis");

}  // namespace attnscope::test
