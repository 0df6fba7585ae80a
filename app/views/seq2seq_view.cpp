// Encoder–decoder views (seq2seq_view.h): the decoder's self-attention and cross-attention as a
// labelled heatmap and as arcs between two rows of tokens, and both sentences with the
// translation's timeline.
#include "app/views/seq2seq_view.h"

#include <algorithm>
#include <cmath>

#include <imgui.h>

#include "app/ui/colormap.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "core/text/token_label.h"

namespace attnscope {

namespace {

constexpr const char* kPartNames[] = {"Encoder self-attention", "Decoder self-attention",
                                      "Cross-attention"};

// What the heatmap and the arcs draw: the matrix, its rows' tokens (the decoder's) and its
// columns' (the encoder's for cross-attention, else the decoder's own).
struct Shown {
  const Matrix* weights = nullptr;
  const Tokens* rows = nullptr;
  const Tokens* cols = nullptr;
  const char* rows_are = "target";
  const char* cols_are = "source";
};

Shown shown_of(const AttentionTrace& trace, Seq2SeqPart part, int layer, int head) {
  const DecoderTrace& d = *trace.decoder;
  const bool cross = part == Seq2SeqPart::kCross;
  const auto& all = cross ? d.cross_attention : d.attention;
  return {&all[static_cast<size_t>(layer)][static_cast<size_t>(head)], &d.tokens,
          cross ? &trace.tokens : &d.tokens, "target", cross ? "source" : "target"};
}

std::string label(const ViewContext& ctx, const Tokens& tokens, int i, int max_chars = 14) {
  return token_label(tokens, static_cast<std::size_t>(i), ctx.trace->model.pieces, max_chars);
}

// The target sentence as the decoder's tokens spell it: their pieces decoded to text (spaces
// kept, specials left out).
std::string target_text(const ViewContext& ctx) {
  std::string out;
  for (const Token& t : ctx.trace->decoder->tokens)
    if (!t.special) out += piece_bytes(t.text, ctx.trace->model.pieces);
  const size_t first = out.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : out.substr(first);
}

// The top predictions a decoder token was chosen from (predictions[i - 1]), as tooltip lines;
// returns what it showed (for the layout file).
nlohmann::json predictions_tooltip(const ViewContext& ctx, int i) {
  const DecoderTrace& d = *ctx.trace->decoder;
  nlohmann::json shown = {{"token", i}, {"predictions", nlohmann::json::array()}};
  ImGui::BeginTooltip();
  ImGui::Text("decoder token %d: %s", i, label(ctx, d.tokens, i).c_str());
  if (i >= 1 && static_cast<size_t>(i - 1) < d.predictions.size()) {
    text_dim("chosen from (top predictions after token %d):", i - 1);
    for (const Prediction& p : d.predictions[static_cast<size_t>(i - 1)]) {
      ImGui::Text("  %5.1f%%  %s", 100.0 * p.probability, bytes_label(p.text, 20).c_str());
      shown["predictions"].push_back({{"text", p.text}, {"probability", p.probability}});
    }
  } else {
    text_dim(i == 0 ? "the decoder start token" : "no predictions in this trace");
  }
  ImGui::EndTooltip();
  return shown;
}

// The last item's rectangle in screenshot pixels, with its text.
nlohmann::json item_json(const std::string& text, float k) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  return {{"text", text},
          {"x", a.x * k},
          {"y", a.y * k},
          {"w", (b.x - a.x) * k},
          {"h", (b.y - a.y) * k}};
}

// Where the grid of the heatmap goes inside `origin`..`origin + size`.
struct Grid {
  ImVec2 origin;
  float left = 0, top = 0, cell_w = 0, cell_h = 0;
  int row_every = 1, col_every = 1;  // label every k-th row / column when cells are small
  int rows = 0, cols = 0;
  ImVec2 cell_min(int i, int j) const {
    return ImVec2(origin.x + left + static_cast<float>(j) * cell_w,
                  origin.y + top + static_cast<float>(i) * cell_h);
  }
};

Grid grid_for(const ViewContext& ctx, const Shown& s, ImVec2 origin, ImVec2 size) {
  Grid g;
  g.origin = origin;
  g.rows = static_cast<int>(s.weights->rows());
  g.cols = static_cast<int>(s.weights->cols());
  float row_w = 0, col_w = 0;
  for (int i = 0; i < g.rows; ++i)
    row_w = std::max(row_w, ImGui::CalcTextSize(label(ctx, *s.rows, i).c_str()).x);
  for (int j = 0; j < g.cols; ++j)
    col_w = std::max(col_w, ImGui::CalcTextSize(label(ctx, *s.cols, j).c_str()).x);
  const float line = ImGui::GetTextLineHeightWithSpacing();
  g.left = row_w + line * 1.6f;  // the labels and the vertical axis caption
  g.top = col_w + line * 1.6f;
  const float bar = ImGui::CalcTextSize("0.00").x + line * 2.5f;  // the colorbar and its ticks
  const float room_w = (size.x - g.left - line - bar) / static_cast<float>(std::max(g.cols, 1));
  const float room_h = (size.y - g.top - line) / static_cast<float>(std::max(g.rows, 1));
  // Square cells while both sides fit; a long translation (64 tokens against a short source)
  // keeps its columns wide and its rows as tall as the pane allows.
  const float square = std::clamp(std::min(room_w, room_h), 1.0f, line * 3.0f);
  g.cell_w = std::floor(std::clamp(room_w, square, std::max(square, line * 3.0f)));
  g.cell_h = std::max(1.0f, std::floor(std::clamp(room_h, 1.0f, std::max(square, line * 3.0f))));
  g.cell_w = std::min(g.cell_w, std::max(g.cell_h * 3.0f, square));  // no strips
  g.row_every = std::max(1, static_cast<int>(std::ceil(line / g.cell_h)));
  g.col_every = std::max(1, static_cast<int>(std::ceil(line / g.cell_w)));
  return g;
}

void draw_cells(const ViewContext& ctx, const Shown& s, const Grid& g, WeightRange range) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int cmap = ctx.app.colormap;
  const bool numbers =
      g.cell_w >= ImGui::CalcTextSize("0.00").x + 4 && g.cell_h >= ImGui::GetTextLineHeight();
  char buf[16];
  for (int i = 0; i < g.rows; ++i)
    for (int j = 0; j < g.cols; ++j) {
      const float w = (*s.weights)(i, j);
      const ImVec2 a = g.cell_min(i, j);
      dl->AddRectFilled(a, ImVec2(a.x + g.cell_w, a.y + g.cell_h),
                        colormap_color(cmap, w, range.vmin, range.vmax));
      if (!numbers) continue;
      format_weight(buf, sizeof buf, w, 2);
      const ImVec2 ts = ImGui::CalcTextSize(buf);
      dl->AddText(ImVec2(a.x + (g.cell_w - ts.x) / 2, a.y + (g.cell_h - ts.y) / 2),
                  text_color_on(cmap, w, range.vmin, range.vmax), buf);
    }
}

// Row labels at the left (the decoder's tokens), column labels above, read bottom to top, and
// each axis' caption.
void draw_labels(const ViewContext& ctx, const Shown& s, const Grid& g, int chosen_row) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ThemeColors& colors = theme_colors();
  const float line = ImGui::GetTextLineHeight();
  for (int i = 0; i < g.rows; ++i) {
    if (i % g.row_every != 0 && i != chosen_row) continue;
    const std::string text = label(ctx, *s.rows, i);
    const ImVec2 a = g.cell_min(i, 0);
    const float x = a.x - ImGui::CalcTextSize(text.c_str()).x - 4;
    dl->AddText(ImVec2(x, a.y + (g.cell_h - line) / 2),
                i == chosen_row ? colors.accent : colors.text, text.c_str());
  }
  for (int j = 0; j < g.cols; j += g.col_every) {
    const ImVec2 a = g.cell_min(0, j);
    add_text_vertical(dl, ImVec2(a.x + (g.cell_w - line) / 2, a.y - 4), colors.text,
                      label(ctx, *s.cols, j).c_str());
  }
  const std::string rows_caption = std::string(s.rows_are) + " (queries)";
  const std::string cols_caption = std::string(s.cols_are) + " (keys)";
  dl->AddText(ImVec2(g.origin.x + g.left, g.origin.y), colors.text_dim, cols_caption.c_str());
  add_text_vertical(dl, ImVec2(g.origin.x, g.origin.y + g.top + g.cell_h * g.rows), colors.text_dim,
                    rows_caption.c_str());
}

// A vertical colorbar right of the grid: vmax at the top, vmin at the bottom, ticks at both ends
// and the middle.
void draw_colorbar(const ViewContext& ctx, const Grid& g, WeightRange range) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 top_left = g.cell_min(0, g.cols);
  const float x = top_left.x + line, y = top_left.y, h = g.cell_h * static_cast<float>(g.rows);
  const float w = line * 0.8f;
  constexpr int kSteps = 32;
  for (int k = 0; k < kSteps; ++k) {
    const float t0 = static_cast<float>(k) / kSteps, t1 = static_cast<float>(k + 1) / kSteps;
    const float v = range.vmax - (range.vmax - range.vmin) * (t0 + t1) / 2;
    dl->AddRectFilled(ImVec2(x, y + h * t0), ImVec2(x + w, y + h * t1 + 0.5f),
                      colormap_color(ctx.app.colormap, v, range.vmin, range.vmax));
  }
  char buf[16];
  for (const float t : {0.0f, 0.5f, 1.0f}) {
    const float v = range.vmax - (range.vmax - range.vmin) * t;
    format_weight(buf, sizeof buf, v, 2);
    dl->AddText(ImVec2(x + w + 4, y + h * t - line / 2), theme_colors().text_dim, buf);
  }
}

void hover_cell(const ViewContext& ctx, const Shown& s, const Grid& g) {
  const ImVec2 m = ImGui::GetMousePos(), a = g.cell_min(0, 0);
  const int i = static_cast<int>(std::floor((m.y - a.y) / g.cell_h));
  const int j = static_cast<int>(std::floor((m.x - a.x) / g.cell_w));
  if (!ImGui::IsWindowHovered() || i < 0 || j < 0 || i >= g.rows || j >= g.cols) return;
  ImGui::BeginTooltip();
  ImGui::Text("%s %d '%s' \xE2\x86\x92 %s %d '%s': %.3f", s.rows_are, i,
              label(ctx, *s.rows, i).c_str(), s.cols_are, j, label(ctx, *s.cols, j).c_str(),
              static_cast<double>((*s.weights)(i, j)));
  ImGui::EndTooltip();
}

nlohmann::json labels_json(const ViewContext& ctx, const Tokens& tokens) {
  nlohmann::json out = nlohmann::json::array();
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i) out.push_back(label(ctx, tokens, i));
  return out;
}

// One row of token labels centred at evenly spaced x; returns each label's centre.
std::vector<ImVec2> token_row(const ViewContext& ctx, const Tokens& tokens, float x0, float width,
                              float y, ImU32 color, int highlighted) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  std::vector<ImVec2> centres;
  const float step = width / static_cast<float>(std::max<size_t>(tokens.size(), 1));
  float drawn_to = -1e9f;  // a label that would overlap the one before is left out
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
    const std::string text = label(ctx, tokens, i, 10);
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    const ImVec2 c(x0 + step * (static_cast<float>(i) + 0.5f), y);
    centres.push_back(c);
    if (c.x - ts.x / 2 < drawn_to && i != highlighted) continue;
    dl->AddText(ImVec2(c.x - ts.x / 2, c.y - ts.y / 2),
                i == highlighted ? theme_colors().accent : color, text.c_str());
    drawn_to = c.x + ts.x / 2 + ImGui::GetFontSize() * 0.4f;
  }
  return centres;
}

// The decoder token under the pointer in the bottom row (-1: none).
int hovered_token(const std::vector<ImVec2>& centres, float half_h) {
  const ImVec2 m = ImGui::GetMousePos();
  if (!ImGui::IsWindowHovered() || centres.empty()) return -1;
  const float half_w =
      centres.size() > 1 ? (centres[1].x - centres[0].x) / 2 : ImGui::GetFontSize() * 3;
  for (int i = 0; i < static_cast<int>(centres.size()); ++i)
    if (std::abs(m.x - centres[i].x) <= half_w && std::abs(m.y - centres[i].y) <= half_h) return i;
  return -1;
}

}  // namespace

void Seq2SeqView::clamp(const DecoderTrace& d) {
  layer = std::clamp(layer, 0, std::max(d.layers() - 1, 0));
  head = std::clamp(head, 0, std::max(d.heads() - 1, 0));
  if (target >= d.targets()) target = -1;
}

std::string Seq2SeqView::title(const ViewContext& ctx) const {
  if (!shows_decoder(ctx)) return kPartNames[0];
  const bool cross = part == Seq2SeqPart::kCross;
  return std::string(cross ? "Cross-attention: target queries \xC3\x97 source keys"
                           : "Decoder self-attention: target queries \xC3\x97 earlier target "
                             "keys") +
         " \xC2\xB7 decoder layer " + std::to_string(layer) + ", head " + std::to_string(head);
}

void Seq2SeqView::DrawSelector(ViewContext& ctx) {
  if (!applies(ctx)) return;
  clamp(*ctx.trace->decoder);
  ImGui::PushID("seq2seq_part");
  int chosen = static_cast<int>(part);
  nlohmann::json buttons = nlohmann::json::array();
  for (int p = 0; p < 3; ++p) {
    if (p > 0) ImGui::SameLine();
    ImGui::RadioButton(kPartNames[p], &chosen, p);
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    const float k = ctx.pixel_scale;
    buttons.push_back({{"text", kPartNames[p]},
                       {"x", a.x * k},
                       {"y", a.y * k},
                       {"w", (b.x - a.x) * k},
                       {"h", (b.y - a.y) * k}});
  }
  if (ctx.layout)  // where each choice is, for tests that click one
    ctx.layout->push_back({{"view", "seq2seq_selector"},
                           {"slot", ctx.slot},
                           {"chosen", kPartNames[chosen]},
                           {"buttons", std::move(buttons)}});
  part = static_cast<Seq2SeqPart>(chosen);
  if (shows_decoder(ctx)) {
    const DecoderTrace& d = *ctx.trace->decoder;
    const float w = ImGui::GetFontSize() * 7;
    ImGui::SetNextItemWidth(w);
    ImGui::SliderInt("decoder layer", &layer, 0, std::max(d.layers() - 1, 0));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(w);
    ImGui::SliderInt("decoder head", &head, 0, std::max(d.heads() - 1, 0));
  }
  ImGui::PopID();
}

void Seq2SeqView::DrawSentences(ViewContext& ctx, float width) {
  if (!applies(ctx)) return;
  const DecoderTrace& d = *ctx.trace->decoder;
  clamp(d);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().accent), "Source:");
  ImGui::SameLine();
  ImGui::TextWrapped("%s", ctx.trace->text.c_str());
  const bool greedy = d.tokens.size() > 1 && d.tokens.back().generated;
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(theme_colors().accent),
                     greedy ? "Target (the model's translation):" : "Target:");
  ImGui::SameLine();
  ImGui::TextWrapped("%s", target_text(ctx).c_str());
  ImGui::PopTextWrapPos();
  text_dim("%s", greedy ? "Translation timeline (hover: what each token was chosen from; click: "
                          "focus it):"
                        : "Decoder tokens (click: focus one):");
  ImGui::PushID("seq2seq_timeline");
  nlohmann::json chips = nlohmann::json::array(), tooltip;
  for (int i = 0; i < d.targets(); ++i) {
    if (i > 0) ImGui::SameLine();
    if (ImGui::GetCursorPosX() > width - ImGui::GetFontSize() * 4) ImGui::NewLine();
    ImGui::PushID(i);
    const bool on = i == target;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, theme_colors().accent);
    if (ImGui::SmallButton(label(ctx, d.tokens, i).c_str())) target = on ? -1 : i;
    if (on) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) tooltip = predictions_tooltip(ctx, i);
    if (ctx.layout) chips.push_back(item_json(label(ctx, d.tokens, i), ctx.pixel_scale));
    ImGui::PopID();
  }
  ImGui::PopID();
  if (ctx.layout)
    ctx.layout->push_back({{"view", "seq2seq_timeline"},
                           {"slot", ctx.slot},
                           {"greedy", greedy},
                           {"target_text", target_text(ctx)},
                           {"chips", std::move(chips)},
                           {"tooltip", std::move(tooltip)}});
}

void Seq2SeqView::DrawHeatmap(ViewContext& ctx, ImVec2 size) {
  if (!shows_decoder(ctx)) return;
  clamp(*ctx.trace->decoder);
  const Shown s = shown_of(*ctx.trace, part, layer, head);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const Grid g = grid_for(ctx, s, origin, size);
  const WeightRange range = weight_range(*s.weights, ctx.app.fixed_range);
  draw_cells(ctx, s, g, range);
  draw_labels(ctx, s, g, target);
  draw_colorbar(ctx, g, range);
  ImGui::Dummy(size);
  hover_cell(ctx, s, g);
  if (!ctx.layout) return;
  const float k = ctx.pixel_scale;
  const ImVec2 a = g.cell_min(0, 0);
  nlohmann::json weights = nlohmann::json::array();
  for (int i = 0; i < g.rows; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int j = 0; j < g.cols; ++j) row.push_back((*s.weights)(i, j));
    weights.push_back(std::move(row));
  }
  ctx.layout->push_back({{"view", "seq2seq_heatmap"},
                         {"slot", ctx.slot},
                         {"part", kPartNames[static_cast<int>(part)]},
                         {"title", title(ctx)},
                         {"layer", layer},
                         {"head", head},
                         {"rows", g.rows},
                         {"cols", g.cols},
                         {"x0", a.x * k},
                         {"y0", a.y * k},
                         {"cell_w", g.cell_w * k},
                         {"cell_h", g.cell_h * k},
                         {"label_every_row", g.row_every},
                         {"label_every_col", g.col_every},
                         {"vmin", range.vmin},
                         {"vmax", range.vmax},
                         {"colormap", colormaps()[ctx.app.colormap].name},
                         {"row_labels", labels_json(ctx, *s.rows)},
                         {"col_labels", labels_json(ctx, *s.cols)},
                         {"weights", std::move(weights)}});
}

void Seq2SeqView::DrawArcs(ViewContext& ctx, ImVec2 size) {
  if (!shows_decoder(ctx)) return;
  clamp(*ctx.trace->decoder);
  const Shown s = shown_of(*ctx.trace, part, layer, head);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ThemeColors& colors = theme_colors();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The keys' sentence above, the queries' below; a caption at the left of each row.
  const float caption = ImGui::CalcTextSize("target (queries)").x + line;
  const float x0 = o.x + caption, w = size.x - caption - line;
  const float y_top = o.y + line, y_bottom = o.y + std::max(size.y - line, line * 4);
  dl->AddText(ImVec2(o.x, y_top - line / 2), colors.text_dim,
              (std::string(s.cols_are) + " (keys)").c_str());
  dl->AddText(ImVec2(o.x, y_bottom - line / 2), colors.text_dim,
              (std::string(s.rows_are) + " (queries)").c_str());
  const std::vector<ImVec2> keys = token_row(ctx, *s.cols, x0, w, y_top, colors.text, -1);
  const int hovered =
      hovered_token(token_row(ctx, *s.rows, x0, w, y_bottom, colors.text, target), line / 2);
  const std::vector<ImVec2> queries = [&] {
    std::vector<ImVec2> c;
    const float step = w / static_cast<float>(std::max<size_t>(s.rows->size(), 1));
    for (size_t i = 0; i < s.rows->size(); ++i)
      c.emplace_back(x0 + step * (static_cast<float>(i) + 0.5f), y_bottom);
    return c;
  }();
  const int focus = hovered >= 0 ? hovered : target;
  const WeightRange range = weight_range(*s.weights, ctx.app.fixed_range);
  nlohmann::json arcs = nlohmann::json::array();
  const float gap = line * 0.7f, k = ctx.pixel_scale;
  for (int i = 0; i < static_cast<int>(queries.size()); ++i)
    for (int j = 0; j < static_cast<int>(keys.size()); ++j) {
      const float v = (*s.weights)(i, j) / range.vmax;
      if (v < 0.05f || (focus >= 0 && i != focus)) continue;
      const ImVec2 a(queries[i].x, queries[i].y - gap), b(keys[j].x, keys[j].y + gap);
      const float mid = (a.y + b.y) / 2;
      dl->AddBezierCubic(a, ImVec2(a.x, mid), ImVec2(b.x, mid), b,
                         with_alpha(colors.accent, 0.15f + 0.85f * v), 1.0f + 4.0f * v);
      if (ctx.layout)
        arcs.push_back({{"query", i},
                        {"key", j},
                        {"weight", (*s.weights)(i, j)},
                        {"from", {a.x * k, a.y * k}},
                        {"to", {b.x * k, b.y * k}}});
    }
  ImGui::Dummy(size);
  if (hovered >= 0) predictions_tooltip(ctx, hovered);
  if (!ctx.layout) return;
  nlohmann::json top = nlohmann::json::array(), bottom = nlohmann::json::array();
  for (const ImVec2& c : keys) top.push_back({c.x * k, c.y * k});
  for (const ImVec2& c : queries) bottom.push_back({c.x * k, c.y * k});
  ctx.layout->push_back({{"view", "seq2seq_arcs"},
                         {"slot", ctx.slot},
                         {"part", kPartNames[static_cast<int>(part)]},
                         {"title", title(ctx)},
                         {"top_labels", labels_json(ctx, *s.cols)},
                         {"bottom_labels", labels_json(ctx, *s.rows)},
                         {"top", std::move(top)},
                         {"bottom", std::move(bottom)},
                         {"arcs", std::move(arcs)}});
}

}  // namespace attnscope
