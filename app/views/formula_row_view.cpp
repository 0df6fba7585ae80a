// The formula view at any length: the selected query's row, key by key, in a table that scrolls
// sideways and draws only the columns in view (4,096 keys cost what 40 do).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/arcs_view.h"
#include "app/views/draw_util.h"
#include "app/views/formula_view.h"

namespace attnscope {

namespace {
void format_value(float v, char (&buf)[24]) {
  if (std::isinf(v))
    std::snprintf(buf, sizeof buf, "%s", v < 0 ? "\xE2\x88\x92\xE2\x88\x9E" : "\xE2\x88\x9E");
  else
    std::snprintf(buf, sizeof buf,
                  std::fabs(v) >= 99.5f   ? "%.0f"
                  : std::fabs(v) >= 9.95f ? "%.1f"
                                          : "%.3f",
                  v);
}

// The query the table follows: the focused token, else a decoder's last token (the one it
// predicts from), else the first.
int chosen_query(const ViewContext& ctx, FormulaRowState& state) {
  const int n = static_cast<int>(ctx.weights->rows());
  if (ctx.focus >= 0 && ctx.focus < n) return ctx.focus;
  if (state.causal_of != ctx.weights || state.causal_pin != ctx.shown) {
    state.causal = is_causal(*ctx.weights);
    state.causal_of = ctx.weights, state.causal_pin = ctx.shown;
  }
  return state.causal ? n - 1 : 0;
}
}  // namespace

void draw_query_row(ViewContext& ctx, FormulaRowState& state, int layer, int head) {
  const ThemeColors& colors = theme_colors();
  const auto dim = ImGui::ColorConvertU32ToFloat4(colors.text_dim);
  if (!ctx.weights || ctx.weights->rows() == 0) return;
  const Tokens& tokens = ctx.trace->tokens;
  const int query = chosen_query(ctx, state);
  const bool changed = state.trace != ctx.trace || state.layer != layer || state.head != head ||
                       state.query != query;
  if (changed) {
    state.row = query_row(*ctx.trace, layer, head, query);
    state.trace = ctx.trace, state.pin = ctx.trace_ref;
    state.layer = layer, state.head = head, state.query = query;
  }
  const QueryRow& row = state.row;
  const int keys = static_cast<int>(row.weights.size());
  const auto label = [&](int i) {
    return i < static_cast<int>(tokens.size()) ? token_label(*ctx.trace, i, 8) : std::string("?");
  };

  // Title: the equation, then which row of which head, and where the numbers come from.
  ImGui::PushFont(ctx.fonts.big);
  ImGui::Text(
      "Attention(Q, K, V) = softmax(Q\xC2\xB7K\xE1\xB5\x80 / \xE2\x88\x9A"
      "d\xE2\x82\x96) \xC2\xB7 V");
  ImGui::PopFont();
  ImGui::SameLine();
  const std::string who = label(query);
  ImGui::TextColored(
      dim, "  row of \"%s\" (token %d, %d keys) \xC2\xB7 sentence %d, layer %d, head %d%s",
      who.c_str(), query, keys, ctx.slot + 1, layer, head,
      ctx.focus < 0 ? " \xC2\xB7 hover a token to choose" : "");
  if (row.source == QueryRow::Source::kWeights)
    ImGui::TextColored(dim,
                       "This trace keeps no Q, K, V for this input (a stored trace, or a model "
                       "too large to keep them at this length): the weights come from the trace.");
  else
    ImGui::TextColored(dim, "d\xE2\x82\x96 = %d \xC2\xB7 scale %.4f%s%s \xC2\xB7 %s", row.d_k,
                       row.scale, row.softcap > 0 ? " then softcap" : "",
                       row.kv_head >= 0 ? " \xC2\xB7 K, V of a shared KV head" : "",
                       row.source == QueryRow::Source::kSteps
                           ? "from the model's steps"
                           : "q\xC2\xB7k computed here from the model's q and k rows");

  // The table: row names on the left, one column per key, scrolling sideways.
  ImGui::PushFont(ctx.fonts.mono);
  const float font = ImGui::GetFontSize(), row_h = font * 1.45f;
  const float cell_w = ImGui::CalcTextSize("-00.000").x + font * 0.6f;
  char scale_name[32];
  std::snprintf(scale_name, sizeof scale_name, "\xC3\x97 %.3g", row.scale);
  const bool have_scores = row.source != QueryRow::Source::kWeights;
  struct Line {
    const char* name;
    const std::vector<float>* values;
  };
  std::vector<Line> lines = {{"key", nullptr}};
  if (have_scores) {
    lines.push_back({"q\xC2\xB7k\xE2\xB1\xBC", &row.scores});
    lines.push_back({scale_name, &row.scaled});
  }
  lines.push_back({"softmax", &row.weights});
  float name_w = 0;
  for (const Line& l : lines) name_w = std::max(name_w, ImGui::CalcTextSize(l.name).x);
  name_w += font;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  for (size_t r = 0; r < lines.size(); ++r)
    dl->AddText(ImVec2(at.x, at.y + r * row_h + (row_h - font) / 2), colors.text, lines[r].name);
  const float table_h = row_h * lines.size() + ImGui::GetStyle().ScrollbarSize + 4;
  const float avail = ImGui::GetContentRegionAvail().x;
  ImGui::SetCursorScreenPos(ImVec2(at.x + name_w, at.y));
  ImGui::BeginChild(ctx.slot == 0 ? "##row_table0" : "##row_table1",
                    ImVec2(std::max(cell_w, avail - name_w), table_h), false,
                    ImGuiWindowFlags_HorizontalScrollbar);
  if (changed) {  // bring the strongest key into view
    const int best = static_cast<int>(std::max_element(row.weights.begin(), row.weights.end()) -
                                      row.weights.begin());
    ImGui::SetScrollX(std::max(0.0f, (best + 0.5f) * cell_w - ImGui::GetWindowWidth() / 2));
  }
  ImDrawList* tl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float scroll = ImGui::GetScrollX(), view_w = ImGui::GetWindowWidth();
  const int first = std::clamp(static_cast<int>(scroll / cell_w), 0, std::max(0, keys - 1));
  const int last = std::clamp(static_cast<int>((scroll + view_w) / cell_w), 0, keys - 1);
  const float vmax = std::max(1e-12f, *std::max_element(row.weights.begin(), row.weights.end()));
  nlohmann::json cells = nlohmann::json::array();
  TextOptions mono_label;
  mono_label.font = FontKind::kMono;  // the key labels, in the numbers' type
  for (int j = first; j <= last; ++j) {
    const float x = origin.x + j * cell_w;
    const std::string key = label(j);
    const ImVec2 ks = text_layer().measure(key, font, mono_label);
    text_layer().draw(tl, ImVec2(x + (cell_w - ks.x) / 2, origin.y + (row_h - font) / 2), key, font,
                      j == query ? colors.focus : colors.text_dim, mono_label);
    for (size_t r = 1; r < lines.size(); ++r) {
      const float v = (*lines[r].values)[j];
      const float y = origin.y + r * row_h;
      ImU32 fg = colors.text;
      if (lines[r].values == &row.weights) {  // the weights row in the heatmap's colours
        tl->AddRectFilled(ImVec2(x + 1, y + 1), ImVec2(x + cell_w - 1, y + row_h - 1),
                          colormap_color(ctx.app.colormap, v, 0.0f, vmax));
        fg = text_color_on(ctx.app.colormap, v, 0.0f, vmax);
      }
      char buf[24];
      format_value(v, buf);
      const ImVec2 ts = ImGui::CalcTextSize(buf);
      tl->AddText(ImVec2(x + cell_w - ts.x - font * 0.3f, y + (row_h - font) / 2), fg, buf);
    }
    if (ctx.layout) {
      nlohmann::json c = {{"key", j}, {"text", key}, {"weight", row.weights[j]}};
      if (have_scores) c["score"] = row.scores[j], c["scaled"] = row.scaled[j];
      if (have_scores && std::isinf(row.scaled[j])) c["scaled"] = "-inf";
      cells.push_back(std::move(c));
    }
  }
  ImGui::Dummy(ImVec2(keys * cell_w, row_h * lines.size()));
  ImGui::EndChild();
  ImGui::PopFont();

  // The output: the weighted sum of the value vectors (its first components), and the row's sum.
  if (!row.output.empty()) {
    std::string sum = "output = \xCE\xA3\xE2\xB1\xBC weight\xE2\xB1\xBC\xC2\xB7v\xE2\xB1\xBC = [";
    const int shown = std::min<int>(static_cast<int>(row.output.size()), 8);
    char buf[24];
    for (int k = 0; k < shown; ++k) {
      std::snprintf(buf, sizeof buf, "%s%.3f", k ? ", " : "", row.output[k]);
      sum += buf;
    }
    sum += static_cast<int>(row.output.size()) > shown ? ", \xE2\x80\xA6]" : "]";
    ImGui::PushFont(ctx.fonts.mono);
    ImGui::TextUnformatted(sum.c_str());
    ImGui::PopFont();
  }
  double total = 0;
  for (float v : row.weights) total += v;
  ImGui::TextColored(dim,
                     "\xCE\xA3 softmax = %.4f over %d keys \xC2\xB7 scroll sideways for every key",
                     total, keys);
  if (ctx.layout)
    ctx.layout->push_back({{"view", "formula"},
                           {"slot", ctx.slot},
                           {"mode", "row_table"},
                           {"focus", ctx.focus},
                           {"query", query},
                           {"keys", keys},
                           {"source", source_name(row.source)},
                           {"scale", row.scale},
                           {"first_col", first},
                           {"last_col", last},
                           {"cells", cells},
                           {"output", row.output}});
}

}  // namespace attnscope
