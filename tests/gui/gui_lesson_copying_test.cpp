// Step 7's optional page (issue 27, app/lesson/lesson_copying.h) under Xvfb: the built-in tiny
// transformer reads a sentence said twice; PageDown on step 7 opens the page, the next PageDown (or
// Space) switches its copying heads off, and the guess of the repeated word falls. Every number on
// the page is held against the command line: the heads that copy against `heads --json`'s
// induction scores, their patterns against `export`, each switch state's probability and rank
// against `predict --ablate`. The explorer never gets a head switched off.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gui_lesson_util.h"

namespace attnscope {
namespace {

using test::AppRun;
using test::find_record;
using test::find_records;
using test::read_json;
using test::run_lesson;
using test::shell_quote;

// What the page reads (app/lesson/lesson_copying.h's kCopyingSentence, then it again without its
// last word).
const std::string kSentence = "A red fox saw a blue moon over the green tree.";
const std::string kPrompt =
    "A red fox saw a blue moon over the green tree. A red fox saw a blue moon over the green";
constexpr double kCopyingInduction = 0.2;  // as the app's

// `attnscope ARGS`: what it prints, as JSON.
nlohmann::json cli_json(const std::string& args) {
  const std::string out = test::temp_dir() + "/out.json";
  EXPECT_EQ(test::run_app(args + " > " + shell_quote(out)), 0) << args;
  return read_json(out);
}

// The page computes on the CPU; so does the command line here.
const std::string kTiny = "--model tiny --backend cpu --text " + shell_quote(kPrompt);

// Every token's probability from `predict` with these heads switched off ("" for none).
std::map<int, double> predict(const std::string& ablate) {
  const nlohmann::json doc =
      cli_json("predict " + kTiny + " --top 4096" + (ablate.empty() ? "" : " --ablate " + ablate));
  EXPECT_EQ(doc["predictions"].size(), 4096u) << "every token of tiny's vocabulary";
  std::map<int, double> p;
  for (const auto& x : doc["predictions"]) p[x["id"].get<int>()] = x["probability"];
  return p;
}

int rank_of(const std::map<int, double>& p, int id) {
  int rank = 1;
  for (const auto& other : p) rank += other.second > p.at(id);
  return rank;
}

// "2.0,2.3" from [[2, 0], [2, 3]].
std::string head_list(const nlohmann::json& heads) {
  std::string s;
  for (const auto& h : heads) {
    if (!s.empty()) s += ",";
    s += std::to_string(h[0].get<int>());
    s += ".";
    s += std::to_string(h[1].get<int>());
  }
  return s;
}

// The page's way of printing a probability: two significant digits below 10% ("12%", "0.076%").
std::string percent(double p) {
  const double v = p * 100;
  const int decimals =
      v >= 10 ? 0 : std::clamp(1 - static_cast<int>(std::floor(std::log10(v))), 1, 4);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, v);
  return buf;
}

void expect_probability(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-6 + 1e-4 * want) << what;
}

// The page as the window drew it, at 1600x1000 in the light theme; kept in the temp folder for a
// person to look at.
AppRun page(const std::string& keys, const std::string& keep_as = "") {
  AppRun r = run_lesson("--lesson 7 --keys " + keys, "1600x1000");
  if (r.rc == 0 && !keep_as.empty())
    std::filesystem::copy_file(r.dir + "/shot.png",
                               std::filesystem::temp_directory_path() / keep_as,
                               std::filesystem::copy_options::overwrite_existing);
  return r;
}

TEST(LessonCopying, SwitchingTheCopyingHeadsOffMakesTheRepeatedWordFallAsPredictSays) {
  const AppRun on = page("pagedown", "attnscope-lesson-copying-on.png");
  const AppRun off = page("pagedown,pagedown", "attnscope-lesson-copying-off.png");
  for (const AppRun* r : {&on, &off}) ASSERT_EQ(r->rc, 0);
  const nlohmann::json* lesson = find_record(off.layout, "lesson");
  ASSERT_NE(lesson, nullptr);
  EXPECT_EQ((*lesson)["step"], 7) << "the page belongs to step 7: sessions keep steps 1-8";
  EXPECT_EQ((*lesson)["page"], "copying");
  const nlohmann::json* a = find_record(on.layout, "lesson_picture", "copying");
  const nlohmann::json* b = find_record(off.layout, "lesson_picture", "copying");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ((*b)["model"], "tiny");
  EXPECT_EQ((*b)["sentence"], kSentence);
  EXPECT_EQ((*b)["prompt"], kPrompt);

  // The heads that copy: those whose induction score on the prompt reaches 0.2 (`heads`).
  const nlohmann::json heads = cli_json("heads " + kTiny + " --json");
  nlohmann::json copying = nlohmann::json::array();
  for (const auto& h : heads["heads"])
    if (h["induction"].get<double>() >= kCopyingInduction)
      copying.push_back({h["layer"].get<int>(), h["head"].get<int>()});
  std::sort(copying.begin(), copying.end());
  ASSERT_FALSE(copying.empty());
  ASSERT_LE(copying.size(), 4u);
  EXPECT_EQ((*b)["heads"], copying);
  EXPECT_EQ((*a)["off"], nlohmann::json::array()) << "the page opens with every head on";
  EXPECT_EQ((*b)["off"], copying) << "the second PageDown switches them all off";

  // The repeated word: the token after the prompt in the sentence said in full.
  const nlohmann::json full = cli_json("tokenize --model tiny --special --text " +
                                       shell_quote(kSentence + " " + kSentence));
  const nlohmann::json prompt =
      cli_json("tokenize --model tiny --special --text " + shell_quote(kPrompt));
  const int target = full["tokens"][prompt["tokens"].size()]["id"];
  EXPECT_EQ((*b)["target"]["id"], target);
  EXPECT_EQ((*b)["target"]["text"], " tree");

  // Before and after are predict's, and the guess falls.
  const auto clean = predict(""), ablated = predict(head_list(copying));
  const double before = (*b)["before"], after = (*b)["after"];
  expect_probability(before, clean.at(target), "heads on");
  expect_probability(after, ablated.at(target), "heads off");
  expect_probability((*a)["after"], clean.at(target), "the page before the switch");
  EXPECT_LT(after, before);
  EXPECT_LT(after, before / 10) << "a fall a class can see";
  EXPECT_EQ((*b)["rank_before"], rank_of(clean, target));
  EXPECT_EQ((*b)["rank_after"], rank_of(ablated, target));
  EXPECT_EQ((*b)["rank_before"], 1) << "the repeated word is tiny's first guess";
  for (const auto& p : (*b)["top_after"])
    expect_probability(p["probability"], ablated.at(p["id"].get<int>()), p["text"]);

  // Every switch state the heads' clicks reach (each head alone, all of them) is predict's too.
  ASSERT_EQ((*b)["states"].size(), size_t{1} << copying.size());
  for (const auto& state : (*b)["states"]) {
    if (state["off"].size() != 1) continue;
    const std::string which = head_list(state["off"]);
    const auto p = predict(which);
    expect_probability(state["target"], p.at(target), "head " + which + " alone off");
    EXPECT_EQ(state["rank"], rank_of(p, target)) << which;
    EXPECT_LE(state["target"].get<double>(), before * 1.5) << which;
    EXPECT_GT(state["target"].get<double>(), after) << which << ": one alone does less";
  }

  // What the teacher says carries the numbers as shown.
  const std::string say_on = (*find_record(on.layout, "lesson"))["say"];
  const std::string say_off = (*lesson)["say"];
  EXPECT_NE(say_on.find("after \"green\" came \"tree\""), std::string::npos) << say_on;
  EXPECT_NE(say_off.find("\"tree\" falls from "), std::string::npos) << say_off;
  const std::string was = percent(clean.at(target)), now = percent(ablated.at(target));
  const std::vector<std::string> texts = test::lesson_texts(off.layout);
  for (const std::string& shown : {was, now})
    EXPECT_NE(std::find(texts.begin(), texts.end(), shown), texts.end()) << shown;
  EXPECT_NE(say_off.find("from " + was + " to " + now), std::string::npos) << say_off;

  // The copying heads' patterns are export's weights of those heads (heads on).
  const nlohmann::json trace = cli_json("export " + kTiny);
  const auto thumbs = find_records(off.layout, "lesson_picture", "copying_head");
  ASSERT_EQ(thumbs.size(), copying.size());
  for (const nlohmann::json* t : thumbs) {
    const int l = (*t)["layer"], h = (*t)["head"];
    EXPECT_TRUE((*t)["off"].get<bool>());
    const auto& want = trace["attention"][l][h];
    ASSERT_EQ((*t)["values"].size(), want.size());
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
      for (size_t j = 0; j < want[i].size(); ++j)
        worst = std::max(worst,
                         std::fabs((*t)["values"][i][j].get<double>() - want[i][j].get<double>()));
    EXPECT_LT(worst, 1e-4) << "layer " << l << " head " << h;
  }
  // From the last word the copying heads look back at the word that followed it the first time.
  const nlohmann::json* sentence = find_record(on.layout, "lesson_picture", "copying_sentence");
  ASSERT_NE(sentence, nullptr);
  EXPECT_EQ((*sentence)["looked_at"], "tree.");
  EXPECT_TRUE((*sentence)["rows_of_copies"]) << "each copy on its own row at 1600x1000";
  EXPECT_NEAR((*sentence)["blank"]["x"].get<double>(), (*sentence)["chips"][10]["x"].get<double>(),
              0.5)
      << "the blank sits under the word it copies";

  // Space switches them off too (the same numbers), and never back on.
  const AppRun space = page("pagedown,space,space");
  ASSERT_EQ(space.rc, 0);
  const nlohmann::json* c = find_record(space.layout, "lesson_picture", "copying");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["off"], copying);
  EXPECT_EQ((*c)["after"], (*b)["after"]);
}

int step_after(const std::string& args, std::string* page = nullptr) {
  const AppRun r = run_lesson(args);
  if (r.rc != 0) return -100;
  const nlohmann::json* lesson = find_record(r.layout, "lesson");
  if (page) *page = lesson ? (*lesson)["page"].get<std::string>() : "";
  return lesson ? (*lesson)["step"].get<int>() : 0;
}

TEST(LessonCopying, ThePresentersKeysStepThroughThePageAndTheExplorerKeepsItsHeads) {
  std::string shown;
  EXPECT_EQ(step_after("--lesson 7 --keys pagedown,pagedown,pagedown", &shown), 8);
  EXPECT_EQ(shown, "");
  EXPECT_EQ(step_after("--lesson 7 --keys pagedown,pageup", &shown), 7);
  EXPECT_EQ(shown, "") << "PageUp goes back to step 7's heads";
  EXPECT_EQ(step_after("--lesson 8 --keys pageup", &shown), 7);
  EXPECT_EQ(shown, "copying") << "back from step 8 is the page";
  EXPECT_EQ(step_after("--lesson 7 --keys pagedown,end", &shown), 8);
  EXPECT_EQ(step_after("--lesson 6 --keys pagedown,pagedown", &shown), 7);
  EXPECT_EQ(shown, "copying");
  // The heads are switched off in the lesson's own run: the explorer (here with tiny open) has
  // none switched off during the page, nor after the lesson.
  const AppRun during = run_lesson("--model tiny --lesson 7 --keys pagedown,pagedown");
  ASSERT_EQ(during.rc, 0);
  EXPECT_EQ((*find_record(during.layout, "lesson"))["page"], "copying");
  EXPECT_EQ((*find_record(during.layout, "lesson_picture", "copying"))["off"].size(), 4u);
  EXPECT_EQ(during.layout["state"]["view"].value("ablate", ""), "");
  const AppRun left = run_lesson("--model tiny --lesson 7 --keys pagedown,pagedown,escape");
  ASSERT_EQ(left.rc, 0);
  EXPECT_EQ(find_record(left.layout, "lesson"), nullptr);
  EXPECT_EQ(left.layout["model"], "tiny");
  EXPECT_EQ(left.layout["state"]["view"].value("ablate", ""), "");
  // Entering the lesson again starts the page over, heads on.
  const AppRun again = run_lesson("--lesson 7 --keys pagedown,pagedown,escape,f5,pagedown");
  ASSERT_EQ(again.rc, 0);
  const nlohmann::json* c = find_record(again.layout, "lesson_picture", "copying");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["off"], nlohmann::json::array());
}

}  // namespace
}  // namespace attnscope
