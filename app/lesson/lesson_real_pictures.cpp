// Steps 7 and 8 with a real model loaded before the lesson: a layer of its heads, each labelled
// with what it does (step 7), and one of its heads on the sentence and on the reversed sentence
// with the model's position scheme in words (step 8).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

#include "app/lesson/lesson_draw.h"
#include "app/lesson/lesson_pictures.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

using namespace lesson;

void draw_heat(LessonPictureContext& ctx, const std::string& name, const Matrix& w, ImVec2 at,
               float side, nlohmann::json extra) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int n = static_cast<int>(w.rows());
  if (n == 0 || w.cols() != n) return;
  const float cell = side / n;
  const float vmax = std::max(1e-6f, w.maxCoeff());
  const int cmap = ctx.app.state.colormap;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      ImVec2 a(at.x + j * cell, at.y + i * cell);
      dl->AddRectFilled(a, ImVec2(a.x + cell, a.y + cell), colormap_color(cmap, w(i, j), 0, vmax));
    }
  dl->AddRect(ImVec2(at.x - 1, at.y - 1), ImVec2(at.x + side + 1, at.y + side + 1),
              theme_colors().panel_line, 0.0f, 0, 1.0f);
  if (ctx.layout) {
    nlohmann::json b = box(ctx, name.c_str(), at, ImVec2(side, side));
    b["rows"] = n;
    b["cell"] = cell * ctx.pixel_scale;
    b["vmin"] = 0.0;
    b["vmax"] = vmax;
    nlohmann::json rows = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
      nlohmann::json r = nlohmann::json::array();
      for (int j = 0; j < n; ++j) r.push_back(w(i, j));
      rows.push_back(r);
    }
    b["values"] = rows;
    b.update(extra);
    ctx.layout->push_back(b);
  }
}

namespace {

std::string model_title(const ModelInfo& info) {
  return info.name.empty() ? info.kind : info.name;
}

// "computing…" or the error, in place of a panel.
bool panel_missing(LessonPictureContext& ctx, ImVec2 at, float width) {
  const LessonRealShown& real = *ctx.real;
  const ThemeColors& colors = theme_colors();
  if (!real.error.empty()) {
    wrapped(ctx.fonts.big, at, width, colors.error, real.error);
    return true;
  }
  if (!real.trace || !real.summaries || real.trace->layers() == 0 || real.trace->tokens.empty()) {
    text(ctx.fonts.lesson, at, colors.text_dim, model_title(real.info) + ": computing\xE2\x80\xA6");
    return true;
  }
  return false;
}

}  // namespace

void draw_real_heads(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  if (panel_missing(ctx, at, size.x)) return;
  const LessonRealShown& real = *ctx.real;
  const AttentionTrace& t = *real.trace;
  const int n = static_cast<int>(t.tokens.size());
  const int layer = std::max(0, most_varied_layer(*real.summaries, n));
  const auto& sums = (*real.summaries)[layer];
  const int heads = static_cast<int>(sums.size());
  char title[160];
  // Layers and heads count from 0, as Hugging Face counts them.
  std::snprintf(title, sizeof title, "%s, layer %d of 0\xE2\x80\x93%d: heads 0\xE2\x80\x93%d",
                model_title(real.info).c_str(), layer, t.layers() - 1, heads - 1);
  float y = at.y + fitted_line(ctx, at, size.x, colors.accent, title);
  y += wrapped(ctx.fonts.big, ImVec2(at.x, y), size.x, colors.text,
               "Real models have many heads, each learning its own pattern. This is the layer "
               "whose heads differ most.");
  y += sz(ctx.fonts.big) * 0.3f;
  // Thumbnails in rows: as many columns as make them largest, a caption under each.
  ImFont* cap = ctx.fonts.big;
  const float gap = sz(cap) * 0.6f, caption_h = sz(cap) * 2.3f;
  const float area_h = at.y + size.y - y;
  float side = 0;
  int cols = heads;
  for (int c = 1; c <= heads; ++c) {
    const int rows = (heads + c - 1) / c;
    const float s = std::min(size.x / c - gap, area_h / rows - caption_h - gap);
    if (s > side) side = s, cols = c;
  }
  side = std::max(side, 8.0f);
  // Captions too long for a small thumbnail use the UI font.
  if (side < text_w(cap, "previous word")) cap = ctx.fonts.ui;
  nlohmann::json labels = nlohmann::json::array();
  for (int h = 0; h < heads; ++h) {
    const float x = at.x + (h % cols) * (side + gap);
    const float ty = y + (h / cols) * (side + caption_h + gap);
    std::shared_ptr<const Matrix> w = t.head_weights(layer, h);
    const HeadBehaviour b = head_behaviour(sums[h], n);
    const std::string words = side >= text_w(cap, "rests on the first") ? head_behaviour_words(b)
                                                                        : head_behaviour_short(b);
    draw_heat(ctx, "real_head", *w, ImVec2(x, ty), side,
              {{"layer", layer}, {"head", h}, {"label", head_behaviour_words(b)}});
    wrapped(cap, ImVec2(x, ty + side + 2), side + gap * 0.5f, colors.text,
            std::to_string(h) + ": " + words);
    if (ctx.layout) labels.push_back(head_behaviour_words(b));
  }
  if (ctx.layout) {
    nlohmann::json b = box(ctx, "real_heads", at, size);
    b["model"] = model_title(real.info);
    b["layer"] = layer;
    b["heads"] = heads;
    b["labels"] = labels;
    ctx.layout->push_back(b);
  }
}

void draw_real_positions(LessonPictureContext& ctx, ImVec2 at, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImFont* lf = ctx.fonts.lesson;
  if (panel_missing(ctx, at, size.x)) return;
  const LessonRealShown& real = *ctx.real;
  const AttentionTrace& t = *real.trace;
  const std::string name = model_title(real.info);
  std::string scheme = position_scheme_words(real.positions, name);
  if (scheme.empty()) scheme = name + " does not say how it encodes positions.";
  float y = at.y;
  y += fitted_line(ctx, ImVec2(at.x, y), size.x, colors.accent, "A real model: " + name);
  y += wrapped(ctx.fonts.big, ImVec2(at.x, y), size.x, colors.text, scheme);
  const HeadRef head = strongest_previous_token_head(*real.summaries);
  if (head.layer < 0) return;
  // Its strongest previous-token head: when it is one, it looks at the word before in either
  // order, which only a model that knows the positions can do.
  const float score = (*real.summaries)[head.layer][head.head].previous_token;
  char which[160];
  if (score >= kHeadBehaviourMass)
    std::snprintf(which, sizeof which,
                  "layer %d, head %d: in both orders each word looks at the word before it",
                  head.layer, head.head);
  else
    std::snprintf(which, sizeof which, "layer %d, head %d: its previous-word score is only %s",
                  head.layer, head.head, number(score).c_str());
  y += sz(ctx.fonts.big) * 0.3f;
  y += wrapped(ctx.fonts.big, ImVec2(at.x, y), size.x, colors.text_dim, which);
  const AttentionTrace* traces[] = {&t, real.reversed};
  const char* titles[] = {"the sentence", "reversed"};
  const float gap = sz(lf);
  const float title_h = sz(ctx.fonts.big) * 1.2f;
  const float side = std::max(8.0f, std::min((size.x - gap) / 2, at.y + size.y - y - title_h));
  for (int k = 0; k < 2; ++k) {
    const float x = at.x + k * (side + gap);
    text(ctx.fonts.big, ImVec2(x, y), colors.accent, titles[k]);
    const AttentionTrace* tr = traces[k];
    if (!tr || tr->layers() <= head.layer || tr->heads() <= head.head || tr->tokens.empty()) {
      text(ctx.fonts.big, ImVec2(x, y + title_h), colors.text_dim, "computing\xE2\x80\xA6");
      continue;
    }
    std::shared_ptr<const Matrix> w = tr->head_weights(head.layer, head.head);
    draw_heat(ctx, k == 0 ? "real_order" : "real_reversed", *w, ImVec2(x, y + title_h), side,
              {{"layer", head.layer}, {"head", head.head}, {"text", tr->text}});
  }
  if (ctx.layout) {
    nlohmann::json b = box(ctx, "real_positions", at, size);
    b["model"] = name;
    b["scheme"] = scheme;
    b["layer"] = head.layer;
    b["head"] = head.head;
    ctx.layout->push_back(b);
  }
}

}  // namespace attnscope
