#include "app/views/model_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include <imgui_internal.h>  // ImGui::FindWindowByName: where the status bar is

#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "app/views/view_title.h"
#include "core/analysis/head_summary.h"

namespace attnscope {

HeadSummaryTable summarize_heads(const std::shared_ptr<const AttentionTrace>& trace) {
  HeadSummaryTable table;
  table.trace = trace;
  if (!trace) return table;
  const auto& keys = head_summary_keys();
  for (const HeadSummaryKey& key : keys) {
    table.names.push_back(key.name);
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

namespace {
nlohmann::json ablated_json(const AppState& st) {
  nlohmann::json out = nlohmann::json::array();
  for (const HeadRef& h : st.interventions.ablated) out.push_back({h.layer, h.head});
  return out;
}
}  // namespace

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
  // Effect and dla (issue 27) sort too, by the worker's numbers rather than a summary.
  // Kept while a model that has none is shown (a session's model still loading).
  std::string effect_sort =
      st.model_sort == "effect" || st.model_sort == "dla" ? st.model_sort : "";
  ImGui::SetNextItemWidth(font * 9);
  const char* sort_name = !effect_sort.empty() ? effect_sort.c_str()
                          : sort_key < 0       ? "model order"
                                               : summaries.names[sort_key].c_str();
  if (ImGui::BeginCombo("sort##model", sort_name)) {
    if (ImGui::Selectable("model order", sort_key < 0 && effect_sort.empty()))
      sort_key = -1, effect_sort.clear();
    for (int k = 0; k < keys; ++k) {
      if (ImGui::Selectable(summaries.names[k].c_str(), sort_key == k))
        sort_key = k, effect_sort.clear();
      help_tooltip(summaries.descriptions[k].c_str());
    }
    if (ctx.toggle_ablation) {
      if (ImGui::Selectable("effect", effect_sort == "effect"))
        sort_key = -1, effect_sort = "effect";
      help_tooltip("the heads whose switching off lowers the target's log-probability most first");
      if (ImGui::Selectable("dla", effect_sort == "dla")) sort_key = -1, effect_sort = "dla";
      help_tooltip("the heads that write most towards the target's logit first");
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
  st.model_sort = !effect_sort.empty() ? effect_sort
                  : sort_key < 0       ? std::string()
                                       : summaries.names[sort_key];
  st.model_filter = filter_key < 0 ? std::string() : summaries.names[filter_key];
  st.model_filter_min = filter_min;
  if (st.show_second) {
    ImGui::SameLine();
    ImGui::RadioButton("sentence 1##model", &st.model_view_slot, 0);
    ImGui::SameLine();
    ImGui::RadioButton("sentence 2##model", &st.model_view_slot, 1);
  }
}

ModelGridShape model_grid_shape(float width, float height, int layers, int heads,
                                const ModelGridMetrics& m) {
  // Every shape whose thumbnails fill the width: `blocks` layers side by side, each with its
  // heads on rows of `columns`, under each thumbnail every summary or (`brief`) one number. The
  // largest thumbnails that fit the height win (more lines on a tie), layers keeping their heads
  // on one row if any such shape fits; none fitting, one layer a row (the pane scrolls).
  const auto shape = [&](int blocks, int columns, bool brief) {
    ModelGridShape g;
    g.blocks = blocks, g.columns = columns;
    g.head_rows = (heads + columns - 1) / columns;
    g.thumb = std::floor((width / blocks - m.label_w) / columns - m.gap);
    g.lines = brief ? std::min(1, m.lines_for(g.thumb)) : m.lines_for(g.thumb);
    g.cell_h = g.thumb + g.lines * m.line_h + m.gap;
    g.height = static_cast<float>((layers + blocks - 1) / blocks * g.head_rows) * g.cell_h;
    return g;
  };
  const auto better = [](const ModelGridShape& a, const ModelGridShape& b) {
    return a.thumb > b.thumb || (a.thumb == b.thumb && a.lines > b.lines);
  };
  ModelGridShape best, wrapped, scroll;
  for (int blocks = 1; blocks <= layers; ++blocks)
    for (int columns = heads; columns >= 1; --columns) {
      if (blocks > 1 && columns < heads) break;  // layers side by side only with whole rows
      for (const bool brief : {false, true}) {
        const ModelGridShape g = shape(blocks, columns, brief);
        if (g.thumb < m.min_thumb) continue;
        if (blocks == 1 && scroll.thumb <= 0) scroll = g;  // the most heads a row still readable
        if (g.height > height) continue;
        ModelGridShape& slot = columns == heads ? best : wrapped;
        if (better(g, slot)) slot = g;
      }
    }
  if (best.thumb > 0) return best;
  if (wrapped.thumb > 0) return wrapped;
  if (scroll.thumb <= 0) {  // too narrow for readable thumbnails: smallest ones, side-scrolling
    scroll = shape(1, heads, false);
    scroll.thumb = m.min_thumb;
    scroll.lines = m.lines_for(scroll.thumb);
    scroll.cell_h = scroll.thumb + scroll.lines * m.line_h + m.gap;
    scroll.height = static_cast<float>(layers) * scroll.cell_h;
  }
  // A thumbnail taller than the pane helps no one: at most one row's height.
  const float tallest = height - scroll.lines * m.line_h - m.gap;
  if (scroll.thumb > tallest && tallest >= m.min_thumb) {
    scroll.thumb = std::floor(tallest);
    scroll.cell_h = scroll.thumb + scroll.lines * m.line_h + m.gap;
    scroll.height = static_cast<float>(layers * scroll.head_rows) * scroll.cell_h;
  }
  return scroll;
}

void ModelView::Draw(ViewContext& ctx, ColormapRenderer& renderer, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  AppState& st = ctx.app;
  if (!ctx.trace || ctx.trace->layers() == 0 || ctx.trace->tokens.empty()) {
    text_dim("%s", ctx.trace ? "no tokens: type a sentence" : ctx.no_trace_text());
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
  const float s = ctx.pixel_scale;

  const ImVec2 start = ImGui::GetCursorScreenPos();
  char header[160];
  std::snprintf(
      header, sizeof header,
      "Every layer \xC3\x97 head \xC2\xB7 sentence %d \xC2\xB7 %d layers \xC3\x97 %d heads "
      "\xC2\xB7 %d tokens%s",
      ctx.slot + 1, layers, heads, static_cast<int>(trace.tokens.size()),
      shown_options_note(st.shown).c_str());
  text_title(header, colors.accent);
  DrawToolbar(ctx);
  DrawEffectsBar(ctx);
  // The worker's effect or dla: what the heads are sorted by, and marked with.
  const Matrix* sort_values = EffectValues(ctx, st.model_sort);
  const std::string marks_name = st.model_colour.empty() ? st.model_sort : st.model_colour;
  const Matrix* marks = ctx.toggle_ablation ? EffectValues(ctx, st.model_colour) : nullptr;
  float marks_max = 0;
  if (marks)
    for (Eigen::Index i = 0; i < marks->size(); ++i)
      if (std::isfinite(marks->data()[i]))
        marks_max = std::max(marks_max, std::abs(marks->data()[i]));
  const Matrix* numbers_of = EffectValues(ctx, marks_name);
  int passing = 0;
  auto passes = [&](int l, int h) {
    return filter_key < 0 || summaries.value(l, h, filter_key) >= filter_min;
  };
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) passing += passes(l, h);
  // Which summary the single number under a small thumbnail is (all of them when they fit).
  const int shown_key = sort_key >= 0 ? sort_key : filter_key >= 0 ? filter_key : 0;
  std::string numbers = keys == 0 ? std::string() : " \xC2\xB7 numbers: ";
  if (keys > 0) numbers += numbers_of ? marks_name : summaries.names[shown_key];
  char info[320];
  std::snprintf(info, sizeof info,
                "%s%s \xC2\xB7 %d of %d heads bright \xC2\xB7 click: focus that head everywhere "
                "\xC2\xB7 double-click: open it%s",
                st.fixed_range ? "colours span 0\xE2\x80\x93"
                                 "1"
                               : "each thumbnail's colours span 0 to its own largest weight",
                numbers.c_str(), passing, layers * heads,
                ctx.toggle_ablation ? " \xC2\xB7 Alt+click: switch it off" : "");
  text_title(info, colors.text_dim);

  // The grid, scrolling when it does not fit.
  const float used = ImGui::GetCursorScreenPos().y - start.y;
  ImGui::BeginChild("##model_grid", ImVec2(size.x, std::max(size.y - used, 1.0f)), false,
                    ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  // Summary names written out ("induction 0.03"), padded to the longest so the numbers align.
  size_t name_chars = 0;
  for (const std::string& name : summaries.names) name_chars = std::max(name_chars, name.size());
  ImGui::PushFont(ctx.fonts.mono);
  ModelGridMetrics metrics;
  metrics.line_h = ImGui::GetFontSize();
  const float number_w = ImGui::CalcTextSize("0.00").x;
  const float signed_w = ImGui::CalcTextSize("+0.00").x;  // an effect's or dla's number
  const float line_w = ImGui::CalcTextSize((std::string(name_chars, 'm') + " 0.00").c_str()).x;
  ImGui::PopFont();
  metrics.label_w = ImGui::CalcTextSize("L00").x + font * 0.5f;
  metrics.gap = std::max(4.0f, font * 0.35f);
  metrics.min_thumb = font * 1.6f;
  // Summary lines under a thumbnail: all of them (and the head) when they fit, else the number of
  // the key the header names.
  metrics.lines_for = [&](float t) {
    return keys == 0 ? 0 : t >= line_w ? keys + 1 : t >= number_w ? 1 : 0;
  };
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ModelGridShape g =
      model_grid_shape(avail.x - ImGui::GetStyle().ScrollbarSize, avail.y, layers, heads, metrics);
  const float thumb = g.thumb * s >= 4 ? snap(g.thumb, s) : g.thumb;
  const int lines = g.lines;
  const float mono_h = metrics.line_h, label_w = metrics.label_w;
  const float cell_w = thumb + metrics.gap, cell_h = thumb + lines * mono_h + metrics.gap;
  const float block_w = (avail.x - ImGui::GetStyle().ScrollbarSize) / g.blocks;
  const int block_rows = (layers + g.blocks - 1) / g.blocks;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float x0 = snap(origin.x, s), y0 = snap(origin.y, s);
  // Where layer l's block starts, and where its head in slot k goes.
  const auto block_at = [&](int l) {
    return ImVec2(snap(x0 + (l % g.blocks) * block_w, s),
                  y0 + (l / g.blocks) * g.head_rows * cell_h);
  };
  const auto cell_at = [&](int l, int k) {
    const ImVec2 b = block_at(l);
    return ImVec2(b.x + label_w + (k % g.columns) * cell_w, b.y + (k / g.columns) * cell_h);
  };

  // Where each head goes in its layer's block.
  std::vector<int> order(static_cast<size_t>(heads));
  auto row_order = [&](int l) {
    std::iota(order.begin(), order.end(), 0);
    if (sort_values) {  // effect: most negative first; dla: largest first; unknown (NaN) last
      const bool ascending = st.model_sort == "effect";
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const float va = (*sort_values)(l, a), vb = (*sort_values)(l, b);
        if (std::isnan(va) || std::isnan(vb)) return !std::isnan(va) && std::isnan(vb);
        return ascending ? va < vb : va > vb;
      });
    } else if (sort_key >= 0) {
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const float va = summaries.value(l, a, sort_key), vb = summaries.value(l, b, sort_key);
        return summaries.descending[sort_key] ? va > vb : va < vb;
      });
    }
  };
  // Keep the focused cell in view when the keys move it.
  if (st.layer != last_layer || st.head != last_head) {
    if (st.layer >= 0 && st.layer < layers && last_layer >= 0) {
      const float top = block_at(st.layer).y - ImGui::GetWindowPos().y;
      const float block_h = g.head_rows * cell_h;
      if (top < ImGui::GetScrollY() ||
          top + block_h > ImGui::GetScrollY() + ImGui::GetWindowHeight())
        ImGui::SetScrollFromPosY(top, 0.3f);
    }
    last_layer = st.layer, last_head = st.head;
  }

  const float grid_w = (g.blocks - 1) * block_w + label_w + g.columns * cell_w - metrics.gap;
  const float grid_h = block_rows * g.head_rows * cell_h;
  ImGui::InvisibleButton("##model_cells", ImVec2(std::max(1.0f, grid_w), std::max(1.0f, grid_h)));
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
    const ImVec2 block = block_at(l);
    char buf[64];
    std::snprintf(buf, sizeof buf, "L%d", l);  // layers count from 0, as everywhere
    if (ImGui::IsRectVisible(block, ImVec2(block.x + label_w, block.y + cell_h)))
      dl->AddText(ImVec2(block.x, block.y + (thumb - mono_h) / 2),
                  l == st.layer ? colors.focus : colors.text_dim, buf);
    for (int slot = 0; slot < heads; ++slot) {
      const int h = order[slot];
      const ImVec2 a = cell_at(l, slot), b(a.x + thumb, a.y + thumb);
      const bool bright = passes(l, h);
      if (hovered && mouse.x >= a.x && mouse.x < a.x + cell_w && mouse.y >= a.y &&
          mouse.y < a.y + cell_h)
        hover_l = l, hover_h = h;
      nlohmann::json summary_json = nlohmann::json::array();  // the lines under it, as drawn
      const bool visible = ImGui::IsRectVisible(a, ImVec2(a.x + cell_w, a.y + cell_h));
      if (visible) {
        dl->ChannelsSetCurrent(0);
        dl->AddImage(atlas.texture(), a, b, atlas.uv0(l, h), atlas.uv1(l, h));
        dl->ChannelsSetCurrent(1);
        if (!bright) dl->AddRectFilled(a, b, with_alpha(veil_base, 0.8f));
        DrawHeadMarks(ctx, dl, l, h, a, b, marks, marks_max);
        const bool focused =
            st.shown.aggregate.empty() ? (l == st.layer && h == st.head) : l == st.layer;
        if (focused)
          dl->AddRect(ImVec2(a.x - 2, a.y - 2), ImVec2(b.x + 2, b.y + 2), colors.focus, 0, 0, 2.5f);
        // Summaries under the thumbnail, their names written out.
        const ImU32 tc = bright ? colors.text : colors.text_dim;
        const auto line = [&](int row, ImU32 color, const char* text) {
          dl->AddText(ImVec2(a.x, b.y + 1 + row * mono_h), color, text);
          if (ctx.layout) summary_json.push_back(text);
        };
        const float effect_number = numbers_of ? (*numbers_of)(l, h) : 0.0f;
        if (lines == 1 && numbers_of) {
          // One decimal under a thumbnail too narrow for two: numbers never run together.
          const char* format = thumb >= signed_w ? "%+.2f" : "%+.1f";
          std::snprintf(buf, sizeof buf, std::isnan(effect_number) ? "\xE2\x80\xA6" : format,
                        effect_number);
          line(0, colors.accent, buf);
        } else if (lines == 1) {
          std::snprintf(buf, sizeof buf, "%.2f", summaries.value(l, h, shown_key));
          line(0, tc, buf);
        } else if (lines > 1) {
          if (numbers_of && !std::isnan(effect_number))
            std::snprintf(buf, sizeof buf, "h%d %s %+.2f", h, marks_name.c_str(), effect_number);
          else
            std::snprintf(buf, sizeof buf, "h%d", h);
          line(0, colors.text_dim, buf);
          for (int k = 0; k < keys; ++k) {
            std::snprintf(buf, sizeof buf, "%-*s %.2f", static_cast<int>(name_chars),
                          summaries.names[k].c_str(), summaries.value(l, h, k));
            line(k + 1, k == sort_key || k == filter_key ? colors.accent : tc, buf);
          }
        }
      }
      if (ctx.layout)
        cells.push_back({{"layer", l},
                         {"head", h},
                         {"x", a.x * s},
                         {"y", a.y * s},
                         {"w", thumb * s},
                         {"h", thumb * s},
                         {"bright", bright},
                         {"vmax", atlas.scale(l, h).vmax},
                         {"summary_lines", summary_json}});
    }
  }
  ImGui::PopFont();
  dl->ChannelsMerge();

  if (hover_l >= 0) {
    // Room for the popup: anywhere above the bottom of this pane and of the status bar (its top
    // edge last frame: it grows upwards while it shows a long message).
    float bottom = start.y + size.y;
    if (const ImGuiWindow* bar = ImGui::FindWindowByName("##status"))
      if (bar->WasActive) bottom = std::min(bottom, bar->Pos.y);
    DrawHoverPopup(ctx, hover_l, hover_h, thumb, ImGui::GetMainViewport()->WorkPos.y, bottom,
                   hovered_json);
    if (clicked && ImGui::GetIO().KeyAlt && ctx.toggle_ablation) {
      ctx.toggle_ablation(hover_l, hover_h);  // Alt+click: switch the head off (or back on)
    } else if (clicked) {
      st.layer = hover_l, st.head = hover_h;
      st.shown.aggregate.clear();                  // a click asks for this one head
      last_layer = st.layer, last_head = st.head;  // already in view
    }
    if (double_clicked) st.model_view = false;
  }
  ImGui::EndChild();

  if (ctx.layout)
    ctx.layout->push_back(
        {{"view", "model"},
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
         {"colour", st.model_colour},
         {"ablated", ablated_json(st)},
         {"hovered", hovered_json},
         {"panel", {{"x", start.x * s}, {"y", start.y * s}, {"w", size.x * s}, {"h", size.y * s}}},
         {"grid",
          {{"x", x0 * s},
           {"y", y0 * s},
           {"w", grid_w * s},
           {"h", grid_h * s},
           {"blocks", g.blocks},
           {"columns", g.columns},
           {"thumb", thumb * s}}},
         {"cells", cells}});
}

}  // namespace attnscope
