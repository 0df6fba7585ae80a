#pragma once
// Drawing helpers of the lesson's pictures: large-type text, matrices as labelled colored grids,
// vectors as strips, rows of weights as bars, a colorbar. Each records what it drew in the layout
// (tests), and every label and number goes through the text record below.
#include <string>
#include <vector>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/lesson/lesson_pictures.h"

namespace attnscope::lesson {

// Every label and number a lesson frame draws, as a box on screen: the layout file lists them so
// that tests can check that no two overlap, that all are inside the window and that none reads
// "-0.0". While a TextRecord is alive (one per frame, when a layout is written), text(),
// text_centered(), text_vertical(), wrapped() and recorded_item() add to it.
struct TextBox {
  std::string text;
  ImVec2 min, max;
};
class TextRecord {
 public:
  explicit TextRecord(bool on);
  ~TextRecord();
  TextRecord(const TextRecord&) = delete;
  TextRecord& operator=(const TextRecord&) = delete;
  nlohmann::json json(float pixel_scale) const;
  static void add(const std::string& s, ImVec2 min, ImVec2 max);  // no-op when none is alive

 private:
  std::vector<TextBox> boxes_;
};
// The last ImGui item (a button, a checkbox, the text box) as a recorded box labelled `s`.
void recorded_item(const std::string& s);

ImU32 with_alpha(ImU32 color, int alpha);
// Every size below and the ImGui text of the current window are `fit` times the fonts' own (a
// window too small for the lesson's type at the user's font scale shrinks it); once per frame.
void set_type_fit(float fit);
// A font's size in screen units (fonts are rasterised at the screenshot scale), times the fit.
float sz(const ImFont* font);
float text_w(ImFont* font, const std::string& s);
void text(ImFont* font, ImVec2 at, ImU32 color, const std::string& s);
void text_centered(ImFont* font, ImVec2 a, ImVec2 b, ImU32 color, const std::string& s);
void text_centered(ImFont* font, float size, ImVec2 a, ImVec2 b, ImU32 color,
                   const std::string& s);  // at `size` px
// Turned 90° counter-clockwise (reads bottom to top), its baseline start at `bottom_left`.
void text_vertical(ImFont* font, ImVec2 bottom_left, ImU32 color, const std::string& s);
// Wrapped text in `font` from `at` within `width`; returns the height used (wrapped_h measures
// it without drawing).
float wrapped(ImFont* font, ImVec2 at, float width, ImU32 color, const std::string& s);
float wrapped_h(ImFont* font, float width, const std::string& s);
// Label every `stride`-th row (column) when one per row of `cell` px would overlap: labels
// `label_size` px high need that many rows.
int label_stride(float label_size, float cell);
// Whether row (column) `i` gets its label at that stride: the focused one always, its neighbours
// within a stride never, the others every `stride`-th.
bool labelled(int i, int focus, int stride);
// "0.41", "−∞"; never "-0.0": a value that rounds to zero has no sign.
std::string number(float v, int decimals = 2);
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
  // Colors over [vmin, vmax] instead of the grid's own range (grids that share one colorbar).
  bool fixed_range = false;
  float vmin = 0, vmax = 1;
};
// Returns the size used; `cells`, when given, receives where the cells went.
struct GridCells {
  ImVec2 min, max;
};
ImVec2 draw_grid(LessonPictureContext& ctx, const Grid& g, ImVec2 at, ImVec2 size,
                 GridCells* cells = nullptr);
// A vector's first `cells` components as colored cells, negative to positive.
void draw_strip(LessonPictureContext& ctx, const RowVector& v, ImVec2 at, float cell_w,
                float cell_h, int cells);
// One line in the lesson font, or the UI's large font when it is too wide for `width`, else
// wrapped in the large font; returns the height used (fitted_line_h measures it first).
float fitted_line(const LessonPictureContext& ctx, ImVec2 at, float width, ImU32 color,
                  const std::string& s);
float fitted_line_h(const LessonPictureContext& ctx, float width, const std::string& s);
// One row of weights as labelled bars under a title; returns the height used.
float draw_bars(LessonPictureContext& ctx, const char* name, const char* title,
                const std::vector<float>& w, const AttentionTrace& t, ImVec2 at, ImVec2 size);

std::vector<float> softmax(const Matrix& logits, int row);  // masked (−∞) entries get 0
std::vector<float> row_of(const Matrix& m, int row);
int argmax(const std::vector<float>& v);

}  // namespace attnscope::lesson
