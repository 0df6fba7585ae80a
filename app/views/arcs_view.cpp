#include "app/views/arcs_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
ImU32 with_alpha(ImU32 color, float alpha) {
  return (color & 0x00FFFFFF) | (static_cast<ImU32>(std::clamp(alpha, 0.0f, 1.0f) * 255) << 24);
}

bool too_many(ViewContext& ctx, ImVec2 size) {
  if (!ctx.weights || ctx.weights->rows() == 0) {
    ImGui::Dummy(size);
    return true;
  }
  if (ctx.weights->rows() > kMaxArcTokens || ctx.weights->cols() > kMaxArcTokens) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().text_dim),
                       "%d tokens: arcs are drawn for up to %d; see the heatmap",
                       static_cast<int>(ctx.weights->rows()), kMaxArcTokens);
    ImGui::Dummy(ImVec2(size.x, std::max(0.0f, size.y - ImGui::GetTextLineHeightWithSpacing())));
    return true;
  }
  return false;
}

void handle_token_hover(ViewContext& ctx, ImVec2 a, ImVec2 b, int token) {
  if (ImGui::IsMouseHoveringRect(a, b) &&
      ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
    ctx.app.focus.hover(ctx.slot, token);
    if (ImGui::IsMouseClicked(0)) ctx.app.slots[ctx.slot].locked_token = token;
  }
}

// Where a view of this file was drawn, for ctx.layout (in pixels of the saved image).
nlohmann::json layout_box(const ViewContext& ctx, const char* view, ImVec2 origin, ImVec2 size) {
  return {{"view", view},
          {"slot", ctx.slot},
          {"x", origin.x * ctx.pixel_scale},
          {"y", origin.y * ctx.pixel_scale},
          {"w", size.x * ctx.pixel_scale},
          {"h", size.y * ctx.pixel_scale},
          {"focus", ctx.focus}};
}
}  // namespace

void ArcsView::DrawColumns(ViewContext& ctx, ImVec2 size) {
  if (too_many(ctx, size)) return;
  const ThemeColors& colors = theme_colors();
  const Matrix& w = *ctx.weights;
  const Tokens& tokens = ctx.trace->tokens;
  const int n = static_cast<int>(w.rows()), m = static_cast<int>(w.cols());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize();
  const float row_h = std::min(font * 1.45f, (size.y - font * 1.6f) / std::max(n, m));
  const bool labels_fit = row_h >= font * 0.75f;
  float label_w = 0;
  for (int i = 0; i < std::max(n, m) && i < static_cast<int>(tokens.size()); ++i)
    label_w = std::max(label_w, ImGui::CalcTextSize(token_label(tokens[i], 10).c_str()).x);
  const float col_w = std::min(size.x * 0.34f, label_w + font * 0.8f);
  const float xl = origin.x + col_w, xr = origin.x + size.x - col_w;  // line ends
  const float top = origin.y + font * 1.5f;
  dl->AddText(ImVec2(origin.x, origin.y), colors.text_dim, "queries");
  dl->AddText(ImVec2(xr + 6, origin.y), colors.text_dim, "keys");
  WeightRange range = weight_range(w, ctx.app.fixed_range);

  // Faint lines for every query, then the focused query's lines on top, strong.
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < n; ++i) {
      bool focused = i == ctx.focus;
      if ((pass == 1) != focused || (pass == 0 && ctx.focus >= 0 && n > 24)) continue;
      float yi = top + (i + 0.5f) * row_h;
      for (int j = 0; j < m; ++j) {
        float t = w(i, j) / range.vmax;
        if (t < 0.01f) continue;
        float yj = top + (j + 0.5f) * row_h;
        ImU32 c = focused ? with_alpha(colors.arc, 0.15f + 0.85f * t)
                          : with_alpha(colors.arc, 0.06f + 0.3f * t);
        dl->AddLine(ImVec2(xl + 4, yi), ImVec2(xr - 4, yj), c,
                    focused ? 1.0f + 5.0f * t : 1.0f + 1.5f * t);
      }
    }
  for (int i = 0; i < std::max(n, m); ++i) {
    std::string label = i < static_cast<int>(tokens.size()) ? token_label(tokens[i], 10) : "?";
    float y = top + i * row_h;
    ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    bool focused = i == ctx.focus;
    if (labels_fit || focused) {
      if (i < n) {
        ImVec2 p(xl - ts.x - 2, y + (row_h - ts.y) / 2);
        if (focused)
          dl->AddRectFilled(ImVec2(p.x - 3, y), ImVec2(xl + 1, y + row_h),
                            with_alpha(colors.focus, 0.25f), 3.0f);
        dl->AddText(p, focused ? colors.focus : colors.text, label.c_str());
      }
      if (i < m) {
        // Keys are tinted by the focused query's weight on them.
        if (ctx.focus >= 0 && ctx.focus < n) {
          float t = w(ctx.focus, i) / range.vmax;
          dl->AddRectFilled(ImVec2(xr, y + 1), ImVec2(xr + 4 + ts.x + 2, y + row_h - 1),
                            with_alpha(colors.arc, 0.45f * t), 3.0f);
        }
        dl->AddText(ImVec2(xr + 4, y + (row_h - ts.y) / 2), colors.text, label.c_str());
      }
    }
    if (i < n) handle_token_hover(ctx, ImVec2(origin.x, y), ImVec2(xl, y + row_h), i);
    if (i < m) handle_token_hover(ctx, ImVec2(xr, y), ImVec2(origin.x + size.x, y + row_h), i);
  }
  if (ctx.layout) {
    nlohmann::json box = layout_box(ctx, "columns", origin, size);
    box["row_h"] = row_h * ctx.pixel_scale;
    box["top"] = top * ctx.pixel_scale;
    ctx.layout->push_back(std::move(box));
  }
  ImGui::Dummy(size);
}

void ArcsView::DrawArcDiagram(ViewContext& ctx, ImVec2 size) {
  if (too_many(ctx, size)) return;
  const ThemeColors& colors = theme_colors();
  const Matrix& w = *ctx.weights;
  const Tokens& tokens = ctx.trace->tokens;
  const int n = static_cast<int>(w.cols());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize();
  const float baseline = origin.y + size.y - font * 1.6f;
  WeightRange range = weight_range(w, ctx.app.fixed_range);

  // Token slots proportional to label widths, shrunk to fit.
  std::vector<std::string> labels(static_cast<size_t>(n));
  std::vector<float> widths(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    labels[j] = j < static_cast<int>(tokens.size()) ? token_label(tokens[j], 10) : "?";
    widths[j] = ImGui::CalcTextSize(labels[j].c_str()).x + font * 0.8f;
  }
  float total = std::accumulate(widths.begin(), widths.end(), 0.0f);
  float k = total > size.x ? size.x / total : 1.0f;
  float x = origin.x + (size.x - total * k) / 2;
  std::vector<float> centers(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    centers[j] = x + widths[j] * k / 2;
    bool focused = j == ctx.focus;
    ImVec2 ts = ImGui::CalcTextSize(labels[j].c_str());
    bool fits = ts.x <= widths[j] * k;
    if (fits || focused) {
      ImVec2 p(centers[j] - ts.x / 2, baseline + font * 0.25f);
      if (focused)
        dl->AddRectFilled(ImVec2(p.x - 3, p.y - 1), ImVec2(p.x + ts.x + 3, p.y + ts.y + 1),
                          with_alpha(colors.focus, 0.25f), 3.0f);
      dl->AddText(p, focused ? colors.focus : colors.text, labels[j].c_str());
    }
    handle_token_hover(ctx, ImVec2(x, baseline), ImVec2(x + widths[j] * k, origin.y + size.y), j);
    x += widths[j] * k;
  }
  if (ctx.focus >= 0 && ctx.focus < w.rows()) {
    const int f = ctx.focus;
    const float max_h = baseline - origin.y - font * 1.2f;
    // Label the three strongest arcs with their weight.
    std::vector<int> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return w(f, a) > w(f, b); });
    std::vector<ImVec4> placed;  // weight labels drawn so far
    for (int j = 0; j < n; ++j) {
      float t = w(f, j) / range.vmax;
      if (t < 0.005f) continue;
      ImU32 c = with_alpha(colors.arc, 0.25f + 0.75f * t);
      float thickness = 1.0f + 7.0f * t;
      if (j == f) {  // attention to itself: a loop above the token
        dl->AddCircle(ImVec2(centers[j], baseline - font * 0.6f), font * 0.45f, c, 20, thickness);
        continue;
      }
      float dx = std::fabs(centers[j] - centers[f]);
      float hgt = std::min(max_h, dx * 0.55f + font * 0.5f);
      ImVec2 a(centers[f], baseline), b(centers[j], baseline);
      dl->AddBezierCubic(a, ImVec2(a.x, baseline - hgt * 1.33f),
                         ImVec2(b.x, baseline - hgt * 1.33f), b, c, thickness);
      bool top3 = std::find(order.begin(), order.begin() + std::min(3, n), j) !=
                  order.begin() + std::min(3, n);
      if (top3) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.2f", w(f, j));
        ImGui::PushFont(ctx.fonts.mono);
        ImVec2 ts = ImGui::CalcTextSize(buf);
        ImVec2 p((a.x + b.x) / 2 - ts.x / 2, baseline - hgt - ts.y - 2);
        // Skip a label that would overlap one already placed.
        bool clear = true;
        for (const ImVec4& r : placed)
          clear &= p.x + ts.x + 4 < r.x || p.x > r.z + 4 || p.y + ts.y < r.y || p.y > r.w;
        if (clear) {
          dl->AddText(p, colors.text, buf);
          placed.push_back(ImVec4(p.x, p.y, p.x + ts.x, p.y + ts.y));
        }
        ImGui::PopFont();
      }
    }
  } else {
    dl->AddText(ImVec2(origin.x, origin.y), colors.text_dim,
                "hover or click a token to see its arcs");
  }
  if (ctx.layout) ctx.layout->push_back(layout_box(ctx, "arcs", origin, size));
  ImGui::Dummy(size);
}

}  // namespace attnscope
