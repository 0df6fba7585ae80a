#include "app/views/formula_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
// Token labels beside and above the matrices, in the matrices' monospaced type.
const TextOptions kMonoLabel = [] {
  TextOptions o;
  o.font = FontKind::kMono;
  return o;
}();

// A matrix entry as the formula shows it: 3 significant digits or so, and ±∞ for masked scores.
void format_entry(float v, char (&buf)[16]) {
  if (std::isinf(v))
    std::snprintf(buf, sizeof buf, "%s", v < 0 ? "\xE2\x88\x92\xE2\x88\x9E" : "\xE2\x88\x9E");
  else
    std::snprintf(buf, sizeof buf,
                  std::fabs(v) >= 99.5f   ? "%.0f"
                  : std::fabs(v) >= 9.95f ? "%.1f"
                                          : "%.2f",
                  v);
}
// One titled matrix as a grid of numbers; returns its width. Row `focus` is highlighted; entries
// that are −inf (masked) show as "−∞".
float draw_matrix(ViewContext& ctx, ImVec2 at, const char* title, const Matrix& m,
                  const Tokens& tokens, bool row_labels, int max_cols = kFormulaMaxColumns) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGui::PushFont(ctx.fonts.mono);
  const float font = ImGui::GetFontSize();
  const int rows = static_cast<int>(m.rows());
  const int cols = std::min(static_cast<int>(m.cols()), max_cols);
  const bool cut = m.cols() > max_cols;
  const float cell_w = ImGui::CalcTextSize("-0.00").x + font * 0.5f, row_h = font * 1.3f;
  float label_w = 0;
  std::vector<std::string> labels;
  if (row_labels)
    for (int i = 0; i < rows; ++i) {
      labels.push_back(i < static_cast<int>(tokens.size()) ? token_label(*ctx.trace, i, 8) : "?");
      label_w =
          std::max(label_w, text_layer().measure(labels.back(), font, kMonoLabel).x + font * 0.5f);
    }
  const float x0 = at.x + label_w, y0 = at.y + font * 1.4f;
  const float width = label_w + cell_w * cols + (cut ? cell_w * 0.6f : 0);
  ImGui::PopFont();
  dl->AddText(ImVec2(x0, at.y), colors.accent, title);
  ImGui::PushFont(ctx.fonts.mono);
  for (int i = 0; i < rows; ++i) {
    float y = y0 + i * row_h;
    if (i == ctx.focus)
      dl->AddRectFilled(ImVec2(at.x, y), ImVec2(at.x + width, y + row_h),
                        (colors.focus & 0x00FFFFFF) | 0x50000000, 3.0f);
    if (row_labels)
      text_layer().draw(dl, ImVec2(at.x, y + (row_h - font) / 2), labels[i], font,
                        i == ctx.focus ? colors.focus : colors.text_dim, kMonoLabel);
    for (int j = 0; j < cols; ++j) {
      char buf[16];
      format_entry(m(i, j), buf);
      ImVec2 ts = ImGui::CalcTextSize(buf);
      dl->AddText(ImVec2(x0 + j * cell_w + cell_w - ts.x - font * 0.25f, y + (row_h - font) / 2),
                  colors.text, buf);
    }
    if (cut)
      dl->AddText(ImVec2(x0 + cols * cell_w + 2, y + (row_h - font) / 2), colors.text_dim,
                  "\xE2\x80\xA6");
  }
  // Brackets around the numbers.
  float bx0 = x0 - 2, bx1 = x0 + cols * cell_w + (cut ? cell_w * 0.6f : 0) + 2,
        by1 = y0 + rows * row_h;
  for (float bx : {bx0, bx1}) {
    float d = bx == bx0 ? 4.0f : -4.0f;
    dl->AddLine(ImVec2(bx, y0), ImVec2(bx, by1), colors.text_dim, 1.5f);
    dl->AddLine(ImVec2(bx, y0), ImVec2(bx + d, y0), colors.text_dim, 1.5f);
    dl->AddLine(ImVec2(bx, by1), ImVec2(bx + d, by1), colors.text_dim, 1.5f);
  }
  ImGui::PopFont();
  return width;
}
// The focused query's row through every step, one column per key: q·kⱼ, ÷√d_k, softmax; then
// its output weights·V. Returns the width used.
float draw_focus_table(ViewContext& ctx, ImVec2 at, int i, const HeadSteps& s) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int n = static_cast<int>(s.weights.cols());
  const int d = std::min(static_cast<int>(s.output.cols()), kFormulaMaxColumns);
  const float title_font = ImGui::GetFontSize();
  std::string who = token_label(*ctx.trace, static_cast<std::size_t>(i), 12);
  std::string title = "the row of \"" + who + "\", key by key";
  text_layer().draw(dl, at, title, title_font, colors.accent);
  ImGui::PushFont(ctx.fonts.mono);
  const float font = ImGui::GetFontSize(), row_h = font * 1.35f;
  const char* names[] = {"q\xC2\xB7k\xE2\xB1\xBC",
                         "\xC3\xB7\xE2\x88\x9A"
                         "d\xE2\x82\x96",
                         "softmax", "output"};
  float name_w = 0;
  for (const char* nm : names) name_w = std::max(name_w, ImGui::CalcTextSize(nm).x);
  name_w += font;
  const float cell_w = ImGui::CalcTextSize("-00.00").x + font * 0.5f;
  const float x0 = at.x + name_w, y0 = at.y + title_font * 1.4f;
  // Key labels as column headers.
  for (int j = 0; j < n; ++j) {
    std::string label = token_label(*ctx.trace, static_cast<std::size_t>(j), 5);
    ImVec2 ts = text_layer().measure(label, font, kMonoLabel);
    text_layer().draw(dl, ImVec2(x0 + j * cell_w + (cell_w - ts.x) / 2, y0), label, font,
                      colors.text_dim, kMonoLabel);
  }
  const Matrix* rows[] = {&s.scores, &s.scaled, &s.weights};
  for (int r = 0; r < 3; ++r) {
    float y = y0 + (r + 1) * row_h;
    if (r == 2)
      dl->AddRectFilled(ImVec2(at.x, y), ImVec2(x0 + n * cell_w, y + row_h),
                        (colors.focus & 0x00FFFFFF) | 0x50000000, 3.0f);
    dl->AddText(ImVec2(at.x, y + (row_h - font) / 2), colors.text, names[r]);
    for (int j = 0; j < n; ++j) {
      char buf[16];
      format_entry((*rows[r])(i, j), buf);
      ImVec2 ts = ImGui::CalcTextSize(buf);
      dl->AddText(ImVec2(x0 + j * cell_w + cell_w - ts.x - font * 0.3f, y + (row_h - font) / 2),
                  colors.text, buf);
    }
  }
  // Output: the weighted sum of the value vectors (its first components).
  float y = y0 + 4 * row_h + font * 0.3f;
  dl->AddText(ImVec2(at.x, y), colors.text, names[3]);
  std::string sum = "= \xCE\xA3\xE2\xB1\xBC weight\xE2\xB1\xBC\xC2\xB7v\xE2\xB1\xBC = [";
  char buf[16];
  for (int k = 0; k < d; ++k) {
    std::snprintf(buf, sizeof buf, "%s%.2f", k ? "  " : "", s.output(i, k));
    sum += buf;
  }
  sum += s.output.cols() > d ? "  \xE2\x80\xA6]" : "]";
  dl->AddText(ImVec2(x0, y), colors.text, sum.c_str());
  float width = std::max(name_w + n * cell_w, name_w + ImGui::CalcTextSize(sum.c_str()).x);
  ImGui::PopFont();
  return width;
}
}  // namespace

void FormulaView::Draw(ViewContext& ctx) {
  const ThemeColors& colors = theme_colors();
  const auto dim = ImGui::ColorConvertU32ToFloat4(colors.text_dim);
  if (!ctx.trace) return;
  const int n = static_cast<int>(ctx.trace->tokens.size());
  if (n == 0) {
    ImGui::TextColored(dim, "Type a sentence to see the formula.");
    return;
  }
  // steps[layer * heads + head] (core/trace/trace.h)
  const int heads = std::max(1, ctx.trace->heads());
  const int layer = std::clamp(ctx.app.layer, 0, std::max(0, ctx.trace->layers() - 1));
  const int head = std::clamp(ctx.app.head, 0, heads - 1);
  const size_t index = static_cast<size_t>(layer * heads + head);
  const HeadSteps* found = index < ctx.trace->steps.size() ? &ctx.trace->steps[index] : nullptr;
  // A model's full steps match its tokens: [n x d] for Q, K, V, output; [n x n] for the rest.
  const bool full = found && found->scores.rows() == n && found->scores.cols() == n &&
                    found->scaled.rows() == n && found->scaled.cols() == n &&
                    found->weights.rows() == n && found->weights.cols() == n &&
                    found->q.rows() == n && found->k.rows() == n && found->output.rows() == n;
  // The matrices when they fit; at any other length (or without the steps) the query's row.
  if (!full || n > kFormulaMaxTokens || show_row) {
    if (full && n <= kFormulaMaxTokens) ImGui::Checkbox("key-by-key table", &show_row);
    draw_query_row(ctx, row_state, layer, head);
    return;
  }
  const HeadSteps& s = *found;
  const int d_k = static_cast<int>(s.k.cols());
  ImGui::PushFont(ctx.fonts.big);
  ImGui::Text(
      "Attention(Q, K, V) = softmax(Q\xC2\xB7K\xE1\xB5\x80 / \xE2\x88\x9A"
      "d\xE2\x82\x96) \xC2\xB7 V");
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextColored(dim,
                     "  d\xE2\x82\x96 = %d, \xE2\x88\x9A"
                     "d\xE2\x82\x96 = %.2f   (sentence %d, layer %d, head %d)",
                     d_k, std::sqrt(static_cast<float>(d_k)), ctx.slot + 1, layer, head);
  // Decoders: Q and K are the rotated (RoPE) vectors actually multiplied; the scale may not be
  // 1/√d_k (Gemma's query_pre_attn_scalar); a KV head may serve several query heads.
  const bool real_scale = s.scale > 0 && std::abs(s.scale * std::sqrt(float(d_k)) - 1.0f) > 1e-6f;
  if (s.kv_head >= 0)
    ImGui::TextColored(dim,
                       "Q, K after rotary embedding; K and V of KV head %d (shared); scale %.4f%s",
                       s.kv_head, s.scale > 0 ? s.scale : 1.0f / std::sqrt(float(d_k)),
                       s.softcap > 0 ? ", then softcap" : "");

  struct Step {
    const char* title;
    const Matrix* m;
    const char* op;  // shown before this matrix
  };
  char qk_title[32];
  if (real_scale)
    std::snprintf(qk_title, sizeof qk_title, "Q\xC2\xB7K\xE1\xB5\x80 \xC3\x97 %.3g", s.scale);
  else
    std::snprintf(qk_title, sizeof qk_title, "Q\xC2\xB7K\xE1\xB5\x80 / \xE2\x88\x9A%d", d_k);
  const Step steps[] = {{"Q", &s.q, ""},
                        {"K", &s.k, ""},
                        {"Q\xC2\xB7K\xE1\xB5\x80", &s.scores, "\xE2\x86\x92"},
                        {qk_title, &s.scaled, "\xE2\x86\x92"},
                        {"softmax = weights", &s.weights, "\xE2\x86\x92"},
                        {"weights\xC2\xB7V", &s.output, "\xE2\x86\x92"}};
  const int focus = ctx.focus >= 0 && ctx.focus < n ? ctx.focus : -1;
  const float font = ImGui::GetFontSize();
  if (focus >= 0) {
    ImGui::SameLine();
    ImGui::Checkbox("every row", &show_all);
    ImGui::SameLine();
    ImGui::Checkbox("key-by-key table", &show_row);
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 start = ImGui::GetCursorScreenPos();
  if (focus >= 0 && !show_all) {
    // Compact: Q and K (their first columns), then the focused row through every step.
    float x = start.x;
    x += draw_matrix(ctx, ImVec2(x, start.y), "Q", s.q, ctx.trace->tokens, true, 3) + font;
    x += draw_matrix(ctx, ImVec2(x, start.y), "K", s.k, ctx.trace->tokens, false, 3) + font * 0.6f;
    dl->AddText(ImVec2(x, start.y + font * 3.5f), colors.text_dim, "\xE2\x86\x92");
    x += font * 1.6f;
    x += draw_focus_table(ctx, ImVec2(x, start.y), focus, s);
    ImGui::PushFont(ctx.fonts.mono);
    const float h = ImGui::GetFontSize() * (1.4f + 1.3f * n) + font;
    ImGui::PopFont();
    ImGui::SetCursorScreenPos(start);
    ImGui::Dummy(ImVec2(x - start.x, h));
    if (ctx.layout)
      ctx.layout->push_back(
          {{"view", "formula"}, {"slot", ctx.slot}, {"focus", focus}, {"mode", "row"}});
    return;
  }
  const float avail = ImGui::GetContentRegionAvail().x;
  const float gap = font * 2.2f;
  ImGui::PushFont(ctx.fonts.mono);
  const float block_h = ImGui::GetFontSize() * (1.4f + 1.3f * n) + font * 0.6f;
  ImGui::PopFont();
  float x = start.x, y = start.y, max_x = start.x;
  bool first_in_row = true;
  for (const Step& step : steps) {
    if (step.m->rows() != n) continue;  // a model that left a step out
    // Measure, then wrap to the next line when it would not fit.
    ImGui::PushFont(ctx.fonts.mono);
    float cell_w = ImGui::CalcTextSize("-0.00").x + ImGui::GetFontSize() * 0.5f;
    float label_w = 0;
    for (std::size_t t = 0; t < ctx.trace->tokens.size(); ++t)
      label_w = std::max(
          label_w,
          text_layer().measure(token_label(*ctx.trace, t, 8), ImGui::GetFontSize(), kMonoLabel).x);
    ImGui::PopFont();
    float w = label_w + font +
              cell_w * std::min<int>(static_cast<int>(step.m->cols()), kFormulaMaxColumns) + cell_w;
    if (!first_in_row && x + gap + w > start.x + avail) {
      x = start.x;
      y += block_h;
      first_in_row = true;
    }
    if (!first_in_row) {
      if (*step.op)
        dl->AddText(ImVec2(x + gap * 0.3f, y + block_h * 0.45f), colors.text_dim, step.op);
      x += gap;
    }
    x += draw_matrix(ctx, ImVec2(x, y), step.title, *step.m, ctx.trace->tokens, true);
    max_x = std::max(max_x, x);
    first_in_row = false;
  }
  ImGui::SetCursorScreenPos(start);
  ImGui::Dummy(ImVec2(std::max(1.0f, max_x - start.x), y - start.y + block_h));
  if (ctx.layout)
    ctx.layout->push_back({{"view", "formula"}, {"slot", ctx.slot}, {"focus", ctx.focus}});
}

}  // namespace attnscope
