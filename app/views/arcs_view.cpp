#include "app/views/arcs_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>

#include <imgui_internal.h>  // ImBezierCubicCalc: which arc a Ctrl+click hit

#include "app/render/text_layer.h"
#include "app/ui/head_palette.h"
#include "app/ui/layout.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

namespace {
ImU32 rgb8(Rgb8 c, float alpha = 1.0f) {
  return IM_COL32(c.r, c.g, c.b, static_cast<int>(std::clamp(alpha, 0.0f, 1.0f) * 255));
}

bool selected(const ViewContext& ctx, int i) {
  const auto& q = ctx.shown->queries;
  return std::binary_search(q.begin(), q.end(), i);
}

bool too_many(ViewContext& ctx, ImVec2 size) {
  if (!ctx.weights || !ctx.shown || ctx.weights->rows() == 0) {
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

// Token j's label in the lines and arcs.
std::string label_of(const ViewContext& ctx, int j) {
  return j < static_cast<int>(ctx.trace->tokens.size()) ? token_label(*ctx.trace, j, 10) : "?";
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

const std::vector<Matrix>& ArcsView::OverlayWeights(const ViewContext& ctx) {
  ShownOptions per_head = ctx.app.shown;
  per_head.aggregate.clear();
  if (ctx.trace_ref != overlay_trace_ || ctx.app.layer != overlay_layer_ ||
      !(per_head == overlay_options_)) {
    overlay_trace_ = ctx.trace_ref;
    overlay_layer_ = ctx.app.layer;
    overlay_options_ = per_head;
    overlay_weights_.clear();
    if (ctx.app.layer < ctx.trace->layers())
      for (int h = 0; h < ctx.trace->heads(); ++h)
        overlay_weights_.push_back(
            shown_weights(*ctx.trace, ctx.app.layer, h, per_head, nullptr, /*cache_head=*/false));
  }
  return overlay_weights_;
}

float ArcsView::DrawOverlayControls(ViewContext& ctx, float width) {
  const float y_start = ImGui::GetCursorScreenPos().y;
  const int heads = ctx.trace->heads();
  if (ImGui::Checkbox("overlay heads", &ctx.app.overlay) && ctx.app.overlay &&
      ctx.app.overlay_heads.empty())
    for (int h = 0; h < std::min(heads, static_cast<int>(kHeadPalette.size())); ++h)
      ctx.app.overlay_heads.push_back(h);
  help_tooltip(
      "draw several heads of this layer at once, each in its own colour; click a swatch to show "
      "or hide its head");
  if (ctx.app.overlay) {
    const float font = ImGui::GetFontSize(), sw = font * 1.1f;
    const ImVec2 start = ImGui::GetCursorScreenPos();
    float x = 0;
    for (int h = 0; h < heads; ++h) {
      char id[32], label[16];
      std::snprintf(id, sizeof id, "##swatch%d", h);
      std::snprintf(label, sizeof label, "%d", h);  // heads count from 0, as everywhere
      const float item_w = sw + ImGui::CalcTextSize(label).x + font * 0.6f;
      if (x > 0 && x + item_w > width)
        x = 0, ImGui::SetCursorScreenPos(ImVec2(start.x, ImGui::GetCursorScreenPos().y));
      else if (x > 0)
        ImGui::SameLine(0, 0),
            ImGui::SetCursorScreenPos(ImVec2(start.x + x, ImGui::GetCursorScreenPos().y));
      bool on = std::binary_search(ctx.app.overlay_heads.begin(), ctx.app.overlay_heads.end(), h);
      if (color_swatch(id, rgb8(head_color(h)), on, sw)) {
        if (on)
          ctx.app.overlay_heads.insert(
              std::lower_bound(ctx.app.overlay_heads.begin(), ctx.app.overlay_heads.end(), h), h);
        else
          ctx.app.overlay_heads.erase(
              std::find(ctx.app.overlay_heads.begin(), ctx.app.overlay_heads.end(), h));
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("head %d: click to %s", h, on ? "hide" : "show");
      ImGui::SameLine(0, font * 0.15f);
      ImGui::TextUnformatted(label);
      x += item_w;
    }
    if (heads > static_cast<int>(kHeadPalette.size()))
      text_dim("colours repeat after %d heads", static_cast<int>(kHeadPalette.size()));
  }
  return ImGui::GetCursorScreenPos().y - y_start;
}

void ArcsView::DrawOverlayLines(ViewContext& ctx, ImVec2 left, ImVec2 right, float row_h,
                                nlohmann::json& drawn) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const std::vector<Matrix>& heads = OverlayWeights(ctx);
  const float font = ImGui::GetFontSize();
  // The queries whose lines are drawn: the selection, the focused one, or all of them (faint).
  std::vector<int> queries = ctx.shown->queries;
  if (queries.empty() && ctx.focus >= 0) queries.push_back(ctx.focus);
  const bool all = queries.empty();
  if (all)
    for (int i = 0; i < ctx.weights->rows(); ++i) queries.push_back(i);
  auto y_of = [&](float top, int i) { return top + (i + 0.5f) * row_h; };
  // Each head's lines, weights relative to the row's largest, faint first...
  for (int h : ctx.app.overlay_heads) {
    if (h >= static_cast<int>(heads.size())) continue;
    const Matrix& w = heads[h];
    for (int i : queries) {
      if (i >= w.rows()) continue;
      const float row_max = std::max(w.row(i).maxCoeff(), 1e-12f);
      for (int j = 0; j < w.cols(); ++j) {
        const float t = w(i, j) / row_max;
        if (t < 0.05f) continue;
        dl->AddLine(ImVec2(left.x, y_of(left.y, i)), ImVec2(right.x, y_of(right.y, j)),
                    rgb8(head_color(h), all ? 0.05f + 0.35f * t : 0.12f + 0.5f * t),
                    ImGui::GetFontSize() / 15.0f * (1.0f + 2.0f * t));
      }
    }
  }
  if (all) return;
  // ...then each head's strongest key per query, opaque and thick: the colour a reader matches
  // to the swatch.
  for (int h : ctx.app.overlay_heads) {
    if (h >= static_cast<int>(heads.size())) continue;
    const Matrix& w = heads[h];
    for (int i : queries) {
      if (i >= w.rows()) continue;
      Eigen::Index j = 0;
      w.row(i).maxCoeff(&j);
      const ImVec2 a(left.x, y_of(left.y, i)), b(right.x, y_of(right.y, static_cast<int>(j)));
      const Rgb8 c = head_color(h);
      dl->AddLine(a, b, rgb8(c), std::max(3.0f, font * 0.28f));
      if (ctx.layout)
        drawn.push_back({{"head", h},
                         {"query", i},
                         {"key", j},
                         {"weight", w(i, j)},
                         {"x0", a.x * ctx.pixel_scale},
                         {"y0", a.y * ctx.pixel_scale},
                         {"x1", b.x * ctx.pixel_scale},
                         {"y1", b.y * ctx.pixel_scale},
                         {"color", {c.r, c.g, c.b}}});
    }
  }
}

void ArcsView::DrawColumns(ViewContext& ctx, ImVec2 size) {
  // A child of its own: the overlay controls lay out from its top, whatever sits beside it.
  ImGui::BeginChild("##columns", size, false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (!too_many(ctx, size)) {
    const float font = ImGui::GetFontSize();
    const float controls_h = DrawOverlayControls(ctx, size.x);
    const ImVec2 room(size.x, std::max(size.y - controls_h, font * 3));
    // Rows never get smaller than a readable label: a long text scrolls instead of fanning out.
    const int rows = static_cast<int>(std::max(ctx.weights->rows(), ctx.weights->cols()));
    const float content_h = std::max(room.y, rows * font * kMinLabel * 1.08f + font * 1.6f);
    const bool scrolls = content_h > room.y + 0.5f;
    ImGui::BeginChild("##lines", room, false, scrolls ? 0 : ImGuiWindowFlags_NoScrollbar);
    const float bar = scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f;
    DrawColumnLines(ctx, ImVec2(room.x - bar, content_h));
    ImGui::EndChild();
  }
  ImGui::EndChild();
}

void ArcsView::DrawColumnLines(ViewContext& ctx, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  const Matrix& w = *ctx.weights;
  const int n = static_cast<int>(w.rows()), m = static_cast<int>(w.cols());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize();
  const float row_h = std::min(font * 1.45f, (size.y - font * 1.6f) / std::max(n, m));
  // Labels at the font's size while rows allow, never below kMinLabel of it; smaller rows label
  // every k-th token, and always the hovered, locked and selected ones.
  const float label_size = std::clamp(row_h * 0.92f, font * kMinLabel, font);
  const int every = std::max(1, static_cast<int>(std::ceil(label_size * 1.04f / row_h - 1e-4f)));
  std::vector<int> always = ctx.shown->queries;
  if (ctx.focus >= 0) always.push_back(ctx.focus);
  if (const int locked = ctx.app.slots[ctx.slot].locked_token; locked >= 0)
    always.push_back(locked);
  const std::vector<int> labelled =
      thinned_labels(0, std::max(n, m) - 1, every, always, row_h, label_size * 1.04f);
  float label_w = 0;
  for (int i : labelled)
    label_w = std::max(label_w, text_layer().measure(label_of(ctx, i), label_size).x);
  const float col_w = std::min(size.x * 0.34f, label_w + font * 0.8f);
  const float stroke = font / 15.0f;  // strokes follow the presentation scale
  const float xl = origin.x + col_w, xr = origin.x + size.x - col_w;  // line ends
  const float top = origin.y + font * 1.5f;
  dl->AddText(ImVec2(origin.x, origin.y), colors.text_dim, "queries");
  dl->AddText(ImVec2(xr + 6, origin.y), colors.text_dim, "keys");
  const int top_k = shown_top_k(ctx.app.top_k, m);
  if (top_k < m && !ctx.app.overlay) {  // say that lines were left out, between the headers
    char note[24];
    std::snprintf(note, sizeof note, "top %d", top_k);
    const float nw = ImGui::CalcTextSize(note).x;
    if (xr - xl > nw + font)
      dl->AddText(ImVec2((xl + xr - nw) / 2, origin.y), colors.text_dim, note);
  }
  const ColorScale& range = ctx.shown->scale;
  const float* row = ctx.shown->focus_row(ctx.focus);
  nlohmann::json overlay_json = nlohmann::json::array();
  if (ctx.app.overlay)
    DrawOverlayLines(ctx, ImVec2(xl + 4, top), ImVec2(xr - 4, top), row_h, overlay_json);

  // Faint lines for every query, then the focused (or selected) queries' lines on top, strong.
  for (int pass = 0; pass < 2 && !ctx.app.overlay; ++pass)
    for (int i = 0; i < n; ++i) {
      bool focused = i == ctx.focus || selected(ctx, i);
      if ((pass == 1) != focused || (pass == 0 && ctx.focus >= 0 && n > 24)) continue;
      float yi = top + (i + 0.5f) * row_h;
      const float keep = top_k_threshold(w, i, top_k);  // each query's top-k keys only
      for (int j = 0; j < m; ++j) {
        float t = w(i, j) / range.vmax;
        if (t < 0.01f || w(i, j) < keep) continue;
        float yj = top + (j + 0.5f) * row_h;
        ImU32 c = focused ? with_alpha(colors.arc, 0.15f + 0.85f * t)
                          : with_alpha(colors.arc, 0.06f + 0.3f * t);
        dl->AddLine(ImVec2(xl + 4, yi), ImVec2(xr - 4, yj), c,
                    stroke * (focused ? 1.0f + 5.0f * t : 1.0f + 1.5f * t));
      }
    }
  nlohmann::json labels_json = nlohmann::json::array();
  const auto record = [&](int i, const std::string& label, const DrawnText& drawn,
                          const char* side) {
    if (!ctx.layout) return;
    labels_json.push_back(label_json(i, label, drawn, ctx.pixel_scale));
    labels_json.back()["side"] = side;
  };
  TextOptions cut;
  cut.max_width = col_w - font * 0.5f;  // a longer label ends in "…"
  for (int i : labelled) {
    const std::string label = label_of(ctx, i);
    const float y = top + i * row_h, cy = y + row_h / 2;
    const ImVec2 ts = text_layer().measure(label, label_size, cut);
    const bool focused = i == ctx.focus || selected(ctx, i);
    if (i < n) {
      const ImVec2 p(xl - ts.x - 2, cy - ts.y / 2);
      if (focused)
        dl->AddRectFilled(ImVec2(p.x - 3, cy - label_size * 0.55f),
                          ImVec2(xl + 1, cy + label_size * 0.55f), with_alpha(colors.focus, 0.25f),
                          3.0f);
      record(i, label,
             text_layer().draw(dl, p, label, label_size, focused ? colors.focus : colors.text, cut),
             "query");
    }
    if (i < m) {
      // Keys are tinted by the focused query's weight on them (or the selection's combined row).
      if (row && !ctx.app.overlay) {
        const float t = range.position(row[i]);
        dl->AddRectFilled(ImVec2(xr, cy - label_size * 0.55f),
                          ImVec2(xr + 4 + ts.x + 2, cy + label_size * 0.55f),
                          with_alpha(colors.arc, 0.45f * t), 3.0f);
      }
      record(
          i, label,
          text_layer().draw(dl, ImVec2(xr + 4, cy - ts.y / 2), label, label_size, colors.text, cut),
          "key");
    }
  }
  for (int i = 0; i < std::max(n, m); ++i) {
    const float y = top + i * row_h;
    if (i < n) handle_token_hover(ctx, ImVec2(origin.x, y), ImVec2(xl, y + row_h), i);
    if (i < m) handle_token_hover(ctx, ImVec2(xr, y), ImVec2(origin.x + size.x, y + row_h), i);
  }
  if (ctx.layout) {
    nlohmann::json box = layout_box(ctx, "columns", origin, size);
    box["row_h"] = row_h * ctx.pixel_scale;
    box["label_size"] = label_size * ctx.pixel_scale;
    box["label_every"] = every;
    box["top"] = top * ctx.pixel_scale;
    box["overlay"] = ctx.app.overlay;
    box["overlay_heads"] = ctx.app.overlay_heads;
    box["overlay_lines"] = overlay_json;
    box["labels"] = labels_json;
    ctx.layout->push_back(std::move(box));
  }
  ImGui::Dummy(size);
}

std::vector<Arc> choose_arcs(const Matrix& w, const float* row, int from, int top_k, float vmax) {
  const int n = static_cast<int>(w.cols());
  std::vector<Arc> arcs;
  if (row) {
    const float threshold = top_k_threshold(row, n, top_k);
    for (int j = 0; j < n; ++j)
      if (row[j] >= threshold && row[j] / vmax >= 0.005f) arcs.push_back({from, j, row[j]});
  } else {
    for (int i = 0; i < w.rows(); ++i) {
      int best = 0;
      for (int j = 1; j < n; ++j)
        if (w(i, j) > w(i, best)) best = j;
      arcs.push_back({i, best, w(i, best)});
    }
  }
  std::stable_sort(arcs.begin(), arcs.end(),
                   [](const Arc& a, const Arc& b) { return a.weight > b.weight; });
  return arcs;
}

float top_k_threshold(const Matrix& weights, int row, int k) {
  const int n = static_cast<int>(weights.cols());
  if (n == 0 || k <= 0) return 0.0f;
  std::vector<float> r(weights.row(row).data(), weights.row(row).data() + n);
  k = std::min(k, n);
  std::nth_element(r.begin(), r.begin() + (k - 1), r.end(), std::greater<float>());
  return r[static_cast<size_t>(k - 1)];
}

float top_k_threshold(const float* row, int n, int k) {
  if (n == 0 || k <= 0) return 0.0f;
  std::vector<float> r(row, row + n);
  k = std::min(k, n);
  std::nth_element(r.begin(), r.begin() + (k - 1), r.end(), std::greater<float>());
  return r[static_cast<size_t>(k - 1)];
}

bool is_causal(const Matrix& weights) {
  for (int i = 0; i < weights.rows(); ++i)
    for (int j = i + 1; j < weights.cols(); ++j)
      if (weights(i, j) != 0.0f) return false;
  return weights.rows() > 1;
}

void ArcsView::DrawArcDiagram(ViewContext& ctx, ImVec2 size) {
  if (too_many(ctx, size)) return;
  const ThemeColors& colors = theme_colors();
  const Matrix& w = *ctx.weights;
  const int n = static_cast<int>(w.rows());
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize();
  // What to show without a focused token: a decoder's last token (what it predicts from), else
  // the strongest key of every query.
  // Several selected queries: their combined row, drawn from the middle of the selection.
  const bool selection = !ctx.shown->queries.empty();
  int f = !selection && ctx.focus >= 0 && ctx.focus < n ? ctx.focus : -1;
  const char* mode = selection ? "selection" : "query";
  if (!selection && f < 0 && is_causal(w)) f = n - 1, mode = "last";
  if (!selection && f < 0) mode = "strongest";
  const float* row = selection ? ctx.shown->focus_row(ctx.focus) : f >= 0 ? &w(f, 0) : nullptr;
  // The chosen k stays as chosen (AppState::top_k); a shorter text only clamps its use here.
  const int top_k = shown_top_k(ctx.app.top_k, static_cast<int>(w.cols()));
  const float threshold = row ? top_k_threshold(row, static_cast<int>(w.cols()), top_k) : 0.0f;

  // Header: what is drawn, the top-k control and the threshold it gives.
  const auto dim = ImGui::ColorConvertU32ToFloat4(colors.text_dim);
  ImGui::SetNextItemWidth(font * 5.5f);
  ImGui::SliderInt(ctx.slot == 0 ? "##topk0" : "##topk1", &ctx.app.top_k, 1, kMaxTopK, "top %d");
  ctx.app.top_k = std::clamp(ctx.app.top_k, 1, kMaxTopK);  // Ctrl+click may type any number
  ImGui::SameLine();
  const std::string who = f >= 0 && f < static_cast<int>(ctx.trace->tokens.size())
                              ? token_label(*ctx.trace, f, 14)
                              : std::string();
  if (selection)
    ImGui::TextColored(dim,
                       "%d selected queries: their %d strongest keys (weight \xE2\x89\xA5 %.3f)",
                       static_cast<int>(ctx.shown->queries.size()), top_k, threshold);
  else if (f >= 0) {  // the quoted token shaped (Arabic joined); the numbers in the UI font
    ImGui::TextColored(dim, "%s\"", std::string(mode) == "last" ? "last token " : "");
    ImGui::SameLine(0, 0);
    shaped_text(who, colors.text_dim);
    ImGui::SameLine(0, 0);
    ImGui::TextColored(dim, "\": its %d strongest keys (weight \xE2\x89\xA5 %.3f)%s", top_k,
                       threshold,
                       std::string(mode) == "last" ? " \xC2\xB7 hover a token to choose" : "");
  } else
    ImGui::TextColored(dim, "the strongest key of every query \xC2\xB7 hover a token for its arcs");
  const float header_h = ImGui::GetCursorScreenPos().y - origin.y;
  const ImVec2 pic_size(size.x, std::max(font * 3, size.y - header_h));
  // Every token gets the width of its label: a sentence wider than the pane scrolls sideways
  // (following the shown query) instead of squeezing its arcs into a tangle.
  const int keys = static_cast<int>(w.cols());
  float natural = 0;
  for (int j = 0; j < keys; ++j)
    natural += text_layer().measure(label_of(ctx, j), font).x + font * 0.8f;
  const bool scrolls = natural > pic_size.x;
  ImGui::BeginChild("##arcs_picture", pic_size, false,
                    scrolls
                        ? ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse
                        : ImGuiWindowFlags_NoScrollbar);
  const float bar = scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f;
  const ImVec2 pic = ImGui::GetCursorScreenPos();
  nlohmann::json labels = nlohmann::json::array();
  DrawArcs(ctx, pic, ImVec2(std::max(natural, pic_size.x), pic_size.y - bar), f, row,
           ctx.layout ? &labels : nullptr);
  // Keep the shown query in view when it was chosen elsewhere (never under the pointer: the
  // picture must not slide away from a token being hovered here).
  const float scroll = ImGui::GetScrollX(), seen_x = focus_x_ - pic.x;
  const bool out_of_view = seen_x < scroll || seen_x > scroll + pic_size.x;
  if (scrolls && f >= 0 && f != arcs_scrolled_to_ && out_of_view &&
      !ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
    ImGui::SetScrollX(std::max(0.0f, seen_x - pic_size.x / 2));
    arcs_scrolled_to_ = f;
  }
  ImGui::EndChild();
  if (ctx.layout) {
    nlohmann::json box = layout_box(ctx, "arcs", origin, size);
    box["mode"] = mode;
    box["query"] = f;
    box["top_k"] = top_k;
    box["threshold"] = threshold;
    box["labels"] = labels;
    box["scrolls"] = scrolls;
    ctx.layout->push_back(std::move(box));
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(size);
}

void ArcsView::DrawArcs(ViewContext& ctx, ImVec2 origin, ImVec2 size, int f, const float* row,
                        nlohmann::json* labels_json) {
  const ThemeColors& colors = theme_colors();
  const Matrix& w = *ctx.weights;
  const int n = static_cast<int>(w.cols());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize(), s = ctx.pixel_scale;
  // The sentence's natural width decides whether its labels need a second (staggered) row.
  float natural = 0;
  for (int j = 0; j < n; ++j)
    natural += text_layer().measure(label_of(ctx, j), font).x + font * 0.8f;
  const float baseline = origin.y + size.y - font * (natural > size.x ? 2.7f : 1.6f);
  const float max_h = std::max(font, baseline - origin.y - font * 1.3f);  // room for a label
  const ColorScale& range = ctx.shown->scale;

  // Labels placed so far (x0, y0, x1, y1): each new one must keep clear of all of them.
  std::vector<ImVec4> placed;
  const auto clear_of_placed = [&](ImVec2 p, ImVec2 ts) {
    for (const ImVec4& r : placed)
      if (p.x < r.z + 2 && p.x + ts.x + 2 > r.x && p.y < r.w && p.y + ts.y > r.y) return false;
    return true;
  };
  const auto place = [&](ImVec2 p, ImVec2 ts, const std::string& text, const char* kind,
                         const DrawnText* drawn = nullptr, int index = -1) {
    placed.push_back(ImVec4(p.x, p.y, p.x + ts.x, p.y + ts.y));
    if (!labels_json) return;
    labels_json->push_back({{"text", text},
                            {"kind", kind},
                            {"x", p.x * s},
                            {"y", p.y * s},
                            {"w", ts.x * s},
                            {"h", ts.y * s}});
    if (drawn) {  // the label itself (x, y, w, h above: its padded box)
      nlohmann::json shaped = label_json(index, text, *drawn, s);
      labels_json->back().update(shaped);
    }
  };

  // Token slots proportional to label widths, shrunk to fit.
  std::vector<std::string> labels(static_cast<size_t>(n));
  std::vector<float> widths(static_cast<size_t>(n)), centers(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    labels[j] = label_of(ctx, j);
    widths[j] = text_layer().measure(labels[j], font).x + font * 0.8f;
  }
  const float total = std::accumulate(widths.begin(), widths.end(), 0.0f);
  const float k = total > size.x ? size.x / total : 1.0f;
  float x = origin.x + (size.x - total * k) / 2;
  for (int j = 0; j < n; ++j) {
    centers[j] = x + widths[j] * k / 2;
    if (j == f) focus_x_ = centers[j];
    handle_token_hover(ctx, ImVec2(x, baseline), ImVec2(x + widths[j] * k, origin.y + size.y), j);
    x += widths[j] * k;
  }
  // Token labels: the shown query's first (always, highlighted), then every other one where it
  // keeps clear of those placed: on the first row, else staggered onto the second when the
  // sentence is too long for one (a label with no room is left out, never drawn over another).
  const bool two_rows = total > size.x;
  const auto token_text = [&](int j) {
    const ImVec2 ts = text_layer().measure(labels[j], font);
    const float px = std::clamp(centers[j] - ts.x / 2, origin.x + 3, origin.x + size.x - ts.x - 3);
    for (int row = 0; row < (two_rows && j != f ? 2 : 1); ++row) {
      const ImVec2 p(px, baseline + font * 0.25f + (font + 4) * row);
      const ImVec2 box(p.x - 3, p.y - 1), box_size(ts.x + 6, ts.y + 2);
      if (j != f && !clear_of_placed(box, box_size)) continue;
      if (j == f)
        dl->AddRectFilled(box, ImVec2(box.x + box_size.x, box.y + box_size.y),
                          with_alpha(colors.focus, 0.25f), 3.0f);
      else if (row == 1)  // a tick from the second row up to its token
        dl->AddLine(ImVec2(centers[j], baseline + 1), ImVec2(centers[j], p.y - 1),
                    with_alpha(colors.text_dim, 0.5f));
      const DrawnText drawn =
          text_layer().draw(dl, p, labels[j], font, j == f ? colors.focus : colors.text);
      place(box, box_size, labels[j], "token", &drawn, j);
      return;
    }
  };
  if (f >= 0) token_text(f);
  for (int j = 0; j < n; ++j)
    if (j != f) token_text(j);

  // The curves: query f's top-k keys, or each query's strongest key.
  const std::vector<Arc> arcs = choose_arcs(w, row, f, shown_top_k(ctx.app.top_k, n), range.vmax);
  float selection_x = 0;
  for (int q : ctx.shown->queries) selection_x += centers[std::clamp(q, 0, n - 1)];
  if (!ctx.shown->queries.empty()) selection_x /= static_cast<float>(ctx.shown->queries.size());
  const auto x_of = [&](int i) { return i >= 0 ? centers[i] : selection_x; };
  const auto height_of = [&](const Arc& a) {
    return std::min(max_h, std::fabs(centers[a.to] - x_of(a.from)) * 0.55f + font * 0.5f);
  };
  for (auto it = arcs.rbegin(); it != arcs.rend(); ++it) {  // strongest drawn last, on top
    const float t = it->weight / range.vmax;
    const ImU32 c = with_alpha(colors.arc, row ? 0.25f + 0.75f * t : 0.15f + 0.6f * t);
    const float thickness = font / 15.0f * (row ? 1.0f + 7.0f * t : 1.0f + 3.0f * t);
    if (it->to == it->from) {  // attention to itself: a loop above the token
      dl->AddCircle(ImVec2(centers[it->to], baseline - font * 0.6f), font * 0.45f, c, 20,
                    thickness);
      continue;
    }
    const float hgt = height_of(*it);
    const ImVec2 a(x_of(it->from), baseline), b(centers[it->to], baseline);
    dl->AddBezierCubic(a, ImVec2(a.x, baseline - hgt * 1.33f), ImVec2(b.x, baseline - hgt * 1.33f),
                       b, c, thickness);
  }
  // Cut edges (issue 27) of the focused query: a thin red curve crossed at its apex. Ctrl+click
  // on an arc cuts it, on a cut one restores it.
  std::vector<Arc> cut;
  if (const auto& r = ctx.app.slots[ctx.slot].result; r && r->trace == ctx.trace_ref && f >= 0) {
    const AppState& st = ctx.app;
    for (const EdgeKnockout& k : r->interventions.knockout)
      if (k.layer == st.layer && (k.head < 0 || !st.shown.aggregate.empty() || k.head == st.head) &&
          k.query == f && k.key < n && k.key != f)
        cut.push_back({f, k.key, 0.0f});
  }
  for (const Arc& a : cut) {
    const float hgt = height_of(a);
    const ImVec2 p(centers[a.from], baseline), q(centers[a.to], baseline);
    dl->AddBezierCubic(p, ImVec2(p.x, baseline - hgt * 1.33f), ImVec2(q.x, baseline - hgt * 1.33f),
                       q, with_alpha(colors.error, 0.8f), std::max(1.0f, font / 12.0f));
    const ImVec2 apex((p.x + q.x) / 2, baseline - hgt);
    const float r = font * 0.3f;
    dl->AddLine(ImVec2(apex.x - r, apex.y - r), ImVec2(apex.x + r, apex.y + r), colors.error, 2);
    dl->AddLine(ImVec2(apex.x + r, apex.y - r), ImVec2(apex.x - r, apex.y + r), colors.error, 2);
  }
  if (ctx.toggle_knockout && ImGui::GetIO().KeyCtrl && ImGui::IsMouseClicked(0) &&
      ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    float best = font * 0.5f;
    const Arc* hit = nullptr;
    const auto test = [&](const Arc& arc) {
      if (arc.from < 0 || arc.to == arc.from) return;
      const float hgt = height_of(arc);
      const ImVec2 p(x_of(arc.from), baseline), q(centers[arc.to], baseline);
      for (int k = 0; k <= 32; ++k) {
        const ImVec2 pt = ImBezierCubicCalc(p, ImVec2(p.x, baseline - hgt * 1.33f),
                                            ImVec2(q.x, baseline - hgt * 1.33f), q, k / 32.0f);
        const float d = std::hypot(pt.x - mouse.x, pt.y - mouse.y);
        if (d < best) best = d, hit = &arc;
      }
    };
    for (const Arc& arc : arcs) test(arc);
    for (const Arc& arc : cut) test(arc);
    if (hit) {
      const AppState& st = ctx.app;
      ctx.toggle_knockout(
          {st.layer, st.shown.aggregate.empty() ? st.head : -1, hit->from, hit->to});
    }
  }
  // Weight labels on the strongest arcs: above the apex, else just under it, else a line higher;
  // a label with no free place is left out rather than drawn over another.
  ImGui::PushFont(ctx.fonts.mono);
  int labelled = 0;
  for (const Arc& a : arcs) {
    if (labelled == 3) break;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.2f", a.weight);
    const ImVec2 ts = ImGui::CalcTextSize(buf);
    const float cx = a.to == a.from ? centers[a.to] : (x_of(a.from) + centers[a.to]) / 2;
    const float apex = a.to == a.from ? baseline - font * 1.05f : baseline - height_of(a);
    const float px = std::clamp(cx - ts.x / 2, origin.x, origin.x + size.x - ts.x);
    for (float py : {apex - ts.y - 2, apex + 2, apex - 2 * ts.y - 4}) {
      const ImVec2 p(px, std::max(origin.y, py));
      if (p.y + ts.y > baseline || !clear_of_placed(p, ts)) continue;
      dl->AddText(p, colors.text, buf);
      place(p, ts, buf, "weight");
      ++labelled;
      break;
    }
  }
  ImGui::PopFont();
}

}  // namespace attnscope
