#include "app/lesson/lesson_pictures.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "app/lesson/lesson_draw.h"
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
  const int n = static_cast<int>(t.tokens.size());
  float label_w = 0;
  for (int i = 0; i < n; ++i) label_w = std::max(label_w, text_w(lf, label(t, i)));
  label_w += sz(lf) * 0.5f;
  const float head_h = sz(lf) * 1.5f;
  const float row_h = std::min(sz(lf) * 1.3f, (size.y - head_h) / std::max(1, n));
  const char* names[] = {"Q: what I look for", "K: what I offer", "V: what I pass on"};
  const int groups = three ? 3 : 1;
  const float gap = sz(lf);
  const float group_w = three ? (size.x - label_w - gap * 2) / 3 : size.x * 0.55f - label_w;
  const int cells = 24;
  const float cell_w = std::max(3.0f, group_w / (cells + 1.5f));
  for (int g = 0; g < groups; ++g) {
    const float x = at.x + label_w + g * (group_w + gap);
    text(lf, ImVec2(x, at.y), colors.accent,
         three ? names[g] : "its vector: 128 numbers (the first 24)");
    const Matrix& m = g == 0 ? s.q : g == 1 ? s.k : s.v;
    for (int i = 0; i < n; ++i) {
      const float y = at.y + head_h + i * row_h;
      if (g == 0)
        text(lf, ImVec2(at.x, y + (row_h - sz(lf)) / 2),
             i == ctx.focus ? colors.focus : colors.text, label(t, i));
      if (t.tokens[i].unknown) {
        text(ctx.fonts.big, ImVec2(x, y), colors.text_dim, "unknown word: no vector");
        continue;
      }
      draw_strip(ctx, m.row(i), ImVec2(x, y + 3), cell_w, row_h - 6, cells);
      if (!three)
        text(lf, ImVec2(x + cells * cell_w + 6, y + (row_h - sz(lf)) / 2), colors.text_dim,
             "\xE2\x80\xA6");
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
  const float x = at.x + size.x * 0.6f;
  std::string title = "nearest to \"" + label(t, ctx.focus) + "\"";
  text(lf, ImVec2(x, at.y), colors.accent, title);
  float y = at.y + head_h;
  for (size_t k = 0; k < std::min<size_t>(7, ctx.shift->static_neighbors.size()); ++k) {
    const Neighbor& nb = ctx.shift->static_neighbors[k];
    text(lf, ImVec2(x, y), colors.text, nb.word);
    text(ctx.fonts.lesson_mono, ImVec2(x + size.x * 0.25f, y + 2), colors.text_dim,
         number(nb.similarity));
    y += sz(lf) * 1.3f;
  }
}

// Step 3: Q·Kᵀ, every pair's score; masked pairs (a word and itself) grey.
void step_scores(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const HeadSteps& s = ctx.trace->steps[0];
  draw_grid(ctx, Grid{"scores", &s.scores, &s.scaled, true, true, false, 1}, at, size);
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
  draw_grid(ctx,
            Grid{unscaled ? "logits_unscaled" : "logits_scaled", &logits, &s.scaled, true, true,
                 false, 1},
            at, ImVec2(grid_w, size.y));
  if (ctx.focus < 0) return;
  const ThemeColors& colors = theme_colors();
  const float x = at.x + grid_w + sz(ctx.fonts.lesson);
  std::string title = std::string("softmax of \"") + label(t, ctx.focus) + "\", " +
                      (unscaled ? "without \xC3\xB7\xE2\x88\x9A"
                                  "d\xE2\x82\x96"
                                : "with \xC3\xB7\xE2\x88\x9A"
                                  "d\xE2\x82\x96");
  const float h = draw_bars(ctx, unscaled ? "softmax_unscaled" : "softmax_scaled", title.c_str(),
                            softmax(logits, ctx.focus), t, ImVec2(x, at.y),
                            ImVec2(at.x + size.x - x, size.y - sz(ctx.fonts.lesson) * 1.4f));
  char note[96];
  std::snprintf(note, sizeof note,
                "\xE2\x88\x9A"
                "d\xE2\x82\x96 = \xE2\x88\x9A%d = %.1f   (press U)",
                static_cast<int>(d_k), std::sqrt(d_k));
  text(ctx.fonts.big, ImVec2(x, at.y + h + 6), colors.text_dim, note);
}

// Step 5: the weights, every row adding up to 1.
void step_softmax(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const HeadSteps& s = ctx.trace->steps[0];
  // A masked pair (a word and itself, with "exclude self") gets weight 0.
  draw_grid(ctx, Grid{"weights", &s.weights, &s.scaled, true, true, true, 2, "0"}, at, size);
}

// Step 6: who the focused word listens to, its new vector as a mix, and its nearest words before
// and after.
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
  const float x = at.x + bars_w + sz(lf);
  std::string mix = "new " + label(t, ctx.focus) + " =";
  text(lf, ImVec2(x, at.y), colors.accent, mix);
  std::string terms;
  for (int k = 0; k < std::min<int>(3, static_cast<int>(order.size())); ++k)
    terms += (k ? " + " : "") + number(w[order[k]]) + "\xC2\xB7" + label(t, order[k], 8);
  terms += " + \xE2\x80\xA6";
  text(lf, ImVec2(x, at.y + sz(lf) * 1.3f), colors.text, terms);
  if (!ctx.shift) return;
  const float list_y = at.y + sz(lf) * 3.2f, col_w = (at.x + size.x - x) / 2;
  const std::vector<Neighbor>* lists[] = {&ctx.shift->static_neighbors,
                                          &ctx.shift->context_neighbors};
  const std::string titles[] = {"alone, near:", "in this sentence, near:"};
  nlohmann::json record = nlohmann::json::array();
  for (int c = 0; c < 2; ++c) {
    const float cx = x + c * col_w;
    text(lf, ImVec2(cx, list_y), c == 0 ? colors.text_dim : colors.accent, titles[c]);
    float y = list_y + sz(lf) * 1.4f;
    nlohmann::json words = nlohmann::json::array();
    for (size_t k = 0; k < std::min<size_t>(6, lists[c]->size()); ++k) {
      const Neighbor& nb = (*lists[c])[k];
      text(lf, ImVec2(cx, y), colors.text, nb.word);
      y += sz(lf) * 1.25f;
      words.push_back(nb.word);
    }
    record.push_back(words);
  }
  if (ctx.layout) {
    nlohmann::json b = box(ctx, "neighbours", ImVec2(x, list_y), ImVec2(col_w * 2, size.y));
    b["alone"] = record[0];
    b["in_context"] = record[1];
    ctx.layout->push_back(b);
  }
}

// Step 7: two heads side by side, each saying what it is made of and where the word looks.
void step_heads(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  if (ctx.real) {
    // The lesson's two heads on the left, the real model's layer of heads on the right.
    const float left = size.x * 0.44f, gap = sz(ctx.fonts.lesson) * 1.2f;
    draw_real_heads(ctx, ImVec2(at.x + left + gap, at.y), ImVec2(size.x - left - gap, size.y));
    size.x = left;
  }
  const AttentionTrace& t = *ctx.trace;
  const ThemeColors& colors = theme_colors();
  const int heads = std::min(2, static_cast<int>(t.steps.size()));
  const auto& roles = t.model.options.value("head_roles", nlohmann::json::array());
  const auto& recipes = t.model.options.value("head_recipes", nlohmann::json::array());
  ImFont* lf = ctx.fonts.lesson;
  const float gap = sz(lf) * 1.5f;
  const float w = (size.x - gap) / 2;
  for (int h = 0; h < heads; ++h) {
    const float x = at.x + h * (w + gap);
    const std::string role = h < static_cast<int>(roles.size()) ? roles[h].get<std::string>() : "";
    text(lf, ImVec2(x, at.y), colors.accent,
         std::string("head ") + std::to_string(h + 1) + (role.empty() ? "" : ": " + role));
    std::string recipe = h < static_cast<int>(recipes.size()) ? recipes[h].get<std::string>() : "";
    // The recipe in the UI font, wrapped to the column.
    ImGui::SetCursorScreenPos(ImVec2(x, at.y + sz(lf) * 1.3f));
    ImGui::PushFont(ctx.fonts.big);
    ImGui::PushTextWrapPos(x + w);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colors.text_dim));
    ImGui::TextWrapped("%s", recipe.c_str());
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    const float grid_top = ImGui::GetCursorScreenPos().y + 4;
    std::string where;
    if (ctx.focus >= 0) {
      int best = argmax(row_of(t.steps[h].weights, ctx.focus));
      if (best >= 0) where = label(t, ctx.focus) + " \xE2\x86\x92 " + label(t, best);
    }
    const float where_h = sz(lf) * 1.4f;
    const char* name = h == 0 ? "head1" : "head2";
    // No column labels: the rows name the same words in order, and the line below says where
    // the chosen word looks; the rows get the height and keep a readable font.
    Grid grid{name, &t.steps[h].weights, &t.steps[h].scaled, false, false};
    grid.tall_rows = ctx.real != nullptr;  // the column is narrow beside a real model's heads
    draw_grid(ctx, grid, ImVec2(x, grid_top), ImVec2(w, at.y + size.y - grid_top - where_h));
    text(lf, ImVec2(x, at.y + size.y - where_h + 4), colors.focus, where);
    if (ctx.layout) {
      nlohmann::json b =
          box(ctx, h == 0 ? "head1_says" : "head2_says", ImVec2(x, at.y), ImVec2(w, size.y));
      b["role"] = role;
      b["recipe"] = recipe;
      b["looks_at"] = where;
      ctx.layout->push_back(b);
    }
  }
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
    text(lf, ImVec2(at.x, y), colors.accent,
         std::string(titles[r]) + (word.empty() ? "" : ": where \"" + word + "\" looks"));
    y += sz(lf) * 1.4f;
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
      if (x + cw > at.x + size.x) break;
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
  const float wave_h = at.y + size.y - y - sz(lf) * 1.6f;
  text(lf, ImVec2(at.x, y), positions ? colors.accent : colors.text_dim,
       positions ? "positions added: each place in the sentence has its own wave pattern"
                 : "positions are off: press P to add them");
  y += sz(lf) * 1.5f;
  if (n > 0 && wave_h > 20) {
    const int dims = 64;
    const float row_h = std::min(wave_h / n, sz(lf) * 1.0f);
    // Beside a real model's panel the word labels must fit in the column too.
    const float label_w =
        ctx.real ? text_w(ctx.fonts.big, "\xE2\x86\x90 word 12 (\"watched\")") : sz(lf) * 1.5f;
    const float cell_w = std::min((size.x - sz(lf) * 1.5f - label_w) / dims, 12.0f);
    // One row per position, word labels beside the first and the last.
    for (int i = 0; i < n; ++i) {
      // What step 8's model adds to the word vector: its first `dims` of 128 components.
      RowVector pe = lesson_positional_encoding(i, 128);
      draw_strip(ctx, pe, ImVec2(at.x + sz(lf) * 1.5f, y + i * row_h), cell_w, row_h, dims);
    }
    text(ctx.fonts.big, ImVec2(at.x + sz(lf) * 1.5f + dims * cell_w + 10, y - 2), colors.text_dim,
         std::string("\xE2\x86\x90 word 1 (\"") + label(*ctx.trace, 0) + "\")");
    text(ctx.fonts.big,
         ImVec2(at.x + sz(lf) * 1.5f + dims * cell_w + 10, y + n * row_h - sz(ctx.fonts.big)),
         colors.text_dim,
         std::string("\xE2\x86\x90 word ") + std::to_string(n) + " (\"" + label(*ctx.trace, n - 1) +
             "\")");
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
