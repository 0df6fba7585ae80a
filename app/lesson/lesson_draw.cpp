#include "app/lesson/lesson_draw.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include <cfloat>
#include <cstring>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope::lesson {

namespace {
constexpr const char* kMinusInf = "\xE2\x88\x92\xE2\x88\x9E";

// Text ImGui's atlas cannot shape (any word beyond ASCII: Arabic, Devanagari, CJK, emoji) goes
// through the text layer, in the family of the lesson font asked for.
TextOptions shaped_in(const ImFont* font) {
  TextOptions o;
  o.font = std::strstr(font->GetDebugName(), "Mono") ? FontKind::kMono : FontKind::kSans;
  return o;
}

}  // namespace

ImU32 with_alpha(ImU32 color, int alpha) {
  return (color & 0x00FFFFFF) | (static_cast<ImU32>(alpha) << 24);
}

float sz(const ImFont* font) {
  return font->FontSize * ImGui::GetIO().FontGlobalScale;
}

float text_w(ImFont* font, const std::string& s) {
  if (!plain_ascii(s)) return text_layer().measure(s, sz(font), shaped_in(font)).x;
  return font->CalcTextSizeA(sz(font), FLT_MAX, 0.0f, s.c_str()).x;
}

void text(ImFont* font, ImVec2 at, ImU32 color, const std::string& s) {
  if (!plain_ascii(s)) {
    text_layer().draw(ImGui::GetWindowDrawList(), at, s, sz(font), color, shaped_in(font));
    return;
  }
  ImGui::GetWindowDrawList()->AddText(font, sz(font), at, color, s.c_str());
}

// Text centred in a box.
void text_centered(ImFont* font, ImVec2 a, ImVec2 b, ImU32 color, const std::string& s) {
  text_centered(font, sz(font), a, b, color, s);
}

void text_centered(ImFont* font, float size, ImVec2 a, ImVec2 b, ImU32 color,
                   const std::string& s) {
  if (!plain_ascii(s)) {
    const ImVec2 ts = text_layer().measure(s, size, shaped_in(font));
    text_layer().draw(ImGui::GetWindowDrawList(),
                      ImVec2((a.x + b.x - ts.x) / 2, (a.y + b.y - ts.y) / 2), s, size, color,
                      shaped_in(font));
    return;
  }
  ImVec2 ts = font->CalcTextSizeA(size, FLT_MAX, 0.0f, s.c_str());
  ImGui::GetWindowDrawList()->AddText(
      font, size, ImVec2((a.x + b.x - ts.x) / 2, (a.y + b.y - ts.y) / 2), color, s.c_str());
}

std::string number(float v, int decimals) {
  if (std::isinf(v)) return v < 0 ? kMinusInf : "\xE2\x88\x9E";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", std::fabs(v) >= 99.5f ? 0 : decimals, v);
  return buf;
}

std::string label(const AttentionTrace& t, int i, int max_chars) {
  return token_label(t, i, max_chars);
}

nlohmann::json box(const LessonPictureContext& ctx, const char* name, ImVec2 a, ImVec2 size) {
  return {{"view", "lesson_picture"},      {"name", name},
          {"x", a.x * ctx.pixel_scale},    {"y", a.y * ctx.pixel_scale},
          {"w", size.x * ctx.pixel_scale}, {"h", size.y * ctx.pixel_scale}};
}

ImVec2 draw_grid(LessonPictureContext& ctx, const Grid& g, ImVec2 at, ImVec2 size) {
  const AttentionTrace& t = *ctx.trace;
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Matrix& m = *g.values;
  const int n = static_cast<int>(m.rows());
  if (n == 0 || m.cols() != n) return ImVec2(0, 0);
  ImFont* lf = ctx.fonts.lesson;
  ImFont* nf = ctx.fonts.lesson_mono;
  float label_w = 0;
  for (int i = 0; i < n; ++i) label_w = std::max(label_w, text_w(lf, label(t, i)));
  label_w += sz(lf) * 0.4f;
  float col_label_h = 0;
  if (g.column_labels) {
    for (int j = 0; j < n; ++j)
      col_label_h = std::max(col_label_h, text_w(ctx.fonts.big, label(t, j)));
    col_label_h += 6;
  }
  const float sum_w = g.row_sums ? text_w(nf, "\xCE\xA3 1.00") + sz(nf) : 0;
  float cell = std::min((size.x - label_w - sum_w) / n, (size.y - col_label_h) / n);
  cell = std::max(cell, 4.0f);
  // Cells may be wider than tall: numbers need the width, the rows need the height.
  const float cell_w = std::min(cell * 3.6f, (size.x - label_w - sum_w) / n);
  const float cell_h =
      g.tall_rows ? std::max(cell, std::min((size.y - col_label_h) / n, sz(lf) * 1.05f)) : cell;
  const ImVec2 origin(at.x + label_w, at.y + col_label_h);
  // Range of the finite, unmasked values.
  float vmin = FLT_MAX, vmax = -FLT_MAX;
  auto is_masked = [&](int i, int j) { return g.masked && std::isinf((*g.masked)(i, j)); };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (!is_masked(i, j) && std::isfinite(m(i, j))) {
        vmin = std::min(vmin, m(i, j));
        vmax = std::max(vmax, m(i, j));
      }
  if (vmin > vmax) vmin = 0, vmax = 1;
  if (vmin >= 0 && vmax <= 1.0001f) vmin = 0;  // weights: 0 is "no attention"
  if (vmax - vmin < 1e-6f) vmax = vmin + 1;
  const int cmap = ctx.app.state.colormap;
  // Numbers in the lesson's large mono font, shrunk just enough for the widest to fit its cell
  // (scores such as "56.6" beside the bars of step 4), so the back row can still read them; below
  // the UI's mono size that smaller font's own glyphs are sharper.
  ImFont* cell_font = nf;
  float number_size = sz(nf);
  // The widest number drawn ("-0.6" is wider than the largest value "5.0").
  std::string widest = number(vmax, g.decimals);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (!is_masked(i, j) && std::isfinite(m(i, j)) &&
          number(m(i, j), g.decimals).size() > widest.size())
        widest = number(m(i, j), g.decimals);
  // Some space between neighbours, so that "13.8" "13.2" do not read as one number.
  const float room = cell_w - sz(nf) * 0.4f;
  if (text_w(nf, widest) > room) {
    number_size = sz(nf) * room / text_w(nf, widest);
    if (number_size < sz(ctx.fonts.mono)) {
      cell_font = ctx.fonts.mono;
      number_size = sz(cell_font);
    }
  }
  const bool numbers =
      g.numbers &&
      cell_font->CalcTextSizeA(number_size, FLT_MAX, 0.0f, widest.c_str()).x <= cell_w - 2 &&
      number_size <= cell_h;
  // Row labels in the largest font whose lines do not overlap.
  ImFont* row_font = cell_h >= sz(lf) * 0.95f             ? lf
                     : cell_h >= sz(ctx.fonts.big) * 0.9f ? ctx.fonts.big
                                                          : ctx.fonts.ui;
  for (int i = 0; i < n; ++i) {
    const float y = origin.y + i * cell_h;
    const bool focused = i == ctx.focus;
    text(row_font, ImVec2(at.x, y + (cell_h - sz(row_font)) / 2),
         focused ? colors.focus : colors.text, label(t, i));
    for (int j = 0; j < n; ++j) {
      ImVec2 a(origin.x + j * cell_w, y), b(a.x + cell_w, y + cell_h);
      if (is_masked(i, j)) {
        dl->AddRectFilled(a, b, with_alpha(colors.text_dim, 50));
        if (numbers) text_centered(cell_font, number_size, a, b, colors.text_dim, g.masked_text);
        continue;
      }
      const float v = m(i, j);
      dl->AddRectFilled(a, b, colormap_color(cmap, v, vmin, vmax));
      if (numbers)
        text_centered(cell_font, number_size, a, b, text_color_on(cmap, v, vmin, vmax),
                      number(v, g.decimals));
    }
    if (g.row_sums) {
      float sum = 0;
      for (int j = 0; j < n; ++j) sum += m(i, j);
      text(nf, ImVec2(origin.x + n * cell_w + sz(nf) * 0.4f, y + (cell_h - sz(nf)) / 2),
           focused ? colors.focus : colors.text_dim, std::string("\xCE\xA3 ").append(number(sum)));
    }
  }
  if (g.column_labels) ImGui::PushFont(ctx.fonts.big);
  if (g.column_labels)
    for (int j = 0; j < n; ++j)
      add_text_vertical(
          dl, ImVec2(origin.x + j * cell_w + (cell_w - sz(ctx.fonts.big)) / 2, origin.y - 4),
          j == ctx.focus ? colors.focus : colors.text_dim, label(t, j).c_str());
  if (g.column_labels) ImGui::PopFont();
  // A click on a row picks the word the lesson follows.
  for (int i = 0; i < n; ++i)
    if (ImGui::IsMouseClicked(0) && !ImGui::IsAnyItemHovered() &&
        ImGui::IsMouseHoveringRect(ImVec2(at.x, origin.y + i * cell_h),
                                   ImVec2(origin.x + n * cell_w, origin.y + (i + 1) * cell_h)))
      ctx.app.state.slots[0].locked_token = i;
  if (ctx.focus >= 0 && ctx.focus < n)
    dl->AddRect(ImVec2(at.x - 4, origin.y + ctx.focus * cell_h),
                ImVec2(origin.x + n * cell_w + 2, origin.y + (ctx.focus + 1) * cell_h),
                colors.focus, 4.0f, 0, 3.0f);
  const ImVec2 used(label_w + n * cell_w + sum_w, col_label_h + n * cell_h);
  if (ctx.layout) {
    nlohmann::json b = box(ctx, g.name, origin, ImVec2(n * cell_w, n * cell_h));
    b["rows"] = n;
    b["cols"] = n;
    b["cell_w"] = cell_w * ctx.pixel_scale;
    b["cell_h"] = cell_h * ctx.pixel_scale;
    b["vmin"] = vmin;
    b["vmax"] = vmax;
    b["numbers"] = numbers;
    b["number_px"] = numbers ? number_size * ctx.pixel_scale : 0.0f;
    nlohmann::json rows = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
      nlohmann::json r = nlohmann::json::array();
      for (int j = 0; j < n; ++j)
        r.push_back(is_masked(i, j) || !std::isfinite(m(i, j)) ? nlohmann::json(nullptr)
                                                               : nlohmann::json(m(i, j)));
      rows.push_back(r);
    }
    b["values"] = rows;
    ctx.layout->push_back(b);
  }
  return used;
}

// A vector as a strip of colored cells (its first `cells` components), negative to positive.
void draw_strip(LessonPictureContext& ctx, const RowVector& v, ImVec2 at, float cell_w,
                float cell_h, int cells) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float a = std::max(1e-6f, v.cwiseAbs().maxCoeff());
  for (int k = 0; k < std::min<int>(cells, static_cast<int>(v.size())); ++k) {
    ImVec2 p(at.x + k * cell_w, at.y);
    dl->AddRectFilled(p, ImVec2(p.x + cell_w - 1, p.y + cell_h),
                      colormap_color(ctx.app.state.colormap, v[k], -a, a));
  }
}

// Bars of one row of weights, one per key, labelled; returns the height used.
float draw_bars(LessonPictureContext& ctx, const char* name, const char* title,
                const std::vector<float>& w, const AttentionTrace& t, ImVec2 at, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* lf = ctx.fonts.lesson;
  ImFont* nf = ctx.fonts.lesson_mono;
  text(lf, at, colors.accent, title);
  const int n = static_cast<int>(w.size());
  if (n == 0) return sz(lf);
  float label_w = 0;
  for (int j = 0; j < n; ++j) label_w = std::max(label_w, text_w(lf, label(t, j)));
  label_w += sz(lf) * 0.4f;
  const float top = at.y + sz(lf) * 1.4f;
  const float row_h = std::min(sz(lf) * 1.25f, (size.y - (top - at.y)) / n);
  const float number_w = text_w(nf, "0.00") + sz(nf) * 0.5f;
  const float bar_max = std::max(10.0f, size.x - label_w - number_w);
  ImFont* row_font = row_h >= sz(lf) ? lf : ctx.fonts.big;
  ImFont* num_font = row_h >= sz(nf) ? nf : ctx.fonts.mono;
  for (int j = 0; j < n; ++j) {
    const float y = top + j * row_h;
    text(row_font, ImVec2(at.x, y + (row_h - sz(row_font)) / 2), colors.text, label(t, j));
    const float len = std::clamp(w[j], 0.0f, 1.0f) * bar_max;
    dl->AddRectFilled(ImVec2(at.x + label_w, y + 3), ImVec2(at.x + label_w + len, y + row_h - 3),
                      colors.accent, 3.0f);
    text(num_font, ImVec2(at.x + label_w + len + 6, y + (row_h - sz(num_font)) / 2), colors.text,
         number(w[j]));
  }
  if (ctx.layout) {
    nlohmann::json b = box(ctx, name, at, ImVec2(size.x, top - at.y + n * row_h));
    b["values"] = w;
    b["row_px"] = row_h * ctx.pixel_scale;
    ctx.layout->push_back(b);
  }
  return top - at.y + n * row_h;
}

std::vector<float> softmax(const Matrix& logits, int row) {
  std::vector<float> out(logits.cols(), 0.0f);
  float mx = -INFINITY;
  for (int j = 0; j < logits.cols(); ++j) mx = std::max(mx, logits(row, j));
  if (!std::isfinite(mx)) return out;
  double sum = 0;
  for (int j = 0; j < logits.cols(); ++j) sum += std::exp(static_cast<double>(logits(row, j) - mx));
  for (int j = 0; j < logits.cols(); ++j)
    out[j] = static_cast<float>(std::exp(static_cast<double>(logits(row, j) - mx)) / sum);
  return out;
}

std::vector<float> row_of(const Matrix& m, int row) {
  std::vector<float> out(m.cols());
  for (int j = 0; j < m.cols(); ++j) out[j] = m(row, j);
  return out;
}

int argmax(const std::vector<float>& v) {
  return v.empty() ? -1 : static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace attnscope::lesson
