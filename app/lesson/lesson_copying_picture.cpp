// Step 7's optional page (app/lesson/lesson_copying.h): the sentence said twice as word chips,
// tinted by where the copying heads look from its last word; the copying heads' patterns, each
// switched off by a click; and tiny's first guesses with the heads on and off.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>
#include <vector>

#include "app/lesson/lesson_copying.h"
#include "app/lesson/lesson_draw.h"
#include "app/lesson/lesson_pictures.h"
#include "app/ui/theme.h"

namespace attnscope {

using namespace lesson;

namespace {

std::string quoted(const std::string& s) {
  std::string q = "\"";
  q += s;
  q += '"';
  return q;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\n");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\n") - a + 1);
}

// The prompt's words (tokens joined until the next space), and where the copying heads look from
// its last token: each word's share of their mean attention.
struct Word {
  std::string text;
  float weight = 0;
  bool second = false;  // in the second copy
};

std::vector<Word> words_of(const CopyingResult& r) {
  std::vector<Word> words;
  const int n = static_cast<int>(r.tokens.size());
  const size_t second_at = trimmed(r.sentence).size() + 1;
  for (int i = 0; i < n; ++i) {
    const Token& t = r.tokens[i];
    if (t.special || t.start < 0 || t.end > static_cast<int>(r.prompt.size())) continue;
    const std::string piece = r.prompt.substr(t.start, t.end - t.start);
    float w = 0;
    for (const Matrix& m : r.weights) w += m(n - 1, i) / r.weights.size();
    const bool starts = words.empty() || piece.empty() || piece[0] == ' ';
    if (starts) words.push_back({"", 0, static_cast<size_t>(t.start) + 1 >= second_at});
    words.back().text += trimmed(piece);
    words.back().weight += w;
  }
  return words;
}

std::string ordinal(int k) {
  const int mod100 = k % 100, mod10 = k % 10;
  const char* suffix = (mod100 >= 11 && mod100 <= 13) ? "th"
                       : mod10 == 1                   ? "st"
                       : mod10 == 2                   ? "nd"
                       : mod10 == 3                   ? "rd"
                                                      : "th";
  std::string s = std::to_string(k);
  s += suffix;
  return s;
}

// 4096 → "4,096" (a count: never negative).
std::string thousands(int v) {
  const std::string digits = std::to_string(v);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

std::string head_name(const HeadRef& h) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "layer %d, head %d", h.layer, h.head);
  return buf;
}

// The sentence said twice as chips: each copy on its own row, the second under the first word for
// word, so the blank tiny fills in sits under the word it copies (the chips wrap when a copy is
// wider than the page). Tinted by where the copying heads look from the last word. Returns the
// height used.
float draw_chips(LessonPictureContext& ctx, const std::vector<Word>& words, ImVec2 at,
                 ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  int best = -1, first = 0;
  for (int i = 0; i < static_cast<int>(words.size()); ++i) {
    if (best < 0 || words[i].weight > words[best].weight) best = i;
    if (!words[i].second) ++first;
  }
  const float top_w = best >= 0 ? std::max(words[best].weight, 1e-6f) : 1.0f;
  const bool paired = first >= 1 && static_cast<int>(words.size()) == 2 * first - 1;
  auto chip_w = [](ImFont* f, const std::string& s) { return text_w(f, s) + sz(f) * 0.6f; };
  auto copy_w = [&](ImFont* f) {
    float w = 0;
    for (int i = 0; i < first; ++i) w += chip_w(f, words[i].text) + sz(f) * 0.35f;
    return w;
  };
  // The largest font that puts each copy on one row; else the largest whose chips wrap into at
  // most four rows.
  ImFont* font = nullptr;
  bool rows_of_copies = false;
  for (ImFont* f : {ctx.fonts.lesson, ctx.fonts.big, ctx.fonts.ui})
    if (paired && copy_w(f) <= size.x && 2 * sz(f) * 1.6f <= size.y) {
      font = f, rows_of_copies = true;
      break;
    }
  if (!font) {
    font = ctx.fonts.ui;
    for (ImFont* f : {ctx.fonts.lesson, ctx.fonts.big}) {
      float x = 0;
      int rows = 1;
      for (const Word& w : words) {
        const float cw = chip_w(f, w.text);
        if (x > 0 && x + cw > size.x) ++rows, x = 0;
        x += cw + sz(f) * 0.35f;
      }
      if (rows <= 4 && rows * sz(f) * 1.6f <= size.y) {
        font = f;
        break;
      }
    }
  }
  const float pad = sz(font) * 0.3f, gap = sz(font) * 0.35f, row_h = sz(font) * 1.6f,
              chip_h = sz(font) * 1.3f;
  float x = at.x, y = at.y;
  std::vector<float> column;  // the first copy's chip positions
  auto place = [&](int i, float cw) {
    if (rows_of_copies) {
      if (i == first) x = at.x, y += row_h;  // the second copy starts a row
      const ImVec2 a(i < first ? x : column[i - first], y);
      if (i < first) column.push_back(x);
      x += cw + gap;
      return a;
    }
    if (x > at.x && x + cw > at.x + size.x) x = at.x, y += row_h;
    const ImVec2 a(x, y);
    x += cw + gap;
    return a;
  };
  nlohmann::json chips = nlohmann::json::array();
  for (int i = 0; i < static_cast<int>(words.size()); ++i) {
    const Word& w = words[i];
    const float cw = chip_w(font, w.text);
    const ImVec2 a = place(i, cw), b(a.x + cw, a.y + chip_h);
    const int alpha = static_cast<int>(140 * std::clamp(w.weight / top_w, 0.0f, 1.0f));
    dl->AddRectFilled(a, b, with_alpha(colors.accent, alpha), sz(font) * 0.2f);
    if (i == best) dl->AddRect(a, b, colors.focus, sz(font) * 0.2f, 0, 3.0f);
    text(font, ImVec2(a.x + pad, a.y + sz(font) * 0.15f), w.second ? colors.text : colors.text_dim,
         w.text);
    chips.push_back({{"word", w.text},
                     {"weight", w.weight},
                     {"second", w.second},
                     {"x", a.x * ctx.pixel_scale},
                     {"y", a.y * ctx.pixel_scale}});
  }
  // The blank: the word tiny is asked for.
  const float cw = chip_w(font, "?") + pad * 2;
  const ImVec2 a = place(static_cast<int>(words.size()), cw), b(a.x + cw, a.y + chip_h);
  dl->AddRect(a, b, colors.accent, sz(font) * 0.2f, 0, 2.0f);
  text(font, ImVec2(a.x + pad * 2, a.y + sz(font) * 0.15f), colors.accent, "?");
  float used = y + row_h - at.y;
  // In words: where the copying heads look from the last word.
  std::string looks;
  if (best >= 0 && !words.empty()) {
    looks = "Reading " + quoted(words.back().text) + ", the heads that copy look back at " +
            quoted(words[best].text) + ": " + percent(words[best].weight) + " of their attention.";
    used += wrapped(ctx.fonts.big, ImVec2(at.x, at.y + used), size.x, colors.text_dim, looks);
  }
  if (ctx.layout) {
    nlohmann::json rec = box(ctx, "copying_sentence", at, ImVec2(size.x, used));
    rec["chips"] = chips;
    rec["rows_of_copies"] = rows_of_copies;
    rec["blank"] = {{"x", a.x * ctx.pixel_scale}, {"y", a.y * ctx.pixel_scale}};
    rec["looked_at"] = best >= 0 ? words[best].text : std::string();
    rec["text"] = looks;
    ctx.layout->push_back(rec);
  }
  return used;
}

// The copying heads' patterns in a row; a click switches one off or on. Returns the height used.
float draw_heads(LessonPictureContext& ctx, CopyingPage& page, ImVec2 at, ImVec2 size) {
  const CopyingResult& r = *page.result;
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int k = static_cast<int>(r.heads.size());
  float y = at.y;
  const std::string title =
      k == 1 ? "The head that copies (click it)" : "The heads that copy (click one)";
  y += fitted_line(ctx, ImVec2(at.x, y), size.x, colors.accent, title);
  ImFont* cap = ctx.fonts.big;
  const float gap = sz(cap) * 0.8f;
  const float caption_h = sz(cap) * 2.5f;
  // As many columns as make the patterns largest.
  float side = 0;
  int cols = k;
  for (int c = 1; c <= k; ++c) {
    const int rows = (k + c - 1) / c;
    const float s = std::min((size.x - gap * (c - 1)) / c, (at.y + size.y - y) / rows - caption_h);
    if (s > side) side = s, cols = c;
  }
  if (side < text_w(cap, "layer 0, head 0")) cap = ctx.fonts.ui;
  side = std::max(side, 8.0f);
  for (int i = 0; i < k; ++i) {
    const HeadRef& h = r.heads[i];
    const bool off = page.off & (1u << i);
    const ImVec2 a(at.x + (i % cols) * (side + gap), y + (i / cols) * (side + caption_h));
    draw_heat(ctx, "copying_head", r.weights[i], a, side,
              {{"layer", h.layer}, {"head", h.head}, {"induction", r.induction[i]}, {"off", off}});
    if (off) {
      // Switched off: greyed, crossed out.
      const ImVec2 b(a.x + side, a.y + side);
      dl->AddRectFilled(a, b, with_alpha(colors.text_dim, 170));
      dl->AddLine(a, b, colors.error, 3.0f);
      dl->AddLine(ImVec2(b.x, a.y), ImVec2(a.x, b.y), colors.error, 3.0f);
    }
    ImGui::SetCursorScreenPos(a);
    const std::string id = "##copying_head" + std::to_string(i);
    if (ImGui::InvisibleButton(id.c_str(), ImVec2(side, side))) page.off ^= 1u << i;
    text(cap, ImVec2(a.x, a.y + side + 2), colors.text, head_name(h));
    text(cap, ImVec2(a.x, a.y + side + 2 + sz(cap) * 1.15f), off ? colors.error : colors.text_dim,
         off ? "switched off" : "on");
  }
  return y + ((k + cols - 1) / cols) * (side + caption_h) - at.y;
}

// tiny's first guesses: with the heads on, and in the current switch state.
void draw_guesses(LessonPictureContext& ctx, const CopyingPage& page, ImVec2 at, ImVec2 size) {
  const CopyingResult& r = *page.result;
  const CopyingOutcome& on = r.outcomes[0];
  const CopyingOutcome& now = *page.shown_outcome();
  const bool switched = now.off != 0;
  const ThemeColors& colors = theme_colors();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* lf = ctx.fonts.lesson;
  float y = at.y;
  std::string title = r.model_name;
  title += "'s guess for the next word";
  y += fitted_line(ctx, ImVec2(at.x, y), size.x, colors.accent, title);
  // Rows: the repeated word, then the other first guesses (heads on, then off).
  struct Row {
    int id;
    std::string text;
    double on = 0, now = 0;
  };
  std::vector<Row> rows = {{r.target.id, trimmed(r.target.text), on.target, now.target}};
  auto add = [&](const TokenProbability& p) {
    for (const Row& row : rows)
      if (row.id == p.id) return;
    rows.push_back({p.id, trimmed(p.text), 0, 0});
  };
  const size_t kRows = 4;
  for (const TokenProbability& p : on.top)
    if (rows.size() < (switched ? kRows - 1 : kRows)) add(p);
  if (switched)
    for (const TokenProbability& p : now.top)
      if (rows.size() < kRows) add(p);
  for (size_t i = 1; i < rows.size(); ++i) {
    rows[i].on = on.probability[static_cast<size_t>(rows[i].id)];
    rows[i].now = now.probability[static_cast<size_t>(rows[i].id)];
  }
  // Columns: the word, heads on, switched off.
  const int count = std::popcount(now.off);
  std::string off_title = "switched off";
  if (switched && count < static_cast<int>(r.heads.size())) {
    int i = 0;
    while (!(now.off & (1u << i))) ++i;
    off_title = count == 1 ? head_name(r.heads[i]) + " off" : std::to_string(count) + " off";
  }
  ImFont* head_font = ctx.fonts.big;
  const float row_h = std::min(sz(lf) * 1.45f, (at.y + size.y - y) / (rows.size() + 3.2f));
  ImFont* row_font = row_h >= sz(lf) * 1.2f ? lf : ctx.fonts.big;
  float word_w = text_w(row_font, "next word");
  for (const Row& row : rows) word_w = std::max(word_w, text_w(row_font, quoted(row.text)));
  word_w += sz(row_font);
  const float col_w = (size.x - word_w) / 2;
  const float num_w = text_w(row_font, "100%") + sz(row_font) * 0.4f;
  text(head_font, ImVec2(at.x, y), colors.text_dim, "next word");
  text(head_font, ImVec2(at.x + word_w, y), colors.text_dim, "heads on");
  text(head_font, ImVec2(at.x + word_w + col_w, y), switched ? colors.error : colors.text_dim,
       off_title);
  y += sz(head_font) * 1.4f;
  double top = 1e-9;
  for (const Row& row : rows) top = std::max({top, row.on, row.now});
  nlohmann::json rec_rows = nlohmann::json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const float ty = y + (row_h - sz(row_font)) / 2;
    text(row_font, ImVec2(at.x, ty), i == 0 ? colors.focus : colors.text, quoted(row.text));
    const double values[2] = {row.on, row.now};
    for (int c = 0; c < 2; ++c) {
      const float x = at.x + word_w + c * col_w;
      if (c == 1 && !switched) {
        text(row_font, ImVec2(x, ty), colors.text_dim, "?");
        continue;
      }
      const double p = values[c];
      const std::string shown = percent(p);
      const float bar = static_cast<float>((col_w - num_w - sz(lf) * 0.5f) * p / top);
      if (bar > 0)
        dl->AddRectFilled(ImVec2(x, y + row_h * 0.15f), ImVec2(x + bar, y + row_h * 0.85f),
                          with_alpha(c == 0 ? colors.accent : colors.error, 110));
      text(row_font, ImVec2(x + bar + sz(row_font) * 0.2f, ty), colors.text, shown);
    }
    rec_rows.push_back({{"id", row.id}, {"text", row.text}, {"on", row.on}, {"now", row.now}});
    y += row_h;
  }
  // Where the repeated word ranks among every token the model could write.
  char rank[160];
  if (switched)
    std::snprintf(rank, sizeof rank, "\"%s\": %s guess of %s, now %s", rows[0].text.c_str(),
                  ordinal(on.target_rank).c_str(), thousands(r.vocab).c_str(),
                  ordinal(now.target_rank).c_str());
  else
    std::snprintf(rank, sizeof rank, "\"%s\" is its %s guess of %s tokens", rows[0].text.c_str(),
                  ordinal(on.target_rank).c_str(), thousands(r.vocab).c_str());
  y += sz(lf) * 0.3f;
  wrapped(ctx.fonts.big, ImVec2(at.x, y), size.x, colors.text_dim, rank);
  if (ctx.layout) {
    nlohmann::json rec = box(ctx, "copying_guesses", at, size);
    rec["rows"] = rec_rows;
    rec["rank"] = rank;
    ctx.layout->push_back(rec);
  }
}

nlohmann::json tokens_json(const std::vector<TokenProbability>& top) {
  nlohmann::json out = nlohmann::json::array();
  for (const TokenProbability& p : top)
    out.push_back({{"id", p.id}, {"text", p.text}, {"probability", p.probability}});
  return out;
}

}  // namespace

void draw_copying_page(LessonPictureContext& ctx, CopyingPage& page, ImVec2 at, ImVec2 size) {
  const ThemeColors& colors = theme_colors();
  ImFont* lf = ctx.fonts.lesson;
  if (!page.result) {
    if (page.error.empty())
      text(lf, at, colors.text_dim, "tiny is reading the sentence\xE2\x80\xA6");
    else
      wrapped(lf, at, size.x, colors.error, page.error);
    return;
  }
  if (!page.shown_outcome()) page.off = 0;
  const CopyingResult& r = *page.result;
  const std::vector<Word> words = words_of(r);
  float y = at.y;
  y += draw_chips(ctx, words, at, ImVec2(size.x, size.y * 0.3f));
  y += sz(lf) * 0.3f;
  const float gap = sz(lf) * 1.2f;
  const float left = size.x * 0.5f;
  draw_heads(ctx, page, ImVec2(at.x, y), ImVec2(left, at.y + size.y - y));
  draw_guesses(ctx, page, ImVec2(at.x + left + gap, y),
               ImVec2(size.x - left - gap, at.y + size.y - y));
  if (ctx.layout) {
    const CopyingOutcome& now = *page.shown_outcome();
    nlohmann::json b = box(ctx, "copying", at, size);
    b["model"] = r.model_name;
    b["sentence"] = r.sentence;
    b["prompt"] = r.prompt;
    nlohmann::json tokens = nlohmann::json::array();
    for (const Token& t : r.tokens) tokens.push_back(t.text);
    b["tokens"] = tokens;
    b["target"] = {{"id", r.target.id}, {"text", r.target.text}};
    nlohmann::json heads = nlohmann::json::array(), off = nlohmann::json::array();
    for (size_t i = 0; i < r.heads.size(); ++i) {
      heads.push_back({r.heads[i].layer, r.heads[i].head});
      if (now.off & (1u << i)) off.push_back({r.heads[i].layer, r.heads[i].head});
    }
    b["heads"] = heads;
    b["induction"] = r.induction;
    b["off"] = off;
    b["before"] = r.outcomes[0].target;
    b["after"] = now.target;
    b["rank_before"] = r.outcomes[0].target_rank;
    b["rank_after"] = now.target_rank;
    b["top_before"] = tokens_json(r.outcomes[0].top);
    b["top_after"] = tokens_json(now.top);
    b["vocab"] = r.vocab;
    // Every switch state, for tests to hold against `attnscope predict --ablate`.
    nlohmann::json states = nlohmann::json::array();
    for (const CopyingOutcome& o : r.outcomes) {
      nlohmann::json which = nlohmann::json::array();
      for (size_t i = 0; i < r.heads.size(); ++i)
        if (o.off & (1u << i)) which.push_back({r.heads[i].layer, r.heads[i].head});
      states.push_back({{"off", which}, {"target", o.target}, {"rank", o.target_rank}});
    }
    b["states"] = states;
    ctx.layout->push_back(b);
  }
}

}  // namespace attnscope
