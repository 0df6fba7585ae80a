#include "app/lesson/lesson_draw.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include <cfloat>
#include <cstring>

#include "app/render/text_layer.h"
#include "app/ui/imgui_compat.h"
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

std::vector<TextBox>* g_record = nullptr;  // the live TextRecord's boxes (UI thread only)
float g_fit = 1.0f;                        // set_type_fit

}  // namespace

TextRecord::TextRecord(bool on) {
  if (on) g_record = &boxes_;
}

TextRecord::~TextRecord() {
  if (g_record == &boxes_) g_record = nullptr;
}

void TextRecord::add(const std::string& s, ImVec2 min, ImVec2 max) {
  if (g_record && !s.empty()) g_record->push_back({s, min, max});
}

nlohmann::json TextRecord::json(float pixel_scale) const {
  nlohmann::json out = nlohmann::json::array();
  for (const TextBox& b : boxes_)
    out.push_back({{"text", b.text},
                   {"x", b.min.x * pixel_scale},
                   {"y", b.min.y * pixel_scale},
                   {"w", (b.max.x - b.min.x) * pixel_scale},
                   {"h", (b.max.y - b.min.y) * pixel_scale}});
  return out;
}

void recorded_item(const std::string& s) {
  TextRecord::add(s, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

ImU32 with_alpha(ImU32 color, int alpha) {
  return (color & 0x00FFFFFF) | (static_cast<ImU32>(alpha) << 24);
}

void set_type_fit(float fit) {
  g_fit = fit;
  ImGui::SetWindowFontScale(fit);
}

float sz(const ImFont* font) {
  return imgui_compat::font_size(font) * ImGui::GetIO().FontGlobalScale * g_fit;
}

namespace {

// A label in runs: plain ASCII words and numbers through ImGui's atlas, the rest (other scripts,
// arrows, "·", "÷√") through the text layer. Whole strings went to the text layer before, and its
// fallback chain drew the digits of "0.21·river" from the colour emoji font (digits are emoji
// keycap bases): grey, spaced. An ASCII run without a letter or digit (a space between two Arabic
// words) stays with its neighbours, so that a right-to-left phrase is shaped whole.
struct Run {
  std::string text;
  bool ascii;
};

std::vector<Run> runs_of(const std::string& s) {
  std::vector<Run> runs;
  for (size_t i = 0; i < s.size();) {
    const bool ascii = static_cast<unsigned char>(s[i]) < 0x80;
    size_t j = i;
    while (j < s.size() && (static_cast<unsigned char>(s[j]) < 0x80) == ascii) ++j;
    runs.push_back({s.substr(i, j - i), ascii});
    i = j;
  }
  for (Run& r : runs)
    if (r.ascii && runs.size() > 1 &&
        std::none_of(r.text.begin(), r.text.end(), [](char c) { return std::isalnum(c); }))
      r.ascii = false;
  std::vector<Run> merged;
  for (Run& r : runs)
    if (!merged.empty() && merged.back().ascii == r.ascii)
      merged.back().text += r.text;
    else
      merged.push_back(std::move(r));
  return merged;
}

float run_w(ImFont* font, float size, const Run& r) {
  if (r.ascii) return font->CalcTextSizeA(size, FLT_MAX, 0.0f, r.text.c_str()).x;
  return text_layer().measure(r.text, size, shaped_in(font)).x;
}

float runs_w(ImFont* font, float size, const std::string& s) {
  if (plain_ascii(s)) return font->CalcTextSizeA(size, FLT_MAX, 0.0f, s.c_str()).x;
  float w = 0;
  for (const Run& r : runs_of(s)) w += run_w(font, size, r);
  return w;
}

void draw_runs(ImFont* font, float size, ImVec2 at, ImU32 color, const std::string& s) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (plain_ascii(s)) {
    dl->AddText(font, size, at, color, s.c_str());
    return;
  }
  for (const Run& r : runs_of(s)) {
    if (r.ascii)
      dl->AddText(font, size, at, color, r.text.c_str());
    else
      text_layer().draw(dl, at, r.text, size, color, shaped_in(font));
    at.x += run_w(font, size, r);
  }
}

}  // namespace

float text_w(ImFont* font, const std::string& s) {
  return runs_w(font, sz(font), s);
}

void text(ImFont* font, ImVec2 at, ImU32 color, const std::string& s) {
  TextRecord::add(s, at, ImVec2(at.x + text_w(font, s), at.y + sz(font)));
  draw_runs(font, sz(font), at, color, s);
}

// Text centred in a box.
void text_centered(ImFont* font, ImVec2 a, ImVec2 b, ImU32 color, const std::string& s) {
  text_centered(font, sz(font), a, b, color, s);
}

void text_centered(ImFont* font, float size, ImVec2 a, ImVec2 b, ImU32 color,
                   const std::string& s) {
  const ImVec2 ts(runs_w(font, size, s), size);
  const ImVec2 p((a.x + b.x - ts.x) / 2, (a.y + b.y - ts.y) / 2);
  TextRecord::add(s, p, ImVec2(p.x + ts.x, p.y + ts.y));
  draw_runs(font, size, p, color, s);
}

void text_vertical(ImFont* font, ImVec2 bottom_left, ImU32 color, const std::string& s) {
  // Token labels, shaped whole when they are not plain ASCII.
  const float w =
      plain_ascii(s) ? text_w(font, s) : text_layer().measure(s, sz(font), shaped_in(font)).x;
  TextRecord::add(s, ImVec2(bottom_left.x, bottom_left.y - w),
                  ImVec2(bottom_left.x + sz(font), bottom_left.y));
  if (!plain_ascii(s)) {
    TextOptions o = shaped_in(font);
    o.vertical = true;
    text_layer().draw(ImGui::GetWindowDrawList(), bottom_left, s, sz(font), color, o);
    return;
  }
  ImGui::PushFont(font);
  add_text_vertical(ImGui::GetWindowDrawList(), bottom_left, color, s.c_str());
  ImGui::PopFont();
}

float wrapped(ImFont* font, ImVec2 at, float width, ImU32 color, const std::string& s) {
  ImGui::SetCursorScreenPos(at);
  ImGui::PushFont(font);
  ImGui::PushTextWrapPos(at.x + width);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(color));
  ImGui::TextWrapped("%s", s.c_str());
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  recorded_item(s);
  return ImGui::GetCursorScreenPos().y - at.y;
}

float wrapped_h(ImFont* font, float width, const std::string& s) {
  ImGui::PushFont(font);
  const float h = ImGui::CalcTextSize(s.c_str(), nullptr, false, width).y;
  ImGui::PopFont();
  return h + ImGui::GetStyle().ItemSpacing.y;
}

std::string number(float v, int decimals) {
  if (std::isinf(v)) return v < 0 ? kMinusInf : "\xE2\x88\x9E";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", std::fabs(v) >= 99.5f ? 0 : decimals, v);
  // A small negative that rounds to zero prints "-0.0": a zero has no sign.
  if (buf[0] == '-' && std::strspn(buf + 1, "0.") == std::strlen(buf + 1)) return buf + 1;
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

namespace {

// Where a grid's parts go in its rectangle: label columns, the cells, the fonts that fit them.
struct GridFit {
  ImFont* row_font = nullptr;
  ImFont* col_font = nullptr;  // null: no column labels
  float label_w = 0, col_label_h = 0, sum_w = 0, cell_w = 0, cell_h = 0;
};

GridFit fit_grid(const LessonPictureContext& ctx, const Grid& g, int n, ImVec2 size,
                 ImFont* row_font, ImFont* col_font) {
  const AttentionTrace& t = *ctx.trace;
  ImFont* lf = ctx.fonts.lesson;
  ImFont* nf = ctx.fonts.lesson_mono;
  GridFit f;
  f.row_font = row_font;
  f.col_font = col_font;
  for (int i = 0; i < n; ++i) f.label_w = std::max(f.label_w, text_w(row_font, label(t, i)));
  f.label_w += sz(row_font) * 0.4f;
  if (col_font) {
    for (int j = 0; j < n; ++j)
      f.col_label_h = std::max(f.col_label_h, text_w(col_font, label(t, j)));
    f.col_label_h += 6;
  }
  f.sum_w = g.row_sums ? text_w(nf, "\xCE\xA3 1.00") + sz(nf) : 0;
  float cell = std::min((size.x - f.label_w - f.sum_w) / n, (size.y - f.col_label_h) / n);
  cell = std::max(cell, 4.0f);
  // Cells may be wider than tall: numbers need the width, the rows need the height.
  f.cell_w = std::max(cell, std::min(cell * 3.6f, (size.x - f.label_w - f.sum_w) / n));
  f.cell_h =
      g.tall_rows ? std::max(cell, std::min((size.y - f.col_label_h) / n, sz(lf) * 1.05f)) : cell;
  return f;
}

}  // namespace

int label_stride(float label_size, float cell) {
  return std::max(1, static_cast<int>(std::ceil(label_size / std::max(cell, 1.0f) - 0.02f)));
}

bool labelled(int i, int focus, int stride) {
  if (stride <= 1 || i == focus) return true;
  // The focused row is always labelled; its neighbours within a stride make room for it.
  if (focus >= 0 && std::abs(i - focus) < stride) return false;
  return i % stride == 0;
}

ImVec2 draw_grid(LessonPictureContext& ctx, const Grid& g, ImVec2 at, ImVec2 size,
                 GridCells* cells) {
  const AttentionTrace& t = *ctx.trace;
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Matrix& m = *g.values;
  const int n = static_cast<int>(m.rows());
  if (n == 0 || m.cols() != n) return ImVec2(0, 0);
  ImFont* lf = ctx.fonts.lesson;
  ImFont* nf = ctx.fonts.lesson_mono;
  ImFont* big = ctx.fonts.big;
  // Labels in the largest fonts whose neighbours do not overlap: a guess in the largest, then the
  // cells again with the fonts the guess allows, until they settle (labels are thinned out by a
  // stride if they never do). Column labels are no larger than the rows': a long vertical label
  // would take the height the rows need.
  GridFit f = fit_grid(ctx, g, n, size, lf, g.column_labels ? big : nullptr);
  for (int pass = 0; pass < 3; ++pass) {
    ImFont* rf = f.cell_h >= sz(lf) * 0.95f ? lf : f.cell_h >= sz(big) * 0.9f ? big : ctx.fonts.ui;
    ImFont* cf = !g.column_labels                            ? nullptr
                 : f.cell_w >= sz(big) && rf != ctx.fonts.ui ? big
                                                             : ctx.fonts.ui;
    if (rf == f.row_font && cf == f.col_font) break;
    f = fit_grid(ctx, g, n, size, rf, cf);
  }
  ImFont* row_font = f.row_font;
  ImFont* col_font = f.col_font;
  const float cell_w = f.cell_w, cell_h = f.cell_h, label_w = f.label_w, sum_w = f.sum_w;
  const float col_label_h = f.col_label_h;
  const int row_stride = label_stride(sz(row_font) * 0.9f, cell_h);
  const int col_stride = col_font ? label_stride(sz(col_font), cell_w) : 1;
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
  if (g.fixed_range) vmin = g.vmin, vmax = g.vmax;
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
  // Short rows shrink it too.
  const float room = cell_w - sz(nf) * 0.4f;
  if (text_w(nf, widest) > room) number_size = sz(nf) * room / text_w(nf, widest);
  number_size = std::min(number_size, cell_h);
  if (number_size < sz(ctx.fonts.mono)) {
    cell_font = ctx.fonts.mono;
    number_size = sz(cell_font);
  }
  const bool numbers =
      g.numbers &&
      cell_font->CalcTextSizeA(number_size, FLT_MAX, 0.0f, widest.c_str()).x <= cell_w - 2 &&
      number_size <= cell_h;
  // The Σ column in the lesson's mono font when the rows are tall enough for it.
  ImFont* sum_font = cell_h >= sz(nf) * 0.95f ? nf : ctx.fonts.mono;
  const int sum_stride = label_stride(sz(sum_font) * 0.9f, cell_h);
  for (int i = 0; i < n; ++i) {
    const float y = origin.y + i * cell_h;
    const bool focused = i == ctx.focus;
    if (labelled(i, ctx.focus, row_stride))
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
    if (g.row_sums && labelled(i, ctx.focus, sum_stride)) {
      float sum = 0;
      for (int j = 0; j < n; ++j) sum += m(i, j);
      text(sum_font, ImVec2(origin.x + n * cell_w + sz(nf) * 0.4f, y + (cell_h - sz(sum_font)) / 2),
           focused ? colors.focus : colors.text_dim, std::string("\xCE\xA3 ").append(number(sum)));
    }
  }
  if (col_font)
    for (int j = 0; j < n; ++j)
      if (labelled(j, ctx.focus, col_stride))
        text_vertical(col_font,
                      ImVec2(origin.x + j * cell_w + (cell_w - sz(col_font)) / 2, origin.y - 4),
                      j == ctx.focus ? colors.focus : colors.text_dim, label(t, j));
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
  if (cells) *cells = {origin, ImVec2(origin.x + n * cell_w, origin.y + n * cell_h)};
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
    b["column_labels"] = col_font != nullptr;
    b["focus_row"] = ctx.focus;
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

float fitted_line(const LessonPictureContext& ctx, ImVec2 at, float width, ImU32 color,
                  const std::string& s) {
  for (ImFont* f : {ctx.fonts.lesson, ctx.fonts.big})
    if (text_w(f, s) <= width) {
      text(f, at, color, s);
      return sz(f) * 1.3f;
    }
  return wrapped(ctx.fonts.big, at, width, color, s) + sz(ctx.fonts.big) * 0.2f;
}

float fitted_line_h(const LessonPictureContext& ctx, float width, const std::string& s) {
  for (ImFont* f : {ctx.fonts.lesson, ctx.fonts.big})
    if (text_w(f, s) <= width) return sz(f) * 1.3f;
  return wrapped_h(ctx.fonts.big, width, s) + sz(ctx.fonts.big) * 0.2f;
}

// Bars of one row of weights, one per key, labelled; returns the height used.
float draw_bars(LessonPictureContext& ctx, const char* name, const char* title,
                const std::vector<float>& w, const AttentionTrace& t, ImVec2 at, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* lf = ctx.fonts.lesson;
  ImFont* nf = ctx.fonts.lesson_mono;
  const float title_h = fitted_line(ctx, at, size.x, colors.accent, title);
  const int n = static_cast<int>(w.size());
  if (n == 0) return title_h;
  const float top = at.y + title_h;
  const float row_h = std::min(sz(lf) * 1.25f, (size.y - title_h) / n);
  // Labels and numbers in the largest fonts the rows hold; every k-th when even the smallest is
  // taller than a row.
  ImFont* row_font = row_h >= sz(lf)              ? lf
                     : row_h >= sz(ctx.fonts.big) ? ctx.fonts.big
                                                  : ctx.fonts.ui;
  ImFont* num_font = row_h >= sz(nf) ? nf : ctx.fonts.mono;
  const int stride = label_stride(std::max(sz(row_font), sz(num_font)), row_h);
  float label_w = 0;
  for (int j = 0; j < n; ++j) label_w = std::max(label_w, text_w(row_font, label(t, j)));
  label_w += sz(row_font) * 0.4f;
  const float number_w = text_w(num_font, "0.00") + 6 + sz(num_font) * 0.2f;
  const float bar_max = std::max(10.0f, size.x - label_w - number_w);
  for (int j = 0; j < n; ++j) {
    const float y = top + j * row_h;
    const bool shown = labelled(j, ctx.focus, stride);
    if (shown)
      text(row_font, ImVec2(at.x, y + (row_h - sz(row_font)) / 2), colors.text, label(t, j));
    const float len = std::clamp(w[j], 0.0f, 1.0f) * bar_max;
    dl->AddRectFilled(ImVec2(at.x + label_w, y + std::min(3.0f, row_h * 0.15f)),
                      ImVec2(at.x + label_w + len, y + row_h - std::min(3.0f, row_h * 0.15f)),
                      colors.accent, 3.0f);
    if (shown)
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
