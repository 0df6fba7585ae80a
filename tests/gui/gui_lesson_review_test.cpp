// What a user review of the guided lesson found (issue 21 item 8), each checked on the real app
// under Xvfb against the core's own numbers: −∞ said in words, no "-0.0", step 7's heads with key
// labels, numbers and one colour scale on a row where they differ, the residual connection at
// step 6, indices from 0, "predict first" that neither swallows a key nor hides revealed numbers,
// and no two labels overlapping at font scales 50–200% at 1600x1000 and 800x600.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app/lesson/real_heads.h"
#include "core/analysis/head_summary.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"
#include "gui_lesson_util.h"

namespace attnscope {
namespace {

using namespace test;

const std::string kMinusInf = "\xE2\x88\x92\xE2\x88\x9E";

// A printed zero with a sign: "-0.0", "-0.00", "−0.0" (but not "-0.05").
bool signed_zero(const std::string& s) {
  static const std::regex re("(-|\xE2\x88\x92)0\\.0+([^0-9]|$)");
  return std::regex_search(s, re);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

bool any_text(const std::vector<std::string>& texts, const std::string& part) {
  return std::any_of(texts.begin(), texts.end(), [&](const auto& t) { return contains(t, part); });
}

int count_exact(const std::vector<std::string>& texts, const std::string& s) {
  return static_cast<int>(std::count(texts.begin(), texts.end(), s));
}

// "0.41": how the lesson prints a weight.
std::string two_decimals(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

int row_argmax(const Matrix& m, int row) {
  Eigen::Index best = 0;
  m.row(row).maxCoeff(&best);
  return static_cast<int>(best);
}

AppRun run_session(const LessonSession& s, const std::string& extra = "",
                   const std::string& window = "1280x720") {
  return run_lesson("--session " + shell_quote(write_lesson_session(s)) + " " + extra, window);
}

TEST(LessonReview, NoStepPrintsANegativeZero) {
  // Both sentences have scaled scores just below zero, which step 4 printed as "-0.0".
  const std::string walked = "we walked along the river bank";
  for (const std::string& text : {kLessonSentence, walked}) {
    const AttentionTrace t = core_trace(text);
    bool rounds_to_minus_zero = false;
    for (int i = 0; i < t.steps[0].scaled.rows(); ++i)
      for (int j = 0; j < t.steps[0].scaled.cols(); ++j) {
        const float v = t.steps[0].scaled(i, j);
        rounds_to_minus_zero |= std::isfinite(v) && v < 0 && v > -0.05f;
      }
    if (text == walked) {
      ASSERT_TRUE(rounds_to_minus_zero) << "the sentence no longer has the case";
    }
    const std::pair<int, const char*> shown[] = {{1, ""}, {2, ""}, {3, ""}, {4, ""}, {4, "u"},
                                                 {5, ""}, {6, ""}, {7, ""}, {8, ""}, {8, "p"}};
    for (const auto& [step, keys] : shown) {
      SCOPED_TRACE(text + ", step " + std::to_string(step) + " keys " + keys);
      LessonSession s;
      s.step = step;
      s.text = text;
      s.selected = text == walked ? 5 : 4;  // "bank"
      AppRun r = run_session(s, *keys ? std::string("--keys ") + keys : "");
      ASSERT_EQ(r.rc, 0);
      const std::vector<std::string> texts = lesson_texts(r.layout);
      EXPECT_GT(texts.size(), 10u) << "the layout lists what the step drew";
      for (const std::string& drawn : texts) EXPECT_FALSE(signed_zero(drawn)) << drawn;
    }
  }
}

TEST(LessonReview, Step3SaysInWordsWhatMinusInfinityMeans) {
  // "Exclude self" (on by default): the diagonal is −∞, and the note says why.
  AppRun self = run_lesson("--lesson 3");
  ASSERT_EQ(self.rc, 0);
  const nlohmann::json* note = find_record(self.layout, "lesson_picture", "masked_note");
  ASSERT_NE(note, nullptr) << "no words for the grey -inf cells";
  EXPECT_TRUE((*note)["self"]);
  EXPECT_TRUE((*note)["unknown_columns"].empty());
  const std::string said = (*note)["text"];
  EXPECT_TRUE(contains(said, kMinusInf) && contains(said, "masked") &&
              contains(said, "exclude self") && contains(said, "itself") &&
              contains(said, "weight 0"))
      << said;
  const std::vector<std::string> texts = lesson_texts(self.layout);
  EXPECT_EQ(count_exact(texts, kMinusInf), 12) << "one -inf per word, on the diagonal";
  EXPECT_EQ(count_exact(texts, said), 1) << "the note is drawn";

  // A word without a vector and "exclude self" off: only its column is −∞, and the note names it.
  LessonSession s;
  s.step = 3;
  s.text = "she sat on the bank of the zqxwv river";
  s.lesson = {{"mask_self", false}};
  LessonOptions off;
  off.mask_self = false;
  const AttentionTrace t = core_trace(s.text, off);
  std::vector<int> unknown;
  for (int j = 0; j < static_cast<int>(t.tokens.size()); ++j)
    if (t.tokens[j].unknown) unknown.push_back(j);
  ASSERT_EQ(unknown, std::vector<int>{7});
  int masked = 0;
  for (int i = 0; i < t.steps[0].scaled.rows(); ++i)
    for (int j = 0; j < t.steps[0].scaled.cols(); ++j)
      masked += std::isinf(t.steps[0].scaled(i, j));
  AppRun word = run_session(s);
  ASSERT_EQ(word.rc, 0);
  note = find_record(word.layout, "lesson_picture", "masked_note");
  ASSERT_NE(note, nullptr);
  EXPECT_FALSE((*note)["self"]);
  EXPECT_EQ((*note)["unknown_columns"].get<std::vector<int>>(), unknown);
  const std::string named = (*note)["text"];
  EXPECT_TRUE(contains(named, "\"zqxwv\"") && contains(named, "without a vector")) << named;
  EXPECT_FALSE(contains(named, "itself")) << named;
  EXPECT_EQ(count_exact(lesson_texts(word.layout), kMinusInf), masked);

  // Nothing masked: no −∞ anywhere, and nothing to explain.
  s.text = kLessonSentence;
  AppRun none = run_session(s);
  ASSERT_EQ(none.rc, 0);
  EXPECT_EQ(find_record(none.layout, "lesson_picture", "masked_note"), nullptr);
  EXPECT_EQ(count_exact(lesson_texts(none.layout), kMinusInf), 0);

  // Step 4 shows −∞ too (the scaled scores): the same words are on that screen.
  AppRun scale = run_lesson("--lesson 4");
  ASSERT_EQ(scale.rc, 0);
  EXPECT_GT(count_exact(lesson_texts(scale.layout), kMinusInf), 0);
  EXPECT_NE(find_record(scale.layout, "lesson_picture", "masked_note"), nullptr);
}

TEST(LessonReview, Step7HeadsHaveKeyLabelsNumbersAndOneColorScale) {
  AppRun r = run_lesson("--lesson 7");
  ASSERT_EQ(r.rc, 0);
  LessonOptions two;
  two.heads = 2;
  const AttentionTrace t = core_trace(kLessonSentence, two);
  float vmax = 0;  // the larger of the two heads' strongest weights
  for (int h = 0; h < 2; ++h) vmax = std::max(vmax, t.attention[0][h].maxCoeff());
  const nlohmann::json* bar = find_record(r.layout, "lesson_picture", "heads_colorbar");
  ASSERT_NE(bar, nullptr) << "no colour scale at step 7";
  EXPECT_EQ((*bar)["vmin"], 0.0);
  EXPECT_NEAR((*bar)["vmax"].get<double>(), vmax, 1e-5);
  const auto ticks = (*bar)["ticks"].get<std::vector<std::string>>();
  ASSERT_GE(ticks.size(), 2u);
  EXPECT_EQ(ticks.front(), two_decimals(vmax));
  EXPECT_EQ(ticks.back(), "0.00");
  const std::vector<std::string> texts = lesson_texts(r.layout);
  const int focus = 4;  // "bank"
  for (int h = 0; h < 2; ++h) {
    SCOPED_TRACE("head " + std::to_string(h));
    const nlohmann::json* grid =
        find_record(r.layout, "lesson_picture", "head" + std::to_string(h));
    ASSERT_NE(grid, nullptr);
    EXPECT_TRUE((*grid)["column_labels"]) << "the keys are not labelled";
    EXPECT_TRUE((*grid)["numbers"]) << "no numbers in the cells";
    EXPECT_GE((*grid)["number_px"].get<double>(), 13.0);
    EXPECT_EQ((*grid)["vmax"], (*bar)["vmax"]) << "both heads on the colorbar's scale";
    check_grid(*grid, t.attention[0][h], &t.steps[h].scaled, r.image);
    // The focused row's numbers as drawn.
    for (int j = 0; j < 12; ++j) {
      if (j == focus) continue;
      EXPECT_TRUE(any_text(texts, two_decimals(t.attention[0][h](focus, j)))) << j;
    }
  }
  // Every word labels a row and a column of both heads (and the other steps' labels besides).
  for (int j = 0; j < 12; ++j) {
    const std::string word = t.tokens[j].text;
    int occurrences = 0;
    for (const Token& tok : t.tokens) occurrences += tok.text == word;
    EXPECT_GE(count_exact(texts, word), 4 * occurrences) << word;
  }
}

TEST(LessonReview, Step7OutlinesARowWhereTheTwoHeadsDisagree) {
  LessonOptions two;
  two.heads = 2;
  // An ordinary sentence where both heads send the focused word to the same key: "bank" is near
  // "river" in meaning and stands right beside it.
  LessonSession s;
  s.step = 7;
  s.text = "we walked along the river bank";
  s.selected = 5;
  const AttentionTrace t = core_trace(s.text, two);
  ASSERT_EQ(row_argmax(t.attention[0][0], 5), row_argmax(t.attention[0][1], 5))
      << "the sentence no longer has the case";
  AppRun r = run_session(s);
  ASSERT_EQ(r.rc, 0);
  const nlohmann::json* cmp = find_record(r.layout, "lesson_picture", "heads_compare");
  ASSERT_NE(cmp, nullptr);
  const int row = (*cmp)["row"];
  ASSERT_GE(row, 0);
  EXPECT_NE(row, 5);
  const int best0 = row_argmax(t.attention[0][0], row), best1 = row_argmax(t.attention[0][1], row);
  EXPECT_NE(best0, best1) << "the outlined row must show the heads disagreeing";
  EXPECT_EQ((*cmp)["best"], nlohmann::json({best0, best1}));
  EXPECT_TRUE((*cmp)["differ"]);
  const std::string why = (*cmp)["text"];
  EXPECT_TRUE(contains(why, "\"bank\"") && contains(why, "\"" + t.tokens[row].text + "\"")) << why;
  EXPECT_TRUE(any_text(lesson_texts(r.layout), why)) << "the explanation is drawn";
  for (int h = 0; h < 2; ++h) {
    const nlohmann::json* says =
        find_record(r.layout, "lesson_picture", "head" + std::to_string(h) + "_says");
    ASSERT_NE(says, nullptr);
    EXPECT_EQ((*says)["looks_at"],
              t.tokens[row].text + " \xE2\x86\x92 " + t.tokens[h == 0 ? best0 : best1].text);
    EXPECT_EQ((*find_record(r.layout, "lesson_picture", "head" + std::to_string(h)))["focus_row"],
              row);
  }

  // Two words: each can only look at the other, so the heads agree everywhere; the step says so.
  s.text = "river bank";
  s.selected = 1;
  AppRun same = run_session(s);
  ASSERT_EQ(same.rc, 0);
  cmp = find_record(same.layout, "lesson_picture", "heads_compare");
  ASSERT_NE(cmp, nullptr);
  EXPECT_FALSE((*cmp)["differ"]);
  EXPECT_TRUE(contains((*cmp)["text"], "same word")) << (*cmp)["text"];
}

TEST(LessonReview, Step6MentionsTheResidualConnection) {
  AppRun r = run_lesson("--lesson 6");
  ASSERT_EQ(r.rc, 0);
  const nlohmann::json* residual = find_record(r.layout, "lesson_picture", "residual");
  ASSERT_NE(residual, nullptr);
  const std::string said = (*residual)["text"];
  EXPECT_TRUE(contains(said, "residual") && contains(said, "input")) << said;
  EXPECT_TRUE(any_text(lesson_texts(r.layout), "residual connection"));
}

TEST(LessonReview, LayersHeadsAndTokensCountFromZero) {
  AppRun heads = run_lesson("--lesson 7");
  ASSERT_EQ(heads.rc, 0);
  std::vector<std::string> texts = lesson_texts(heads.layout);
  EXPECT_TRUE(any_text(texts, "head 0: meaning"));
  EXPECT_TRUE(any_text(texts, "head 1: position"));
  EXPECT_FALSE(any_text(texts, "head 2")) << "two heads are 0 and 1";

  AppRun words = run_lesson("--lesson 8");
  ASSERT_EQ(words.rc, 0);
  texts = lesson_texts(words.layout);
  EXPECT_TRUE(any_text(texts, "word 0 (\"she\")"));
  EXPECT_TRUE(any_text(texts, "word 11 (\"water\")"));
  EXPECT_FALSE(any_text(texts, "word 12"));

  // A real model's layers and heads beside the lesson's (the tiny trained transformer).
  AppRun real = run_lesson("--model tiny --lesson 7");
  ASSERT_EQ(real.rc, 0);
  const AttentionTrace t = open_model("tiny")->run(kLessonSentence, *make_cpu_backend());
  const auto summaries = summarize_trace(t);
  const int layer = most_varied_layer(summaries, static_cast<int>(t.tokens.size()));
  texts = lesson_texts(real.layout);
  EXPECT_TRUE(any_text(texts, "layer " + std::to_string(layer) + " of 0\xE2\x80\x93" +
                                  std::to_string(t.layers() - 1)));
  for (int h = 0; h < t.heads(); ++h)
    EXPECT_TRUE(std::any_of(
        texts.begin(), texts.end(),
        [&](const std::string& s) { return s.rfind(std::to_string(h) + ": ", 0) == 0; }))
        << "head " << h;
  EXPECT_FALSE(std::any_of(texts.begin(), texts.end(), [&](const std::string& s) {
    return s.rfind(std::to_string(t.heads()) + ": ", 0) == 0;
  }));

  AppRun order = run_lesson("--model tiny --lesson 8");
  ASSERT_EQ(order.rc, 0);
  const HeadRef ref = strongest_previous_token_head(summaries);
  EXPECT_TRUE(any_text(lesson_texts(order.layout), "layer " + std::to_string(ref.layer) +
                                                       ", head " + std::to_string(ref.head) + ":"));
}

// "Predict first" on a step whose numbers are hidden: Space reveals them and never hides them.
TEST(LessonReview, SpaceNeverHidesRevealedNumbers) {
  LessonSession s;
  s.step = 4;
  s.view = {{"lesson_predict", true}};
  for (const std::string keys : {"pagedown,space", "space,space", "space,space,space"}) {
    SCOPED_TRACE(keys);
    AppRun r = run_session(s, "--keys " + keys);
    ASSERT_EQ(r.rc, 0);
    const nlohmann::json* lesson = find_record(r.layout, "lesson");
    EXPECT_EQ((*lesson)["step"], 4);
    EXPECT_TRUE((*lesson)["revealed"]);
    EXPECT_NE(find_record(r.layout, "lesson_picture", "logits_scaled"), nullptr);
  }
}

// Ticking "predict first" with the mouse on a step whose numbers are on screen keeps them there,
// and the next PageDown moves on (it was swallowed revealing numbers the class had seen). Real X
// events through xdotool, on the visible window.
TEST(LessonReview, TickingPredictFirstKeepsTheNumbersAndPageDownMovesOn) {
  if (std::system("command -v xdotool >/dev/null") != 0) GTEST_SKIP() << "xdotool missing";
  // Where the checkbox is: the same window drawn headless.
  AppRun shown = run_lesson("--lesson 4");
  ASSERT_EQ(shown.rc, 0);
  const nlohmann::json* box = nullptr;
  for (const auto& t : (*find_record(shown.layout, "lesson"))["texts"])
    if (t["text"] == "predict first") box = &t;
  ASSERT_NE(box, nullptr);
  const int x = static_cast<int>((*box)["x"].get<double>() + (*box)["h"].get<double>() / 2);
  const int y = static_cast<int>((*box)["y"].get<double>() + (*box)["h"].get<double>() / 2);
  const std::string out = temp_dir();
  const std::string cmd = shell_quote(ATTNSCOPE_CLICK_SCRIPT) + " " +
                          shell_quote(std::getenv("ATTNSCOPE_BIN")) + " " + shell_quote(out) + " " +
                          std::to_string(x) + " " + std::to_string(y) +
                          " Next --window 1280x720 --lesson 4";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const nlohmann::json layout = read_json(out + "/layout.json");
  const nlohmann::json* lesson = find_record(layout, "lesson");
  ASSERT_NE(lesson, nullptr);
  EXPECT_TRUE((*lesson)["predict"]) << "the click did not tick the checkbox";
  EXPECT_EQ((*lesson)["step"], 5) << "PageDown was swallowed";
  EXPECT_FALSE((*lesson)["revealed"]) << "step 5 asks its question first";
}

// No two recorded labels or numbers overlap (boxes may touch: 2 px across, 15% of the lower one's
// height), and every one is inside the lesson's window.
void check_no_overlap(const AppRun& r) {
  ASSERT_EQ(r.rc, 0);
  const nlohmann::json* lesson = find_record(r.layout, "lesson");
  ASSERT_NE(lesson, nullptr);
  const auto& win = (*lesson)["window"];
  const double wx = win["x"], wy = win["y"], ww = win["w"], wh = win["h"];
  struct Box {
    std::string text;
    double x, y, w, h;
  };
  std::vector<Box> boxes;
  for (const auto& t : (*lesson)["texts"])
    boxes.push_back({t["text"], t["x"], t["y"], t["w"], t["h"]});
  ASSERT_GT(boxes.size(), 5u);
  int failures = 0;
  for (const Box& b : boxes)
    if ((b.x < wx - 2 || b.y < wy - 2 || b.x + b.w > wx + ww + 2 || b.y + b.h > wy + wh + 2) &&
        ++failures <= 8)
      ADD_FAILURE() << "\"" << b.text << "\" at " << b.x << "," << b.y << " size " << b.w << "x"
                    << b.h << " is outside the window";
  for (size_t i = 0; i < boxes.size(); ++i)
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      const Box &a = boxes[i], &b = boxes[j];
      const double ix = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
      const double iy = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
      if (ix > 2 && iy > 0.15 * std::min(a.h, b.h) && ++failures <= 8)
        ADD_FAILURE() << "\"" << a.text << "\" (" << a.x << "," << a.y << " " << a.w << "x" << a.h
                      << ") overlaps \"" << b.text << "\" (" << b.x << "," << b.y << " " << b.w
                      << "x" << b.h << ")";
    }
}

void check_every_step_fits(const std::string& window, std::initializer_list<float> scales) {
  for (float scale : scales)
    for (int step = 1; step <= 8; ++step) {
      SCOPED_TRACE(window + " font scale " + std::to_string(scale) + " step " +
                   std::to_string(step));
      LessonSession s;
      s.step = step;
      s.font_scale = scale;
      AppRun r = run_session(s, "", window);
      check_no_overlap(r);
      const nlohmann::json* lesson = find_record(r.layout, "lesson");
      ASSERT_NE(lesson, nullptr);
      EXPECT_EQ((*lesson)["step"], step);
      // Still a lesson: the step's picture is there (its grid, bars or lists).
      const char* picture[] = {"vectors", "Q: what I look for", "scores", "logits_scaled",
                               "weights", "weights_row",        "head0",  "orders"};
      EXPECT_NE(find_record(r.layout, "lesson_picture", picture[step - 1]), nullptr);
    }
}

TEST(LessonReview, NoLabelsOverlapOnAProjectorAt1600x1000) {
  check_every_step_fits("1600x1000", {0.5f, 1.0f});
}

TEST(LessonReview, NoLabelsOverlapOnAProjectorInLargeType) {
  check_every_step_fits("1600x1000", {1.5f, 2.0f});
}

TEST(LessonReview, NoLabelsOverlapAt800x600) {
  check_every_step_fits("800x600", {0.5f, 1.0f, 2.0f});
}

TEST(LessonReview, NoLabelsOverlapBesideARealModel) {
  for (const std::string window : {"1600x1000", "800x600"})
    for (int step : {7, 8}) {
      SCOPED_TRACE(window + " step " + std::to_string(step));
      LessonSession s;
      s.step = step;
      s.model = "tiny";
      check_no_overlap(run_session(s, "", window));
    }
}

// Step 7's optional page (the tiny model's copying heads, switched off by the second PageDown): at
// a projector's size and a small window, in large type too.
TEST(LessonReview, NoLabelsOverlapOnTheCopyingPage) {
  for (const std::string window : {"1600x1000", "1280x720", "800x600"})
    for (float scale : {1.0f, 2.0f})
      for (const std::string keys : {"pagedown", "pagedown,pagedown"}) {
        SCOPED_TRACE(window + " font scale " + std::to_string(scale) + " keys " + keys);
        LessonSession s;
        s.step = 7;
        s.font_scale = scale;
        AppRun r = run_session(s, "--keys " + keys, window);
        check_no_overlap(r);
        EXPECT_EQ((*find_record(r.layout, "lesson"))["page"], "copying");
        EXPECT_NE(find_record(r.layout, "lesson_picture", "copying"), nullptr);
      }
}

}  // namespace
}  // namespace attnscope
