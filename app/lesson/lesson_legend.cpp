#include "app/lesson/lesson_legend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope::lesson {

namespace {

constexpr const char* kMinusInf = "\xE2\x88\x92\xE2\x88\x9E";

// The colorbar's values: both ends, and the middle when the bar is tall enough for three.
std::vector<float> colorbar_ticks(float vmin, float vmax, float h, float font_px) {
  if (h >= font_px * 3.5f) return {vmax, (vmin + vmax) / 2, vmin};
  return {vmax, vmin};
}

}  // namespace

float colorbar_width(const LessonPictureContext& ctx, float vmin, float vmax) {
  ImFont* nf = ctx.fonts.lesson_mono;
  float w = 0;
  for (float v : {vmin, (vmin + vmax) / 2, vmax}) w = std::max(w, text_w(nf, number(v)));
  return sz(nf) * 0.8f + sz(nf) * 0.3f + w;
}

float draw_colorbar(LessonPictureContext& ctx, const char* name, float vmin, float vmax, ImVec2 at,
                    float h) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* nf = ctx.fonts.lesson_mono;
  const float bar_w = sz(nf) * 0.8f, gap = sz(nf) * 0.3f;
  const int cmap = ctx.app.state.colormap;
  constexpr int kSegments = 48;
  for (int k = 0; k < kSegments; ++k) {
    const float v = vmax - (vmax - vmin) * (k + 0.5f) / kSegments;
    dl->AddRectFilled(ImVec2(at.x, at.y + h * k / kSegments),
                      ImVec2(at.x + bar_w, at.y + h * (k + 1) / kSegments),
                      colormap_color(cmap, v, vmin, vmax));
  }
  dl->AddRect(ImVec2(at.x - 1, at.y - 1), ImVec2(at.x + bar_w + 1, at.y + h + 1),
              theme_colors().panel_line);
  nlohmann::json ticks = nlohmann::json::array();
  const std::vector<float> values = colorbar_ticks(vmin, vmax, h, sz(nf));
  for (size_t k = 0; k < values.size(); ++k) {
    // Each value beside its place on the bar, kept inside the bar's height.
    const float f = values.size() == 1 ? 0 : static_cast<float>(k) / (values.size() - 1);
    const float y = std::clamp(at.y + h * f - sz(nf) / 2, at.y, at.y + h - sz(nf));
    const std::string s = number(values[k]);
    text(nf, ImVec2(at.x + bar_w + gap, y), theme_colors().text, s);
    ticks.push_back(s);
  }
  const float w = colorbar_width(ctx, vmin, vmax);
  if (ctx.layout) {
    nlohmann::json b = box(ctx, name, at, ImVec2(w, h));
    b["vmin"] = vmin;
    b["vmax"] = vmax;
    b["ticks"] = ticks;
    ctx.layout->push_back(b);
  }
  return w;
}

MaskedNote masked_note(const AttentionTrace& t, const Matrix& masked, const char* shown_as) {
  MaskedNote note;
  const int n = static_cast<int>(std::min<Eigen::Index>(masked.rows(), t.tokens.size()));
  const bool exclude_self = t.model.options.value("mask_self", false);
  std::vector<bool> unknown(n, false);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n && j < masked.cols(); ++j) {
      if (!(std::isinf(masked(i, j)) && masked(i, j) < 0)) continue;
      if (i == j && exclude_self)
        note.self = true;
      else if (t.tokens[j].unknown)
        unknown[j] = true;
      else
        note.other = true;
    }
  for (int j = 0; j < n; ++j)
    if (unknown[j]) note.unknown_columns.push_back(j);
  if (!note.self && note.unknown_columns.empty() && !note.other) return note;
  // What the grey cells are, then why each is masked. Words beyond ASCII are counted, not quoted:
  // the note is plain UI text, which would show Arabic or Hindi unshaped.
  std::vector<std::string> why;
  if (note.self) why.push_back("each word with itself, because \"exclude self\" is on");
  if (!note.unknown_columns.empty()) {
    std::string quoted;
    int named = 0, unnamed = 0;
    for (int j : note.unknown_columns) {
      const std::string w = label(t, j, 12);
      if (named < 3 && plain_ascii(w))
        quoted += (named++ ? ", \"" : "\"") + w + "\"";
      else
        ++unnamed;
    }
    const size_t k = note.unknown_columns.size();
    std::string s;
    if (named == 0)
      s = k == 1 ? "the column of a word without a vector"
                 : "the columns of " + std::to_string(k) + " words without a vector";
    else
      s = (k == 1 ? "the column of " : "the columns of ") + quoted +
          (unnamed ? " and " + std::to_string(unnamed) + " more" : "") +
          (k == 1 ? ", a word without a vector" : ", words without a vector");
    why.push_back(s);
  }
  if (note.other) why.push_back("pairs the mask hides");
  std::string reasons;
  for (size_t k = 0; k < why.size(); ++k)
    reasons += (k == 0 ? "" : k + 1 == why.size() ? "; and " : "; ") + why[k];
  if (std::strcmp(shown_as, kMinusInf) == 0)
    note.text = std::string(kMinusInf) +
                " marks a masked pair: the score is set to minus infinity, so softmax gives it "
                "weight 0. Masked here: " +
                reasons + ".";
  else
    note.text =
        std::string("A grey ") + shown_as +
        " is a masked pair (its score was minus infinity): no attention. Masked here: " + reasons +
        ".";
  return note;
}

float draw_masked_note(LessonPictureContext& ctx, const MaskedNote& note, ImVec2 at, float width) {
  if (note.text.empty()) return 0;
  const float h = wrapped(ctx.fonts.big, at, width, theme_colors().text, note.text);
  if (ctx.layout) {
    nlohmann::json b = box(ctx, "masked_note", at, ImVec2(width, h));
    b["text"] = note.text;
    b["self"] = note.self;
    b["unknown_columns"] = note.unknown_columns;
    b["other"] = note.other;
    ctx.layout->push_back(b);
  }
  return h;
}

}  // namespace attnscope::lesson
