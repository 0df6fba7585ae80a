#include "gui_lesson_util.h"

#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "core/backend/cpu/cpu_backend.h"

namespace attnscope::test {

AppRun run_lesson(const std::string& args, const std::string& window) {
  AppRun r;
  r.dir = temp_dir();
  const std::string png = r.dir + "/shot.png", json = r.dir + "/layout.json";
  r.rc = run_app("--window " + window + " --screenshot " + shell_quote(png) + " --layout " +
                 shell_quote(json) + " " + args);
  if (r.rc == 0) {
    r.layout = read_json(json);
    r.image = read_png(png);
  }
  return r;
}

std::string write_lesson_session(const LessonSession& s) {
  const std::string path = temp_dir() + "/lesson.attnscope";
  nlohmann::json view = {{"mode", "lesson"}, {"lesson_step", s.step}};
  view.update(s.view);
  nlohmann::json text = {{"text", s.text}};
  if (s.selected >= 0) text["selected_token"] = s.selected;
  const nlohmann::json doc = {{"format", "attnscope-session/1"},
                              {"model", s.model},
                              {"lesson", s.lesson},
                              {"texts", {text}},
                              {"view", view},
                              {"display", {{"theme", "light"}, {"font_scale", s.font_scale}}}};
  std::ofstream(path) << doc.dump();
  return path;
}

const nlohmann::json* find_record(const nlohmann::json& layout, const std::string& view,
                                  const std::string& name) {
  for (const auto& v : layout["views"])
    if (v["view"] == view && (name.empty() || v.value("name", "") == name)) return &v;
  return nullptr;
}

std::vector<const nlohmann::json*> find_records(const nlohmann::json& layout,
                                                const std::string& view, const std::string& name) {
  std::vector<const nlohmann::json*> out;
  for (const auto& v : layout["views"])
    if (v["view"] == view && v.value("name", "") == name) out.push_back(&v);
  return out;
}

std::vector<std::string> lesson_texts(const nlohmann::json& layout) {
  std::vector<std::string> out;
  if (const nlohmann::json* lesson = find_record(layout, "lesson");
      lesson && lesson->contains("texts"))
    for (const auto& t : (*lesson)["texts"]) out.push_back(t["text"]);
  return out;
}

AttentionTrace core_trace(const std::string& text, LessonOptions o) {
  auto cpu = make_cpu_backend();
  return make_lesson_model(o)->run(text, *cpu);
}

void check_grid(const nlohmann::json& grid, const Matrix& want, const Matrix* masked,
                const Image& img, const std::string& colormap) {
  const int n = grid["rows"];
  ASSERT_EQ(n, want.rows());
  const double vmin = grid["vmin"], vmax = grid["vmax"];
  const double x0 = grid["x"], y0 = grid["y"], cw = grid["cell_w"], ch = grid["cell_h"];
  int checked = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const auto& v = grid["values"][i][j];
      if (masked && std::isinf((*masked)(i, j))) {
        EXPECT_TRUE(v.is_null()) << i << "," << j;
        continue;
      }
      ASSERT_TRUE(v.is_number()) << i << "," << j;
      EXPECT_NEAR(v.get<double>(), want(i, j), 1e-4 + 1e-4 * std::fabs(want(i, j)));
      auto rgb = colormap_rgb(colormap, (want(i, j) - vmin) / (vmax - vmin));
      const int px = static_cast<int>(x0 + j * cw + 3), py = static_cast<int>(y0 + i * ch + 3);
      auto got = img.at(px, py);
      for (int c = 0; c < 3; ++c)
        EXPECT_NEAR(got[c], rgb[c], 6) << "cell " << i << "," << j << " channel " << c;
      ++checked;
    }
  EXPECT_GT(checked, n);
}

}  // namespace attnscope::test
