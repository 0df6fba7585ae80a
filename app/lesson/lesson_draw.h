#pragma once
// Drawing helpers of the lesson's pictures: large-type text, matrices as labelled colored grids,
// vectors as strips, rows of weights as bars. Each records what it drew in the layout (tests).
#include <string>
#include <vector>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/lesson/lesson_pictures.h"

namespace attnscope::lesson {

ImU32 with_alpha(ImU32 color, int alpha);
// A font's size in screen units (fonts are rasterised at the screenshot scale).
float sz(const ImFont* font);
float text_w(ImFont* font, const std::string& s);
void text(ImFont* font, ImVec2 at, ImU32 color, const std::string& s);
void text_centered(ImFont* font, ImVec2 a, ImVec2 b, ImU32 color, const std::string& s);
void text_centered(ImFont* font, float size, ImVec2 a, ImVec2 b, ImU32 color,
                   const std::string& s);       // at `size` px
std::string number(float v, int decimals = 2);  // "0.41", "−∞"
std::string label(const AttentionTrace& t, int i, int max_chars = 10);
nlohmann::json box(const LessonPictureContext& ctx, const char* name, ImVec2 a, ImVec2 size);

// A [n x n] matrix as colored cells with token labels, the focused row outlined, numbers in the
// cells when they fit.
struct Grid {
  const char* name;
  const Matrix* values;
  const Matrix* masked = nullptr;  // where this is −∞ the entry is masked: grey "−∞"
  bool numbers = true;
  bool column_labels = true;
  bool row_sums = false;  // a Σ column (softmax rows add up to 1)
  int decimals = 2;
  const char* masked_text = "\xE2\x88\x92\xE2\x88\x9E";  // "−∞" for scores, "0" for weights
  // Rows may be taller than the cells are wide, up to the lesson font's height: a grid in a narrow
  // column keeps row labels a class can read.
  bool tall_rows = false;
};
// Returns the size used.
ImVec2 draw_grid(LessonPictureContext& ctx, const Grid& g, ImVec2 at, ImVec2 size);
// A vector's first `cells` components as colored cells, negative to positive.
void draw_strip(LessonPictureContext& ctx, const RowVector& v, ImVec2 at, float cell_w,
                float cell_h, int cells);
// One row of weights as labelled bars under a title; returns the height used.
float draw_bars(LessonPictureContext& ctx, const char* name, const char* title,
                const std::vector<float>& w, const AttentionTrace& t, ImVec2 at, ImVec2 size);

std::vector<float> softmax(const Matrix& logits, int row);  // masked (−∞) entries get 0
std::vector<float> row_of(const Matrix& m, int row);
int argmax(const std::vector<float>& v);

}  // namespace attnscope::lesson
