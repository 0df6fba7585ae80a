#include "app/lesson/lesson_pictures.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "app/lesson/lesson_draw.h"
#include "app/lesson/lesson_legend.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

using namespace lesson;

namespace {

// Step 1: each word and the start of its vector; the focused word's nearest words.
void step_vectors(LessonPictureContext& ctx, ImVec2 at, ImVec2 size, bool three) {
  const AttentionTrace& t = *ctx.trace;
  const HeadSteps& s = t.steps[0];
  const ThemeColors& colors = theme_colors();
  ImFont* lf = ctx.fonts.lesson;
  ImFont* big = ctx.fonts.big;
  const int n = static_cast<int>(t.tokens.size());
  const char* names[] = {"Q: what I look for", "K: what I offer", "V: what I pass on"};
  const char* one = "its vector: 128 numbers (the first 24)";
  const int groups = three ? 3 : 1;
  const float gap = sz(lf);
  // Rows as tall as the lesson font when there is room; labels in the largest font a row holds.
  float label_w = 0;
  for (int i = 0; i < n; ++i) label_w = std::max(label_w, text_w(lf, label(t, i)));
  float head_h = 0;
  auto group_width = [&](float lw) {
    return three ? (size.x - lw - gap * 2) / 3 : size.x * 0.58f - lw - gap;
  };
  for (int g = 0; g < groups; ++g)
    head_h = std::max(
        head_h, fitted_line_h(ctx, group_width(label_w + sz(lf) * 0.5f), three ? names[g] : one));
  const float row_h = std::min(sz(lf) * 1.3f, (size.y - head_h) / std::max(1, n));
  ImFont* row_font = row_h >= sz(lf) ? lf : row_h >= sz(big) ? big : ctx.fonts.ui;
  const int stride = label_stride(sz(row_font), row_h);
  label_w = 0;
  for (int i = 0; i < n; ++i) label_w = std::max(label_w, text_w(row_font, label(t, i)));
  label_w += sz(row_font) * 0.5f;
  const float group_w = group_width(label_w);
  const int cells = 24;
  const float cell_w = std::max(3.0f, group_w / (cells + 1.5f));
  for (int g = 0; g < groups; ++g) {
    const float x = at.x + label_w + g * (group_w + gap);
    fitted_line(ctx, ImVec2(x, at.y), group_w, colors.accent, three ? names[g] : one);
    const Matrix& m = g == 0 ? s.q : g == 1 ? s.k : s.v;
    for (int i = 0; i < n; ++i) {
      const float y = at.y + head_h + i * row_h;
      const bool shown = labelled(i, ctx.focus, stride);
      if (g == 0 && shown)
        text(row_font, ImVec2(at.x, y + (row_h - sz(row_font)) / 2),
             i == ctx.focus ? colors.focus : colors.text, label(t, i));
      if (t.tokens[i].unknown) {
        if (!shown) continue;
        const std::string why = text_w(row_font, "unknown word: no vector") <= group_w
                                    ? "unknown word: no vector"
                                    : "no vector";
        text(row_font, ImVec2(x, y + (row_h - sz(row_font)) / 2), colors.text_dim, why);
        continue;
      }
      draw_strip(ctx, m.row(i), ImVec2(x, y + std::min(3.0f, row_h * 0.15f)), cell_w,
                 row_h - 2 * std::min(3.0f, row_h * 0.15f), cells);
      if (!three && shown)
        text(row_font, ImVec2(x + cells * cell_w + 6, y + (row_h - sz(row_font)) / 2),
             colors.text_dim, "\xE2\x80\xA6");
    }
    if (ctx.layout) {
      nlohmann::json b = box(ctx, three ? names[g] : "vectors", ImVec2(x, at.y + head_h),
                             ImVec2(cells * cell_w, n * row_h));
      b["rows"] = n;
      ctx.layout->push_back(b);
    }
  }
  if (ctx.focus >= 0 && ctx.focus < n) {
    const float y = at.y + head_h + ctx.focus * row_h;
    ImGui::GetWindowDrawList()->AddRect(
        ImVec2(at.x - 4, y), ImVec2(at.x + label_w + groups * (group_w + gap) - gap, y + row_h),
        colors.focus, 4.0f, 0, 3.0f);
  }
  if (three || !ctx.shift || ctx.focus < 0) return;
  // The focused word's nearest words: similar vectors, similar use.
  const float x = at.x + size.x * 0.6f, w = size.x * 0.4f;
  const std::string title = "nearest to \"" + label(t, ctx.focus) + "\"";
  float y = at.y + fitted_line(ctx, ImVec2(x, at.y), w, colors.accent, title);
  const float item_h = sz(lf) * 1.3f;
  const size_t fit = static_cast<size_t>(std::max(0.0f, (at.y + size.y - y) / item_h));
  for (size_t k = 0; k < std::min({size_t{7}, fit, ctx.shift->static_neighbors.size()}); ++k) {
    const Neighbor& nb = ctx.shift->static_neighbors[k];
    text(lf, ImVec2(x, y), colors.text, nb.word);
    text(ctx.fonts.lesson_mono,
         ImVec2(std::max(x + w * 0.62f, x + text_w(lf, nb.word) + sz(lf) * 0.5f), y + 2),
         colors.text_dim, number(nb.similarity));
    y += item_h;
  }
}

// A grid with the sentence under it that says what its grey (masked) cells mean.
void grid_with_note(LessonPictureContext& ctx, const Grid& g, ImVec2 at, ImVec2 size) {
  const MaskedNote note = masked_note(*ctx.trace, *g.masked, g.masked_text);
  const float gap = sz(ctx.fonts.big) * 0.4f;
  const float note_h = note.text.empty() ? 0 : wrapped_h(ctx.fonts.big, size.x, note.text) + gap;
  const ImVec2 used = draw_grid(ctx, g, at, ImVec2(size.x, size.y - note_h));
  draw_masked_note(ctx, note, ImVec2(at.x, at.y + used.y + gap), size.x);
}

// Step 3: Q·Kᵀ, every pair's score; masked pairs (a word and itself, a word without a vector)
// grey "−∞", said in words under the grid.
void step_scores(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const HeadSteps& s = ctx.trace->steps[0];
  grid_with_note(ctx, Grid{"scores", &s.scores, &s.scaled, true, true, false, 1}, at, size);
}

// Step 4: the scaled scores, and the focused row's softmax with and without ÷√d_k.
void step_scale(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const AttentionTrace& t = *ctx.trace;
  const HeadSteps& s = t.steps[0];
  const bool unscaled = ctx.app.state.lesson_mode.unscaled;
  const float d_k = static_cast<float>(s.k.cols());
  // Without ÷√d_k the logits are √d_k times larger (masked entries stay −∞).
  const Matrix logits = unscaled ? Matrix(s.scaled * std::sqrt(d_k)) : s.scaled;
  const float grid_w = size.x * 0.58f;
  grid_with_note(ctx,
                 Grid{unscaled ? "logits_unscaled" : "logits_scaled", &logits, &s.scaled, true,
                      true, false, 1},
                 at, ImVec2(grid_w, size.y));
  if (ctx.focus < 0) return;
  const ThemeColors& colors = theme_colors();
  const float x = at.x + grid_w + sz(ctx.fonts.lesson), w = at.x + size.x - x;
  std::string title = std::string("softmax of \"") + label(t, ctx.focus) + "\", " +
                      (unscaled ? "without \xC3\xB7\xE2\x88\x9A"
                                  "d\xE2\x82\x96"
                                : "with \xC3\xB7\xE2\x88\x9A"
                                  "d\xE2\x82\x96");
  char note[96];
  std::snprintf(note, sizeof note,
                "\xE2\x88\x9A"
                "d\xE2\x82\x96 = \xE2\x88\x9A%d = %.1f   (press U)",
                static_cast<int>(d_k), std::sqrt(d_k));
  const float note_h = wrapped_h(ctx.fonts.big, w, note);
  const float h =
      draw_bars(ctx, unscaled ? "softmax_unscaled" : "softmax_scaled", title.c_str(),
                softmax(logits, ctx.focus), t, ImVec2(x, at.y), ImVec2(w, size.y - note_h - 6));
  wrapped(ctx.fonts.big, ImVec2(x, at.y + h + 6), w, colors.text_dim, note);
}

// Step 5: the weights, every row adding up to 1.
void step_softmax(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const HeadSteps& s = ctx.trace->steps[0];
  // A masked pair (a word and itself, with "exclude self") gets weight 0.
  grid_with_note(ctx, Grid{"weights", &s.weights, &s.scaled, true, true, true, 2, "0"}, at, size);
}

// Step 6: who the focused word listens to, its new vector as a mix, what real models add (the
// residual connection), and its nearest words before and after.
void step_output(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const AttentionTrace& t = *ctx.trace;
  const ThemeColors& colors = theme_colors();
  if (ctx.focus < 0) return;
  ImFont* lf = ctx.fonts.lesson;
  const std::vector<float> w = row_of(t.steps[0].weights, ctx.focus);
  const float bars_w = size.x * 0.42f;
  const std::string listens = std::string("\"").append(label(t, ctx.focus)).append("\" listens to");
  draw_bars(ctx, "weights_row", listens.c_str(), w, t, at, ImVec2(bars_w, size.y));
  // new = 0.41·river + 0.22·water + …
  std::vector<int> order(w.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int>(j);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
  const float x = at.x + bars_w + sz(lf), right_w = at.x + size.x - x;
  float y = at.y;
  y += fitted_line(ctx, ImVec2(x, y), right_w, colors.accent, "new " + label(t, ctx.focus) + " =");
  std::string terms;
  for (int k = 0; k < std::min<int>(3, static_cast<int>(order.size())); ++k)
    terms += (k ? " + " : "") + number(w[order[k]]) + "\xC2\xB7" + label(t, order[k], 8);
  terms += " + \xE2\x80\xA6";
  y += fitted_line(ctx, ImVec2(x, y), right_w, colors.text, terms);
  // What the lesson model leaves out and every real transformer does.
  const char* residual =
      "Real transformers then add the word's own input vector back (the residual connection: "
      "output = input + this mix), so the word keeps its meaning and gains its context.";
  const float residual_h = wrapped(ctx.fonts.big, ImVec2(x, y), right_w, colors.text_dim, residual);
  if (ctx.layout) {
    nlohmann::json b = box(ctx, "residual", ImVec2(x, y), ImVec2(right_w, residual_h));
    b["text"] = residual;
    ctx.layout->push_back(b);
  }
  y += residual_h + sz(lf) * 0.3f;
  if (!ctx.shift) return;
  const float list_y = y, col_w = right_w / 2;
  const std::vector<Neighbor>* lists[] = {&ctx.shift->static_neighbors,
                                          &ctx.shift->context_neighbors};
  const std::string titles[] = {"alone, near:", "in this sentence, near:"};
  float title_h = 0;
  for (const std::string& title : titles)
    title_h = std::max(title_h, fitted_line_h(ctx, col_w - sz(lf) * 0.5f, title));
  const float item_h = sz(lf) * 1.25f;
  const size_t fit =
      static_cast<size_t>(std::max(0.0f, (at.y + size.y - list_y - title_h) / item_h));
  nlohmann::json record = nlohmann::json::array();
  for (int c = 0; c < 2; ++c) {
    const float cx = x + c * col_w;
    fitted_line(ctx, ImVec2(cx, list_y), col_w - sz(lf) * 0.5f,
                c == 0 ? colors.text_dim : colors.accent, titles[c]);
    float iy = list_y + title_h;
    nlohmann::json words = nlohmann::json::array();
    for (size_t k = 0; k < std::min({size_t{6}, fit, lists[c]->size()}); ++k) {
      const Neighbor& nb = (*lists[c])[k];
      text(lf, ImVec2(cx, iy), colors.text, nb.word);
      iy += item_h;
      words.push_back(nb.word);
    }
    record.push_back(words);
  }
  if (ctx.layout) {
    nlohmann::json b = box(ctx, "neighbours", ImVec2(x, list_y), ImVec2(right_w, size.y));
    b["alone"] = record[0];
    b["in_context"] = record[1];
    ctx.layout->push_back(b);
  }
}

// Step 7: the lesson's two heads (app/lesson/lesson_heads.cpp), beside a real model's layer of
// heads when one was loaded before the lesson.
void step_heads(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  if (ctx.real) {
    const float left = size.x * 0.5f, gap = sz(ctx.fonts.lesson) * 1.2f;
    draw_real_heads(ctx, ImVec2(at.x + left + gap, at.y), ImVec2(size.x - left - gap, size.y));
    size.x = left;
  }
  draw_lesson_heads(ctx, at, size);
}

// Step 8: the focused word's attention in the sentence and in the same words reversed, as tinted
// word chips; the positional encodings as waves.
void step_positions(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* lf = ctx.fonts.lesson;
  ImFont* nf = ctx.fonts.lesson_mono;
  const bool positions = ctx.app.state.lesson_mode.positions;
  const AttentionTrace* traces[] = {ctx.trace, ctx.second};
  const std::string word = ctx.focus >= 0 ? label(*ctx.trace, ctx.focus) : "";
  const char* titles[] = {"the sentence", "the same words, reversed"};
  // With a real model, its panel takes the right part, and the word chips shrink to the UI's large
  // font when the lesson's would not fit the sentence in the narrower column.
  ImFont* cf = lf;
  ImFont* cnf = nf;
  if (ctx.real) {
    const float left = size.x * 0.56f, gap = sz(lf);
    draw_real_positions(ctx, ImVec2(at.x + left + gap, at.y), ImVec2(size.x - left - gap, size.y));
    size.x = left;
    float need = 0;
    for (int j = 0; j < static_cast<int>(ctx.trace->tokens.size()); ++j)
      need += std::max(text_w(lf, label(*ctx.trace, j)), text_w(nf, "0.00")) + sz(lf) * 0.5f + 4;
    if (need > size.x) cf = ctx.fonts.big, cnf = ctx.fonts.mono;
  }
  float y = at.y;
  nlohmann::json rows = nlohmann::json::array();
  for (int r = 0; r < 2; ++r) {
    const AttentionTrace* t = traces[r];
    y += fitted_line(
        ctx, ImVec2(at.x, y), size.x, colors.accent,
        std::string(titles[r]) + (word.empty() ? "" : ": where \"" + word + "\" looks"));
    if (!t || t->steps.empty()) {
      y += sz(lf) * 3;
      continue;
    }
    // The focused word in this sentence: the same token text (first match).
    int q = -1;
    for (int i = 0; i < static_cast<int>(t->tokens.size()); ++i)
      if (label(*t, i) == word) {
        q = i;
        break;
      }
    std::vector<float> w = q >= 0 ? row_of(t->steps[0].weights, q) : std::vector<float>();
    float x = at.x;
    nlohmann::json chips = nlohmann::json::array();
    for (int j = 0; j < static_cast<int>(t->tokens.size()); ++j) {
      std::string l = label(*t, j);
      const float cw = std::max(text_w(cf, l), text_w(cnf, "0.00")) + sz(cf) * 0.5f;
      // A sentence wider than the column goes on in a second line of chips.
      if (x > at.x && x + cw > at.x + size.x) {
        x = at.x;
        y += sz(cf) * 2.5f + 4;
      }
      const float v = j < static_cast<int>(w.size()) ? w[j] : 0.0f;
      ImVec2 a(x, y), b(x + cw, y + sz(cf) * 2.5f);
      dl->AddRectFilled(a, b,
                        j == q ? with_alpha(colors.focus, 60)
                               : colormap_color(ctx.app.state.colormap, v, 0, 1, 0.85f),
                        6.0f);
      const ImU32 ink = j == q ? colors.text : text_color_on(ctx.app.state.colormap, v, 0, 1);
      text_centered(cf, a, ImVec2(b.x, a.y + sz(cf) * 1.2f), ink, l);
      text_centered(cnf, ImVec2(a.x, a.y + sz(cf) * 1.2f), b, ink, j == q ? "" : number(v));
      chips.push_back({{"word", l}, {"weight", v}});
      x += cw + 4;
    }
    rows.push_back(chips);
    y += sz(cf) * 2.5f + sz(lf) * 0.7f;
  }
  // The encodings: one row per position, one column per component, as waves of color.
  const int n = static_cast<int>(ctx.trace->tokens.size());
  // The encodings' caption and waves only where the picture has room left: in a short window
  // (800x600 at 200%, a status bar grown over two rows) they would run into the text below.
  const bool room = y + sz(lf) * 1.3f <= at.y + size.y;
  if (room)
    y += fitted_line(ctx, ImVec2(at.x, y), size.x, positions ? colors.accent : colors.text_dim,
                     positions
                         ? "positions added: each place in the sentence has its own wave pattern"
                         : "positions are off: press P to add them");
  const float wave_h = room ? at.y + size.y - y : 0.0f;
  if (n > 0 && wave_h > 20) {
    const int dims = 64;
    const float row_h = std::min(wave_h / n, sz(lf) * 1.0f);
    // Word labels beside the first and the last position; positions count from 0, as Hugging
    // Face counts tokens.
    const std::string first = std::string("\xE2\x86\x90 word 0 (\"") + label(*ctx.trace, 0) + "\")";
    const std::string last = std::string("\xE2\x86\x90 word ") + std::to_string(n - 1) + " (\"" +
                             label(*ctx.trace, n - 1) + "\")";
    const bool both = n > 1 && n * row_h >= sz(ctx.fonts.big) * 2;
    const float label_w =
        std::max(text_w(ctx.fonts.big, first), both ? text_w(ctx.fonts.big, last) : 0.0f) + 10;
    const float x0 = at.x + sz(lf) * 1.5f;
    const float cell_w = std::max(1.0f, std::min((at.x + size.x - x0 - label_w) / dims, 12.0f));
    for (int i = 0; i < n; ++i) {
      // What step 8's model adds to the word vector: its first `dims` of 128 components.
      RowVector pe = lesson_positional_encoding(i, 128);
      draw_strip(ctx, pe, ImVec2(x0, y + i * row_h), cell_w, row_h, dims);
    }
    const float lx = x0 + dims * cell_w + 10;
    text(ctx.fonts.big, ImVec2(lx, y - 2), colors.text_dim, first);
    if (both)
      text(ctx.fonts.big, ImVec2(lx, y + n * row_h - sz(ctx.fonts.big)), colors.text_dim, last);
    if (!positions)
      dl->AddRectFilled(ImVec2(at.x, y), ImVec2(at.x + size.x, y + n * row_h),
                        with_alpha(ImGui::GetColorU32(ImGuiCol_WindowBg), 170));
  }
  if (ctx.layout) {
    nlohmann::json b = box(ctx, "orders", at, size);
    b["rows"] = rows;
    b["positions"] = positions;
    ctx.layout->push_back(b);
  }
}

}  // namespace

void draw_lesson_picture(LessonPictureContext& ctx, int step, ImVec2 at, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  if (!ctx.trace || ctx.trace->steps.empty() || ctx.trace->tokens.empty()) {
    text(ctx.fonts.lesson, at, colors.text_dim,
         ctx.trace ? "Type a sentence above." : "Computing\xE2\x80\xA6");
    return;
  }
  switch (step) {
    case 1:
      step_vectors(ctx, at, size, false);
      break;
    case 2:
      step_vectors(ctx, at, size, true);
      break;
    case 3:
      step_scores(ctx, at, size);
      break;
    case 4:
      step_scale(ctx, at, size);
      break;
    case 5:
      step_softmax(ctx, at, size);
      break;
    case 6:
      step_output(ctx, at, size);
      break;
    case 7:
      step_heads(ctx, at, size);
      break;
    default:
      step_positions(ctx, at, size);
      break;
  }
}

}  // namespace attnscope
