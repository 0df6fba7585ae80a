// Step 7: the lesson model's two heads side by side, each a grid of its weights with the key
// labels, the numbers and one colorbar for both, and the row where the two heads look at
// different words outlined: on an ordinary sentence the word nearest in meaning is often also the
// next word, and then both heads would seem to do the same thing.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "app/lesson/lesson_draw.h"
#include "app/lesson/lesson_legend.h"
#include "app/lesson/lesson_pictures.h"
#include "app/ui/theme.h"

namespace attnscope {

using namespace lesson;

namespace {

constexpr const char* kArrow = "\xE2\x86\x92";

// Which row step 7 outlines, and where each head's attention peaks there.
struct HeadsCompare {
  int row = -1;            // the row shown (-1: none)
  int best[2] = {-1, -1};  // each head's strongest key in that row
  bool differ = false;     // the two heads peak on different keys there
  bool moved = false;      // the heads agree on the focused word: another row is shown
};

// The focused word when the heads' strongest keys differ there; else the word nearest to it
// (a word with a vector) where they differ; else the focus as it is.
HeadsCompare compare_heads(const AttentionTrace& t, int focus) {
  HeadsCompare c;
  const int n = static_cast<int>(t.tokens.size());
  auto best = [&](int h, int row) { return argmax(row_of(t.steps[h].weights, row)); };
  auto differ = [&](int row) { return best(0, row) != best(1, row); };
  c.row = focus;
  if (focus < 0 || !differ(focus)) {
    // Candidates nearest to the focused word first (the first word first when there is none).
    std::vector<int> rows(n);
    std::iota(rows.begin(), rows.end(), 0);
    const int from = std::max(focus, 0);
    std::stable_sort(rows.begin(), rows.end(),
                     [&](int a, int b) { return std::abs(a - from) < std::abs(b - from); });
    for (int row : rows)
      if (row != focus && !t.tokens[row].unknown && differ(row)) {
        c.row = row;
        c.moved = focus >= 0;
        break;
      }
  }
  if (c.row >= 0) {
    c.best[0] = best(0, c.row);
    c.best[1] = best(1, c.row);
    c.differ = c.best[0] != c.best[1];
  }
  return c;
}

std::string quoted(const AttentionTrace& t, int i) {
  return "\"" + label(t, i) + "\"";
}

// What the outlined row shows, when the picture alone would mislead: the heads agree on the
// focused word (another row is outlined), or on every word.
std::string compare_words(const AttentionTrace& t, int focus, const HeadsCompare& c) {
  if (c.row < 0) return "";
  if (c.moved) {
    const int same = argmax(row_of(t.steps[0].weights, focus));
    return "Both heads send " + quoted(t, focus) + " to " + quoted(t, same) +
           ": it is close in meaning and stands right beside it. So the outlined row is " +
           quoted(t, c.row) + ", where the two heads look at different words.";
  }
  if (!c.differ)
    return "In this sentence both heads pick the same word for every word (the word nearest in "
           "meaning is also the next one): try a longer sentence to see them part.";
  return "";
}

}  // namespace

void draw_lesson_heads(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const AttentionTrace& t = *ctx.trace;
  const ThemeColors& colors = theme_colors();
  const int heads = std::min(2, static_cast<int>(t.steps.size()));
  const auto& roles = t.model.options.value("head_roles", nlohmann::json::array());
  const auto& recipes = t.model.options.value("head_recipes", nlohmann::json::array());
  ImFont* lf = ctx.fonts.lesson;
  ImFont* big = ctx.fonts.big;
  const HeadsCompare c = heads == 2 ? compare_heads(t, ctx.focus) : HeadsCompare{ctx.focus};
  // One colour scale for both heads (0 to the larger of their strongest weights), so that the
  // same colour means the same weight in both.
  float vmax = 1e-6f;
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < t.steps[h].weights.rows(); ++i)
      for (int j = 0; j < t.steps[h].weights.cols(); ++j)
        if (std::isfinite(t.steps[h].scaled(i, j))) vmax = std::max(vmax, t.steps[h].weights(i, j));
  const float bar_w = colorbar_width(ctx, 0, vmax);
  const float gap = sz(lf);
  const float w = std::max(10.0f, (size.x - bar_w - gap * 2) / std::max(heads, 1));
  // The sentence under both grids, when one is needed.
  const std::string words = compare_words(t, ctx.focus, c);
  const float words_h = words.empty() ? 0 : wrapped_h(big, size.x, words);
  // Titles and recipes of both heads first: the grids start level below the taller. The recipes
  // are in the UI's large font, or its small one when the rows would then be too short for the
  // numbers.
  std::string titles[2], recipe[2], where[2];
  float title_h = 0, where_h = 0;
  for (int h = 0; h < heads; ++h) {
    const std::string role = h < static_cast<int>(roles.size()) ? roles[h].get<std::string>() : "";
    titles[h] = "head " + std::to_string(h) + (role.empty() ? "" : ": " + role);
    recipe[h] = h < static_cast<int>(recipes.size()) ? recipes[h].get<std::string>() : "";
    title_h = std::max(title_h, fitted_line_h(ctx, w, titles[h]));
    if (c.row >= 0 && c.best[h] >= 0) {
      char weight[32];
      std::snprintf(weight, sizeof weight, "  %s",
                    number(t.steps[h].weights(c.row, c.best[h])).c_str());
      where[h] = label(t, c.row) + " " + kArrow + " " + label(t, c.best[h]) + weight;
    }
    where_h = std::max(where_h, fitted_line_h(ctx, w, where[h]));
  }
  const int n = static_cast<int>(t.tokens.size());
  float key_labels_h = 0;  // the column labels at their smallest
  for (int j = 0; j < n; ++j)
    key_labels_h = std::max(key_labels_h, text_w(ctx.fonts.ui, label(t, j)));
  auto recipes_h = [&](ImFont* font) {
    float h = 0;
    for (int k = 0; k < heads; ++k) h = std::max(h, wrapped_h(font, w, recipe[k]));
    return h;
  };
  ImFont* recipe_font = big;
  if ((size.y - title_h - recipes_h(big) - where_h - words_h - key_labels_h) / std::max(n, 1) <
      sz(ctx.fonts.mono) * 1.05f)
    recipe_font = ctx.fonts.ui;
  const float head_h = title_h + recipes_h(recipe_font);
  const float grid_top = at.y + head_h;
  const float grid_h = std::max(10.0f, size.y - head_h - where_h - words_h);
  LessonPictureContext shown = ctx;
  shown.focus = c.row;  // the outlined row: where the heads differ
  float cells_top = grid_top, cells_h = grid_h;
  for (int h = 0; h < heads; ++h) {
    const float x = at.x + h * (w + gap);
    fitted_line(ctx, ImVec2(x, at.y), w, colors.accent, titles[h]);
    wrapped(recipe_font, ImVec2(x, at.y + title_h), w, colors.text_dim, recipe[h]);
    const std::string name = "head" + std::to_string(h);
    // Weights: a masked pair (a word and itself with "exclude self") shows a grey 0.
    Grid grid{name.c_str(), &t.steps[h].weights, &t.steps[h].scaled, true, true, false, 2, "0"};
    grid.tall_rows = true;
    grid.fixed_range = true;
    grid.vmin = 0;
    grid.vmax = vmax;
    GridCells cells;
    const ImVec2 used = draw_grid(shown, grid, ImVec2(x, grid_top), ImVec2(w, grid_h), &cells);
    if (h == 0) {
      // The colorbar spans the cells' height.
      cells_top = cells.min.y;
      cells_h = cells.max.y - cells.min.y;
    }
    if (!where[h].empty())
      fitted_line(ctx, ImVec2(x, grid_top + used.y + sz(lf) * 0.2f), w, colors.focus, where[h]);
    if (ctx.layout) {
      nlohmann::json b = box(ctx, (name + "_says").c_str(), ImVec2(x, at.y), ImVec2(w, size.y));
      b["role"] = h < static_cast<int>(roles.size()) ? roles[h] : nlohmann::json("");
      b["recipe"] = recipe[h];
      b["looks_at"] = c.row >= 0 && c.best[h] >= 0
                          ? label(t, c.row) + " " + kArrow + " " + label(t, c.best[h])
                          : std::string();
      b["row"] = c.row;
      b["best"] = c.best[h];
      ctx.layout->push_back(b);
    }
  }
  draw_colorbar(ctx, "heads_colorbar", 0, vmax, ImVec2(at.x + size.x - bar_w, cells_top),
                std::max(10.0f, cells_h));
  if (!words.empty())
    wrapped(big, ImVec2(at.x, at.y + size.y - words_h), size.x, colors.text, words);
  if (ctx.layout) {
    nlohmann::json b = box(ctx, "heads_compare", at, size);
    b["row"] = c.row;
    b["focus"] = ctx.focus;
    b["best"] = {c.best[0], c.best[1]};
    b["differ"] = c.differ;
    b["moved"] = c.moved;
    b["text"] = words;
    ctx.layout->push_back(b);
  }
}

}  // namespace attnscope
