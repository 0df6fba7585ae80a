#include "app/views/next_token_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "app/render/text_layer.h"
#include "app/ui/theme.h"
#include "app/views/draw_util.h"

namespace attnscope {

std::string interventions_summary(const Interventions& iv, int max_items) {
  std::string out;
  int n = 0;
  const auto add = [&](const std::string& item) {
    if (n++ >= max_items) return;
    if (!out.empty()) out += ", ";
    out += item;
  };
  for (const HeadRef& h : iv.ablate)
    add("L" + std::to_string(h.layer) + ".H" + std::to_string(h.head) + " off");
  for (const EdgeKnockout& k : iv.knockout) {
    std::string item = "L" + std::to_string(k.layer);
    if (k.head >= 0) item += ".H" + std::to_string(k.head);
    item += " ";
    item += std::to_string(k.query);
    item += "\xE2\x86\x9B";  // ↛
    item += std::to_string(k.key);
    add(item);
  }
  if (n > max_items) out += ", +" + std::to_string(n - max_items);
  if (!iv.ablate.empty() && iv.ablate_mode == AblationMode::kMean) out += " (mean)";
  return out;
}

bool draw_next_token(ViewContext& ctx) {
  if (!ctx.trace || !ctx.probe) return false;
  const ProbeResult& r = *ctx.probe;
  const ThemeColors& colors = theme_colors();
  if (!r.error.empty()) {
    text_wrapped_message(r.error, colors.error);
    return true;
  }
  if (r.at < 0 || r.at >= static_cast<int>(ctx.trace->tokens.size()) || r.next.empty())
    return false;
  std::string title = "after \"";
  title += token_label(*ctx.trace, r.at, 16);
  title += "\" (#";
  title += std::to_string(r.at);
  title +=
      r.intervened ? ") the model predicts, before \xE2\x86\x92 after" : ") the model predicts";
  shaped_text(title, colors.accent);
  const auto& result = ctx.app.slots[ctx.slot].result;
  if (r.intervened && result) {
    char kl[64];
    std::snprintf(kl, sizeof kl, "KL(before \xE2\x80\x96 after) = %.3f nats \xC2\xB7 ", r.kl);
    text_dim("%s%s", kl, interventions_summary(result->interventions).c_str());
  } else if (ctx.toggle_ablation) {
    text_dim("Alt+click a head in the model view to switch it off, Ctrl+click a cell to cut it");
  }
  const float font = ImGui::GetFontSize();
  ImGui::PushFont(ctx.fonts.mono);
  const float number_w = ImGui::CalcTextSize("100.0%").x, delta_w = ImGui::CalcTextSize("-10.00").x;
  ImGui::PopFont();
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float width = ImGui::GetContentRegionAvail().x;
  const float word_w = std::min(font * 8, width * 0.3f);
  const int bars = r.intervened ? 2 : 1;
  const float rest = width - word_w - gap - (r.intervened ? delta_w + gap : 0.0f);
  const float bar_w = std::clamp(rest / bars - number_w - 2 * gap, font * 2, font * 12);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (r.intervened) {  // column heads
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float x0 = p.x + word_w + gap, x1 = x0 + bar_w + number_w + 2 * gap;
    dl->AddText(ImVec2(x0, p.y), colors.text_dim, "before");
    dl->AddText(ImVec2(x1, p.y), colors.text_dim, "after");
    dl->AddText(ImVec2(x1 + bar_w + number_w + 2 * gap, p.y), colors.text_dim, "\xCE\x94log p");
    ImGui::Dummy(ImVec2(width, ImGui::GetTextLineHeight()));
  }
  const int target = ctx.app.interventions.target;
  // Bars on one scale, the largest probability shown filling its column (a small model's 4% is
  // still visible; the numbers beside them say how much).
  double largest = 1e-9;
  for (const NextTokenRow& row : r.next) largest = std::max({largest, row.before, row.after});
  for (std::size_t i = 0; i < r.next.size(); ++i) {
    const NextTokenRow& row = r.next[i];
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::PushID(static_cast<int>(i));
    // The whole row picks the token as the target of effect and dla.
    if (ImGui::InvisibleButton("##pick", ImVec2(std::max(1.0f, width), h))) {
      ctx.app.interventions.target = row.id == target ? -1 : row.id;
      ctx.app.interventions.target_input.clear();
      ctx.app.interventions.effects_cancelled = false;
    }
    help_tooltip("click: measure each head's effect and dla on this token (model view)");
    ImGui::PopID();
    if (row.id == target)
      dl->AddRectFilled(p, ImVec2(p.x + width, p.y + h), with_alpha(colors.focus, 0.18f));
    ImGui::PushClipRect(p, ImVec2(p.x + word_w, p.y + h), true);
    text_layer().draw(dl, p, bytes_label(row.text, 16), font, colors.text);
    ImGui::PopClipRect();
    float x = p.x + word_w + gap;
    const auto bar = [&](double prob, ImU32 color) {
      const float len = static_cast<float>(std::clamp(prob / largest, 0.0, 1.0)) * bar_w;
      dl->AddRectFilled(ImVec2(x, p.y + 3), ImVec2(x + len, p.y + h - 3), color, 2.0f);
      char buf[16];
      std::snprintf(buf, sizeof buf, "%5.1f%%", prob * 100.0);
      ImGui::PushFont(ctx.fonts.mono);
      dl->AddText(ImVec2(x + bar_w + gap, p.y), colors.text, buf);
      ImGui::PopFont();
      x += bar_w + number_w + 2 * gap;
    };
    bar(row.before, with_alpha(colors.arc, 0.56f));
    if (r.intervened) {
      bar(row.after, with_alpha(colors.warning, 0.8f));
      char buf[16];
      std::snprintf(buf, sizeof buf, "%+.2f", row.delta_logprob);
      ImGui::PushFont(ctx.fonts.mono);
      const ImU32 c = row.delta_logprob < -0.01 ? colors.error : colors.text_dim;
      dl->AddText(ImVec2(x, p.y), c, std::isfinite(row.delta_logprob) ? buf : "-inf");
      ImGui::PopFont();
    }
  }
  if (r.intervened)
    text_dim(
        "before: the clean run; after: with the interventions; click a token to measure "
        "each head's effect on it (model view)");
  if (ctx.layout) {
    nlohmann::json rows = nlohmann::json::array();
    for (const NextTokenRow& row : r.next)
      rows.push_back({{"id", row.id},
                      {"text", row.text},
                      {"before", row.before},
                      {"after", row.after},
                      {"delta_logprob", row.delta_logprob}});
    ctx.layout->push_back({{"view", "next_token"},
                           {"slot", ctx.slot},
                           {"at", r.at},
                           {"intervened", r.intervened},
                           {"kl", r.kl},
                           {"rows", rows}});
  }
  return true;
}

}  // namespace attnscope
