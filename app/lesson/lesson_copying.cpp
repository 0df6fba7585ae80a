#include "app/lesson/lesson_copying.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/analysis/head_summary.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"
#include "core/model/tiny/tiny_model.h"
#include "core/util/error.h"

namespace attnscope {

namespace {

bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string trimmed(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && space(s[a])) ++a;
  while (b > a && space(s[b - 1])) --b;
  return s.substr(a, b - a);
}

// A token's text as a class reads it: no leading space.
std::string word_of(const std::string& token_text) {
  return trimmed(token_text);
}

}  // namespace

std::string copying_prompt(const std::string& sentence) {
  const std::string s = trimmed(sentence);
  size_t last = s.size();  // where the last word starts
  while (last > 0 && !space(s[last - 1])) --last;
  std::string head = trimmed(s.substr(0, last));
  if (head.empty()) return "";
  std::string prompt = s;
  prompt += ' ';
  prompt += head;
  return prompt;
}

std::shared_ptr<const CopyingResult> compute_copying(std::shared_ptr<const Model> model,
                                                     const std::string& sentence) {
  auto r = std::make_shared<CopyingResult>();
  r->sentence = sentence;
  r->prompt = copying_prompt(sentence);
  if (r->prompt.empty())
    throw Error(
        "Type a sentence of two words or more: tiny reads it twice and guesses its last "
        "word the second time.");
  if (!model) model = open_model(kTinyModelSpec);
  r->model = model;
  r->model_name = model->info().name;
  const Intervenable* intervene = intervenable(*model);
  if (!intervene) throw Error(r->model_name + " cannot switch its heads off.");
  auto cpu = make_cpu_backend();
  const std::string s = trimmed(sentence);
  std::string twice = s;
  twice += ' ';
  twice += s;
  const Tokens full = model->tokenize(twice);
  const Tokens asked = model->tokenize(r->prompt);
  std::unique_ptr<Probe> probe = intervene->probe(r->prompt, *cpu);
  r->tokens = probe->tokens();
  const size_t n = r->tokens.size();
  // The prompt's tokens begin the sentence said in full (byte-level BPE splits at the spaces),
  // and the model read all of them.
  bool prefix = n == asked.size() && full.size() > n;
  for (size_t i = 0; prefix && i < n; ++i) prefix = full[i].id == r->tokens[i].id;
  if (n != asked.size())
    throw Error("The sentence said twice is too long for " + r->model_name +
                ": try a shorter one.");
  if (!prefix) throw Error("tiny reads the sentence's last word differently the second time.");
  const int at = static_cast<int>(n) - 1;
  const int target = full[n].id;

  // Heads on: the weights of every head, and which of them copy.
  std::vector<std::vector<Matrix>> attention;
  const RowVector clean = probe->logits(Interventions{}, at, &attention);
  const std::vector<int> ids = token_ids(r->tokens);
  std::vector<std::tuple<float, int, int>> copying;  // induction, layer, head
  for (int l = 0; l < static_cast<int>(attention.size()); ++l)
    for (int h = 0; h < static_cast<int>(attention[l].size()); ++h) {
      const float score = summarize_head(attention[l][h], -1, ids).induction;
      if (score >= kCopyingInduction) copying.emplace_back(score, l, h);
    }
  if (copying.empty())
    throw Error("On this sentence no head of " + r->model_name +
                " copies: try one with more words.");
  std::sort(copying.begin(), copying.end(),
            [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  copying.resize(std::min<size_t>(copying.size(), kMaxCopyingHeads));
  std::sort(copying.begin(), copying.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<1>(a), std::get<2>(a)) < std::tie(std::get<1>(b), std::get<2>(b));
  });
  for (const auto& [score, l, h] : copying) {
    r->heads.push_back({l, h});
    r->induction.push_back(score);
    r->weights.push_back(attention[l][h]);
  }

  // Every switch state: tiny is small, each is a part of one forward pass.
  const unsigned states = 1u << r->heads.size();
  for (unsigned off = 0; off < states; ++off) {
    Interventions iv;
    for (size_t i = 0; i < r->heads.size(); ++i)
      if (off & (1u << i)) iv.ablate.push_back(r->heads[i]);
    const RowVector logits = off == 0 ? clean : probe->logits(iv, at);
    const std::vector<double> lp = log_softmax(logits);
    CopyingOutcome o;
    o.off = off;
    const double mine = lp[static_cast<size_t>(target)];
    o.probability.reserve(lp.size());
    for (double v : lp) o.probability.push_back(std::exp(v));
    o.target = std::exp(mine);
    o.target_rank = 1 + static_cast<int>(std::count_if(lp.begin(), lp.end(),
                                                       [&](double v) { return v > mine; }));
    o.top = top_tokens(*probe, logits, kCopyingTop);
    r->outcomes.push_back(std::move(o));
  }
  r->vocab = probe->vocab();
  const double lp = std::log(r->outcomes[0].target);
  r->target = {target, probe->token_text(target), lp, r->outcomes[0].target};
  return r;
}

const CopyingOutcome* CopyingPage::shown_outcome() const {
  if (!result || off >= result->outcomes.size()) return nullptr;
  return &result->outcomes[off];
}

void CopyingPage::sync() {
  std::shared_ptr<const CopyingResult> got;
  std::string why;
  if (task.take(got, why)) {
    // The newest request's answer: for `asked`.
    if (!got || !result || got->heads != result->heads) off = 0;
    result = got;
    error = why;
    if (got) model = got->model;
  }
  if (asked != sentence || (!result && error.empty() && !task.busy())) {
    asked = sentence;
    task.start([m = model, s = sentence] { return compute_copying(m, s); });
  }
}

bool CopyingPage::busy() const {
  return shown && (task.busy() || asked != sentence);
}

CopyingPage& copying_page(const App& app) {
  // One page per App (the window has one); UI thread only.
  static std::map<const App*, CopyingPage> pages;
  return pages[&app];
}

bool copying_available() {
  try {
    tiny_model_folder();
    return true;
  } catch (const Error&) {
    return false;
  }
}

void copying_open(App& app) {
  CopyingPage& page = copying_page(app);
  page.shown = true;
  page.off = 0;
  app.state.lesson_mode.revealed = true;  // the page asks its own question: no hiding
}

void copying_close(App& app) {
  CopyingPage& page = copying_page(app);
  page.shown = false;
  page.off = 0;
}

bool copying_shown(const App& app) {
  const LessonMode& m = app.state.lesson_mode;
  return m.active && m.step == 7 && copying_page(app).shown;
}

bool copying_handle_key(App& app, LessonKey key) {
  LessonMode& m = app.state.lesson_mode;
  CopyingPage& page = copying_page(app);
  if (!m.active) return false;
  if (m.step == 8 && key == LessonKey::kPrevious && copying_available()) {
    lesson_go_to(app, 7);
    copying_open(app);
    return true;
  }
  if (m.step != 7) return false;
  if (!page.shown) {
    // Step 7's heads, their numbers shown: "next" opens the page.
    if (key == LessonKey::kNext && !(m.predict && !m.revealed) && copying_available()) {
      copying_open(app);
      return true;
    }
    return false;
  }
  switch (key) {
    case LessonKey::kNext:
      // A clicker has two buttons: the first "next" switches the heads off, the second moves on.
      if (page.result && page.off != page.all()) {
        page.off = page.all();
      } else if (page.result || !page.error.empty()) {
        copying_close(app);
        lesson_go_to(app, 8);
      }
      return true;  // still computing: wait
    case LessonKey::kReveal:
      // Switches off only, as Space only ever reveals.
      page.off = page.all();
      return true;
    case LessonKey::kPrevious:
      copying_close(app);  // back to step 7's heads
      return true;
    default:
      copying_close(app);
      return false;
  }
}

const LessonStepText& copying_step_text() {
  static const LessonStepText text = {
      "Try it: the heads that copy",
      "",  // copying_say(), with the model's numbers
      "What happens to the model's guess when the heads that copy are switched off?"};
  return text;
}

std::string percent(double p) {
  const double v = p * 100;
  int decimals = 0;
  if (v < 10 && v > 0) decimals = std::clamp(1 - static_cast<int>(std::floor(std::log10(v))), 1, 4);
  char buf[32];
  if (v > 0 && v < 0.0001)
    std::snprintf(buf, sizeof buf, "< 0.0001%%");
  else
    std::snprintf(buf, sizeof buf, "%.*f%%", decimals, v);
  return buf;
}

std::string copying_say(const CopyingPage& page) {
  const CopyingResult* r = page.result.get();
  if (!r) {
    if (!page.error.empty())
      return "tiny reads the sentence twice and guesses its last word the second time: type "
             "another sentence above.";
    return "tiny, a small trained transformer, is reading the sentence twice\xE2\x80\xA6";
  }
  const CopyingOutcome* o = page.shown_outcome();
  const std::string& prompt = r->prompt;
  const std::string before = prompt.substr(prompt.find_last_of(" \t\n\r") + 1),
                    next = word_of(r->target.text);
  std::string say;
  if (!o || o->off == 0) {
    say = "tiny has seen this sentence once, so it can copy: after \"";
    say += before;
    say += "\" came \"";
    say += next;
    say += "\". It guesses \"";
    say += next;
    say += "\" with ";
    say += percent(r->outcomes[0].target);
    say += ". Switch off the heads that copy and watch that guess.";
    return say;
  }
  const int count = std::popcount(o->off);
  const int all = static_cast<int>(r->heads.size());
  if (count == all) {
    say = all == 1 ? "With the head that copies switched off, \""
                   : "With the heads that copy switched off, \"";
  } else if (count == 1) {
    int i = 0;
    while (!(o->off & (1u << i))) ++i;
    char which[64];
    std::snprintf(which, sizeof which, "With layer %d head %d switched off, \"", r->heads[i].layer,
                  r->heads[i].head);
    say = which;
  } else {
    char which[64];
    std::snprintf(which, sizeof which, "With %d of the %d heads that copy switched off, \"", count,
                  all);
    say = which;
  }
  const double was = r->outcomes[0].target, now = o->target;
  say += next;
  say += now < was ? "\" falls from " : now > was ? "\" rises from " : "\" stays at ";
  say += percent(was);
  if (now != was) {
    say += " to ";
    say += percent(now);
  }
  say += count == all ? ": tiny can no longer look back at what came next the first time."
                      : ": the other heads still copy.";
  return say;
}

}  // namespace attnscope
