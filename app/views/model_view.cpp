#include "app/views/model_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "core/analysis/head_summary.h"

namespace attnscope {

HeadSummaryTable summarize_heads(const std::shared_ptr<const AttentionTrace>& trace) {
  HeadSummaryTable table;
  table.trace = trace;
  if (!trace) return table;
  const auto& keys = head_summary_keys();
  for (const HeadSummaryKey& key : keys) {
    table.names.push_back(key.name);
    table.labels.push_back(key.name.substr(0, 4));  // "entr 2.31" fits under a thumbnail
    table.descriptions.push_back(key.label + ": " + key.description);
    table.descending.push_back(key.higher_is_notable);
  }
  table.layers = trace->layers();
  table.heads = trace->heads();
  table.values.reserve(static_cast<size_t>(table.layers) * table.heads * keys.size());
  const auto all = summarize_trace(*trace);
  for (int l = 0; l < table.layers; ++l)
    for (int h = 0; h < table.heads; ++h)
      for (const HeadSummaryKey& key : keys) table.values.push_back(key.value(all[l][h]));
  return table;
}

void ModelView::DrawToolbar(ViewContext& ctx) {
  const float font = ImGui::GetFontSize();
  const int keys = static_cast<int>(summaries.names.size());
  // The choice lives in AppState by key name (a session saves it); -1 when none or unknown.
  const auto key_index = [&](const std::string& name) {
    const auto it = std::find(summaries.names.begin(), summaries.names.end(), name);
    return it == summaries.names.end() ? -1 : static_cast<int>(it - summaries.names.begin());
  };
  AppState& st = ctx.app;
  sort_key = key_index(st.model_sort);
  filter_key = key_index(st.model_filter);
  filter_min = st.model_filter_min;
  ImGui::SetNextItemWidth(font * 9);
  if (ImGui::BeginCombo("sort##model",
                        sort_key < 0 ? "model order" : summaries.names[sort_key].c_str())) {
    if (ImGui::Selectable("model order", sort_key < 0)) sort_key = -1;
    for (int k = 0; k < keys; ++k) {
      if (ImGui::Selectable(summaries.names[k].c_str(), sort_key == k)) sort_key = k;
      help_tooltip(summaries.descriptions[k].c_str());
    }
    ImGui::EndCombo();
  }
  help_tooltip("order each layer's heads by this summary, largest first");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 11);
  std::string filter_label =
      filter_key < 0 ? std::string("every head") : "heads with " + summaries.names[filter_key];
  if (ImGui::BeginCombo("##filter", filter_label.c_str())) {
    if (ImGui::Selectable("every head", filter_key < 0)) filter_key = -1;
    for (int k = 0; k < keys; ++k) {
      std::string item = "heads with " + summaries.names[k] + " \xE2\x89\xA5";  // ≥
      if (ImGui::Selectable(item.c_str(), filter_key == k)) filter_key = k;
      help_tooltip(summaries.descriptions[k].c_str());
    }
    ImGui::EndCombo();
  }
  help_tooltip("dim the heads below a threshold of one summary");
  if (filter_key >= 0) {
    ImGui::SameLine();
    ImGui::TextUnformatted("\xE2\x89\xA5");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 5);
    ImGui::DragFloat("##filter_min", &filter_min, 0.01f, 0.0f, 0.0f, "%.2f");
  }
  st.model_sort = sort_key < 0 ? std::string() : summaries.names[sort_key];
  st.model_filter = filter_key < 0 ? std::string() : summaries.names[filter_key];
  st.model_filter_min = filter_min;
  if (st.show_second) {
    ImGui::SameLine();
    ImGui::RadioButton("sentence 1##model", &st.model_view_slot, 0);
    ImGui::SameLine();
    ImGui::RadioButton("sentence 2##model", &st.model_view_slot, 1);
  }
}

void ModelView::Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  AppState& st = ctx.app;
  if (!ctx.trace || ctx.trace->layers() == 0 || ctx.trace->tokens.empty()) {
    text_dim("%s", ctx.trace  ? "no tokens: type a sentence"
                   : st.model ? "computing\xE2\x80\xA6"
                              : "no model: choose one on the left");
    ImGui::Dummy(size);
    return;
  }
  const AttentionTrace& trace = *ctx.trace;
  // Summaries and thumbnails are prepared off the UI thread, once per trace.
  if (summarizing_trace != ctx.trace_ref) {
    summarizing_trace = ctx.trace_ref;
    summarizing.start([trace = ctx.trace_ref] { return summarize_heads(trace); });
  }
  HeadSummaryTable done;
  if (summarizing.take(done, summary_error) && summary_error.empty()) summaries = std::move(done);
  atlas.update(renderer, ctx.trace_ref, st.shown, st.colormap, st.fixed_range);
  if (!summary_error.empty() || !atlas.error().empty()) {
    text_wrapped_message(summary_error.empty() ? atlas.error() : summary_error, colors.error);
    return;
  }
  waiting = summaries.trace != ctx.trace_ref || !atlas.ready();
  if (waiting) {
    text_dim(
        "computing the head summaries and thumbnails of %d layers \xC3\x97 %d heads\xE2\x80\xA6",
        ctx.trace->layers(), ctx.trace->heads());
    ImGui::Dummy(size);
    return;
  }
  const int layers = trace.layers(), heads = trace.heads();
  const int keys = static_cast<int>(summaries.names.size());

  const ImVec2 start = ImGui::GetCursorScreenPos();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.accent),
                     "Every layer \xC3\x97 head \xC2\xB7 sentence %d \xC2\xB7 %d layers \xC3\x97 "
                     "%d heads \xC2\xB7 %d tokens%s",
                     ctx.slot + 1, layers, heads, static_cast<int>(trace.tokens.size()),
                     shown_options_note(st.shown).c_str());
  DrawToolbar(ctx);
  int passing = 0;
  auto passes = [&](int l, int h) {
    return filter_key < 0 || summaries.value(l, h, filter_key) >= filter_min;
  };
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) passing += passes(l, h);
  // Which summary the single number under a small thumbnail is (all of them when they fit).
  const int shown_key = sort_key >= 0 ? sort_key : filter_key >= 0 ? filter_key : 0;
  const std::string numbers =
      keys == 0 ? std::string() : " \xC2\xB7 numbers: " + summaries.names[shown_key];
  ImGui::PushTextWrapPos(0.0f);
  text_dim(
      "%s%s \xC2\xB7 %d of %d heads bright \xC2\xB7 click: focus that head everywhere, "
      "double-click: open it",
      st.fixed_range ? "colours span 0\xE2\x80\x93"
                       "1"
                     : "each thumbnail's colours span 0 to its own largest weight",
      numbers.c_str(), passing, layers * heads);
  ImGui::PopTextWrapPos();

  // The grid, scrolling when it does not fit.
  const float used = ImGui::GetCursorScreenPos().y - start.y;
  ImGui::BeginChild("##model_grid", ImVec2(size.x, std::max(size.y - used, 1.0f)), false,
                    ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float s = ctx.pixel_scale;
  const float font = ImGui::GetFontSize();
  ImGui::PushFont(ctx.fonts.mono);
  const float mono_h = ImGui::GetFontSize();
  const float number_w = ImGui::CalcTextSize("0.00").x;
  const float line_w = ImGui::CalcTextSize("prev 0.00").x;
  ImGui::PopFont();
  const float label_w = ImGui::CalcTextSize("L00").x + font * 0.5f;
  const float gap = std::max(4.0f, font * 0.35f);
  const float avail = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
  float thumb = std::floor((avail - label_w) / heads - gap);
  thumb = std::clamp(thumb, font * 1.6f, font * 12.0f);
  // Summary lines under a thumbnail: all of them when they fit, else the sort key's value.
  auto lines_for = [&](float t) {
    return keys == 0 ? 0 : t >= line_w ? keys + 1 : t >= number_w ? 1 : 0;
  };
  // Smaller thumbnails when that fits every layer without scrolling (and they stay readable).
  const float fit =
      std::floor(ImGui::GetContentRegionAvail().y / layers - lines_for(thumb) * mono_h - gap);
  if (fit < thumb && fit >= font * 3) thumb = fit;
  if (thumb * s >= 4) thumb = snap(thumb, s);
  const int lines = lines_for(thumb);
  const float cell_w = thumb + gap, cell_h = thumb + lines * mono_h + gap;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float x0 = snap(origin.x + label_w, s), y0 = snap(origin.y, s);

  // Where each head goes in its layer's row.
  std::vector<int> order(static_cast<size_t>(heads));
  auto row_order = [&](int l) {
    std::iota(order.begin(), order.end(), 0);
    if (sort_key >= 0)
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const float va = summaries.value(l, a, sort_key), vb = summaries.value(l, b, sort_key);
        return summaries.descending[sort_key] ? va > vb : va < vb;
      });
  };
  // Keep the focused cell in view when the keys move it.
  if (st.layer != last_layer || st.head != last_head) {
    if (st.layer >= 0 && st.layer < layers && last_layer >= 0) {
      const float top = y0 + st.layer * cell_h - ImGui::GetWindowPos().y;
      if (top < ImGui::GetScrollY() ||
          top + cell_h > ImGui::GetScrollY() + ImGui::GetWindowHeight())
        ImGui::SetScrollFromPosY(top, 0.3f);
    }
    last_layer = st.layer, last_head = st.head;
  }

  ImGui::InvisibleButton("##model_cells", ImVec2(std::max(1.0f, label_w + heads * cell_w),
                                                 std::max(1.0f, layers * cell_h)));
  const bool hovered = ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem);
  const bool clicked = ImGui::IsItemClicked();
  const bool double_clicked = hovered && ImGui::IsMouseDoubleClicked(0);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int hover_l = -1, hover_h = -1;
  nlohmann::json hovered_json;  // the enlarged thumbnail of the hovered head (null: none)
  const ImU32 veil_base = ImGui::GetColorU32(ImGuiCol_WindowBg);
  nlohmann::json cells = nlohmann::json::array();
  // Two channels: every thumbnail first (one texture, so ImGui merges them into one draw call),
  // then text, veils and outlines (the font texture). Interleaved, 512 thumbnails made ~1,000
  // texture switches a frame, which cost llvmpipe ~10 ms.
  dl->ChannelsSplit(2);
  dl->ChannelsSetCurrent(1);
  ImGui::PushFont(ctx.fonts.mono);
  for (int l = 0; l < layers; ++l) {
    row_order(l);
    const float ry = y0 + l * cell_h;
    char buf[48];
    std::snprintf(buf, sizeof buf, "L%d", l + 1);
    const bool row_visible =
        ImGui::IsRectVisible(ImVec2(origin.x, ry), ImVec2(x0 + heads * cell_w, ry + cell_h));
    if (row_visible)
      dl->AddText(ImVec2(origin.x, ry + (thumb - mono_h) / 2),
                  l == st.layer ? colors.focus : colors.text_dim, buf);
    for (int slot = 0; slot < heads; ++slot) {
      const int h = order[slot];
      const float cx = x0 + slot * cell_w;
      const ImVec2 a(cx, ry), b(cx + thumb, ry + thumb);
      const bool bright = passes(l, h);
      if (hovered && mouse.x >= a.x && mouse.x < a.x + cell_w && mouse.y >= a.y &&
          mouse.y < a.y + cell_h)
        hover_l = l, hover_h = h;
      if (ctx.layout)
        cells.push_back({{"layer", l},
                         {"head", h},
                         {"x", a.x * s},
                         {"y", a.y * s},
                         {"w", thumb * s},
                         {"h", thumb * s},
                         {"bright", bright},
                         {"vmax", atlas.scale(l, h).vmax}});
      if (!row_visible || !ImGui::IsRectVisible(a, ImVec2(a.x + cell_w, a.y + cell_h))) continue;
      dl->ChannelsSetCurrent(0);
      dl->AddImage(atlas.texture(), a, b, atlas.uv0(l, h), atlas.uv1(l, h));
      dl->ChannelsSetCurrent(1);
      if (!bright) dl->AddRectFilled(a, b, with_alpha(veil_base, 0.8f));
      const bool focused =
          st.shown.aggregate.empty() ? (l == st.layer && h == st.head) : l == st.layer;
      if (focused)
        dl->AddRect(ImVec2(a.x - 2, a.y - 2), ImVec2(b.x + 2, b.y + 2), colors.focus, 0, 0, 2.5f);
      // Summaries under the thumbnail.
      const ImU32 tc = bright ? colors.text : colors.text_dim;
      if (lines == 1) {
        std::snprintf(buf, sizeof buf, "%.2f", summaries.value(l, h, shown_key));
        dl->AddText(ImVec2(a.x, b.y + 1), tc, buf);
      } else if (lines > 1) {
        std::snprintf(buf, sizeof buf, "h%d", h + 1);
        dl->AddText(ImVec2(a.x, b.y + 1), colors.text_dim, buf);
        for (int k = 0; k < keys; ++k) {
          std::snprintf(buf, sizeof buf, "%-4s %.2f", summaries.labels[k].c_str(),
                        summaries.value(l, h, k));
          dl->AddText(ImVec2(a.x, b.y + 1 + (k + 1) * mono_h),
                      k == sort_key || k == filter_key ? colors.accent : tc, buf);
        }
      }
    }
  }
  ImGui::PopFont();
  dl->ChannelsMerge();

  if (hover_l >= 0) {
    ImGui::BeginTooltip();
    ImGui::Text("layer %d \xC2\xB7 head %d", hover_l + 1, hover_h + 1);
    // Larger than the thumbnail, whatever its size, and within the window.
    const float big = std::min(std::max(font * 16, thumb * 2), ImGui::GetIO().DisplaySize.y * 0.6f);
    const float aspect = static_cast<float>(atlas.texel_cols()) / std::max(1, atlas.texel_rows());
    ImGui::Image(atlas.texture(),
                 ImVec2(big * std::min(aspect, 1.0f), big / std::max(aspect, 1.0f)),
                 atlas.uv0(hover_l, hover_h), atlas.uv1(hover_l, hover_h));
    if (ctx.layout) {  // where the enlarged map went (tests)
      const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
      hovered_json = {{"layer", hover_l}, {"head", hover_h},      {"x", a.x * s},
                      {"y", a.y * s},     {"w", (b.x - a.x) * s}, {"h", (b.y - a.y) * s}};
    }
    if (atlas.pool_rows() > 1 || atlas.pool_cols() > 1)
      text_dim("max of each %d \xC3\x97 %d block (%d tokens)", atlas.pool_rows(), atlas.pool_cols(),
               static_cast<int>(trace.tokens.size()));
    ImGui::PushFont(ctx.fonts.mono);
    for (int k = 0; k < keys; ++k)
      ImGui::Text("%-10s %6.3f", summaries.names[k].c_str(), summaries.value(hover_l, hover_h, k));
    ImGui::PopFont();
    text_dim("click: focus this head in every view");
    ImGui::EndTooltip();
    if (clicked) {
      st.layer = hover_l, st.head = hover_h;
      st.shown.aggregate.clear();                  // a click asks for this one head
      last_layer = st.layer, last_head = st.head;  // already in view
    }
    if (double_clicked) st.model_view = false;
  }
  ImGui::EndChild();

  if (ctx.layout)
    ctx.layout->push_back({{"view", "model"},
                           {"slot", ctx.slot},
                           {"layers", layers},
                           {"heads", heads},
                           {"texel_rows", atlas.texel_rows()},
                           {"texel_cols", atlas.texel_cols()},
                           {"pool_rows", atlas.pool_rows()},
                           {"pool_cols", atlas.pool_cols()},
                           {"colormap", st.colormap},
                           {"atlas_builds", atlas.builds()},
                           {"summary_keys", summaries.names},
                           {"summaries", summaries.values},
                           {"sort_key", sort_key},
                           {"filter_key", filter_key},
                           {"filter_min", filter_min},
                           {"sort", st.model_sort},
                           {"filter", st.model_filter},
                           {"focus_layer", st.layer},
                           {"focus_head", st.head},
                           {"hovered", hovered_json},
                           {"cells", cells}});
}

}  // namespace attnscope
