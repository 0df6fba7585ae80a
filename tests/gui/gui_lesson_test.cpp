// The guided lesson under Xvfb: every step at 1280×720 in the light theme shows the core's numbers
// (grids, bars, neighbours, heads) in large type, the cells carry the colormap color of their
// values, and the presenters' keys step through it.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "app/lesson/real_heads.h"
#include "core/analysis/head_summary.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/model/lesson/lesson_model.h"
#include "core/model/registry.h"
#include "gui_lesson_util.h"

namespace attnscope {
namespace {

using test::AppRun;
using test::check_grid;
using test::colormap_rgb;
using test::core_trace;
using test::find_record;
using test::find_records;
using test::read_png;
using test::run_lesson;
using test::shell_quote;

const std::string& kSentence = test::kLessonSentence;

// Large type: readable from the back of a classroom at 1280×720.
void check_lesson_frame(const AppRun& r, int step) {
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.image.width, 1280);
  EXPECT_EQ(r.image.height, 720);
  EXPECT_EQ(r.layout["theme"], "light");
  const nlohmann::json* lesson = find_record(r.layout, "lesson");
  ASSERT_NE(lesson, nullptr);
  EXPECT_EQ((*lesson)["step"], step);
  EXPECT_FALSE((*lesson)["title"].get<std::string>().empty());
  const std::string say = (*lesson)["say"];
  EXPECT_GT(say.size(), 40u);
  EXPECT_LT(say.size(), 260u) << "one or two sentences";
  EXPECT_GE((*lesson)["font_px"].get<double>(), 24.0);
  EXPECT_GE((*lesson)["title_px"].get<double>(), 32.0);
  EXPECT_EQ((*lesson)["tokens"], 12);
  EXPECT_EQ(r.layout["traces"][0]["text"], kSentence);
  // The light theme: a white page, dark text (sampled in the top-left margin).
  auto bg = r.image.at(8, 40);
  EXPECT_GT(bg[0] + bg[1] + bg[2], 3 * 235);
}

TEST(Lesson, Step1WordsAndTheirVectors) {
  AppRun r = run_lesson("--lesson 1");
  check_lesson_frame(r, 1);
  ASSERT_NE(find_record(r.layout, "lesson_picture", "vectors"), nullptr);
  EXPECT_EQ((*find_record(r.layout, "lesson_picture", "vectors"))["rows"], 12);
}

TEST(Lesson, Step2QueryKeyValue) {
  AppRun r = run_lesson("--lesson 2");
  check_lesson_frame(r, 2);
  for (const char* name : {"Q: what I look for", "K: what I offer", "V: what I pass on"})
    EXPECT_NE(find_record(r.layout, "lesson_picture", name), nullptr) << name;
}

TEST(Lesson, Step3ScoresAreTheCoresWithTheirColors) {
  AppRun r = run_lesson("--lesson 3");
  check_lesson_frame(r, 3);
  const nlohmann::json* grid = find_record(r.layout, "lesson_picture", "scores");
  ASSERT_NE(grid, nullptr);
  AttentionTrace t = core_trace(kSentence);
  EXPECT_TRUE((*grid)["numbers"]);
  EXPECT_GE((*grid)["number_px"].get<double>(), 20.0);
  check_grid(*grid, t.steps[0].scores, &t.steps[0].scaled, r.image);
}

TEST(Lesson, Step4WithoutTheScalingSoftmaxSaturates) {
  AttentionTrace t = core_trace(kSentence);
  AppRun scaled = run_lesson("--lesson 4");
  check_lesson_frame(scaled, 4);
  const nlohmann::json* grid = find_record(scaled.layout, "lesson_picture", "logits_scaled");
  ASSERT_NE(grid, nullptr);
  check_grid(*grid, t.steps[0].scaled, &t.steps[0].scaled, scaled.image);
  const int focus = (*find_record(scaled.layout, "lesson"))["focus"];
  ASSERT_EQ(focus, 4);  // "bank"
  const auto& with = (*find_record(scaled.layout, "lesson_picture", "softmax_scaled"))["values"];
  for (int j = 0; j < 12; ++j)
    EXPECT_NEAR(with[j].get<double>(), t.attention[0][0](focus, j), 1e-4);

  AppRun unscaled = run_lesson("--lesson 4 --keys u");
  check_lesson_frame(unscaled, 4);
  const nlohmann::json* bars = find_record(unscaled.layout, "lesson_picture", "softmax_unscaled");
  ASSERT_NE(bars, nullptr);
  // The unscaled scores ("56.6") are wider than the scaled ones and still readable from the back.
  const nlohmann::json* raw = find_record(unscaled.layout, "lesson_picture", "logits_unscaled");
  ASSERT_NE(raw, nullptr);
  EXPECT_TRUE((*raw)["numbers"]);
  EXPECT_GE((*raw)["number_px"].get<double>(), 17.0);
  check_grid(*raw, t.steps[0].scores, &t.steps[0].scaled, unscaled.image);
  // Without ÷√d_k the model's own logits are √128 times larger: the core without scaling.
  LessonOptions off;
  off.scale = false;
  AttentionTrace u = core_trace(kSentence, off);
  std::vector<double> without = (*bars)["values"];
  for (int j = 0; j < 12; ++j) EXPECT_NEAR(without[j], u.attention[0][0](focus, j), 1e-4);
  const double max_with = *std::max_element(with.begin(), with.end());
  const double max_without = *std::max_element(without.begin(), without.end());
  EXPECT_LT(max_with, 0.5);     // shared
  EXPECT_GT(max_without, 0.9);  // saturated: one word takes nearly everything
}

TEST(Lesson, Step5WeightsRowsAddUpToOne) {
  AppRun r = run_lesson("--lesson 5");
  check_lesson_frame(r, 5);
  const nlohmann::json* grid = find_record(r.layout, "lesson_picture", "weights");
  ASSERT_NE(grid, nullptr);
  AttentionTrace t = core_trace(kSentence);
  check_grid(*grid, t.attention[0][0], &t.steps[0].scaled, r.image);
  for (const auto& row : (*grid)["values"]) {
    double sum = 0;
    for (const auto& v : row) sum += v.is_null() ? 0.0 : v.get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-4);
  }
}

TEST(Lesson, Step6TheNewVectorMovesTowardTheSense) {
  AppRun r = run_lesson("--lesson 6");
  check_lesson_frame(r, 6);
  const nlohmann::json* nb = find_record(r.layout, "lesson_picture", "neighbours");
  ASSERT_NE(nb, nullptr);
  AttentionTrace t = core_trace(kSentence);
  MeaningShift shift = lesson_meaning_shift(t, 4, 8);
  for (size_t k = 0; k < (*nb)["in_context"].size(); ++k)
    EXPECT_EQ((*nb)["in_context"][k], shift.context_neighbors[k].word);
  // "bank" alone is money-like; in the river sentence, river words join its neighbours.
  const auto& ctx = (*nb)["in_context"];
  EXPECT_TRUE(std::find(ctx.begin(), ctx.end(), "river") != ctx.end());
  const auto& alone = (*nb)["alone"];
  EXPECT_TRUE(std::find(alone.begin(), alone.end(), "river") == alone.end());
}

TEST(Lesson, Step7TwoHeadsDoDifferentThings) {
  AppRun r = run_lesson("--lesson 7");
  check_lesson_frame(r, 7);
  const nlohmann::json* meaning = find_record(r.layout, "lesson_picture", "head0_says");
  const nlohmann::json* position = find_record(r.layout, "lesson_picture", "head1_says");
  ASSERT_NE(meaning, nullptr);
  ASSERT_NE(position, nullptr);
  EXPECT_EQ((*meaning)["role"], "meaning");
  EXPECT_EQ((*position)["role"], "position");
  EXPECT_EQ((*meaning)["looks_at"], "bank \xE2\x86\x92 river");
  // Each head says on screen what it is made of.
  const std::string made_of_meaning = (*meaning)["recipe"],
                    made_of_position = (*position)["recipe"];
  EXPECT_NE(made_of_meaning.find("the word vectors"), std::string::npos) << made_of_meaning;
  EXPECT_EQ(made_of_meaning.find("positional"), std::string::npos) << made_of_meaning;
  EXPECT_NE(made_of_position.find("q = k = the positional encodings"), std::string::npos)
      << made_of_position;
  EXPECT_NE(made_of_position.find("v = the word vectors"), std::string::npos) << made_of_position;
  LessonOptions two;
  two.heads = 2;
  AttentionTrace t = core_trace(kSentence, two);
  check_grid(*find_record(r.layout, "lesson_picture", "head0"), t.attention[0][0],
             &t.steps[0].scaled, r.image);
  check_grid(*find_record(r.layout, "lesson_picture", "head1"), t.attention[0][1],
             &t.steps[1].scaled, r.image);
  // The position head's strongest cell in every row is a neighbour.
  for (int i = 0; i < 12; ++i) {
    int best = 0;
    t.attention[0][1].row(i).maxCoeff(&best);
    EXPECT_EQ(std::abs(best - i), 1);
  }
}

TEST(Lesson, Step8WordOrderNeedsPositions) {
  auto weights_of = [](const nlohmann::json& row) {
    std::map<std::string, double> w;  // each word of the sentence appears once but "the"
    for (const auto& chip : row)
      if (chip["word"] != "the") w[chip["word"]] = chip["weight"];
    return w;
  };
  AppRun off = run_lesson("--lesson 8");
  check_lesson_frame(off, 8);
  const nlohmann::json* orders = find_record(off.layout, "lesson_picture", "orders");
  ASSERT_NE(orders, nullptr);
  EXPECT_FALSE((*orders)["positions"]);
  EXPECT_EQ(off.layout["traces"][1]["text"],
            "water the watched and river the of bank the on sat she");
  auto a = weights_of((*orders)["rows"][0]), b = weights_of((*orders)["rows"][1]);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [word, w] : a) EXPECT_NEAR(w, b[word], 1e-5) << word;

  AppRun on = run_lesson("--lesson 8 --keys p");
  check_lesson_frame(on, 8);
  orders = find_record(on.layout, "lesson_picture", "orders");
  EXPECT_TRUE((*orders)["positions"]);
  EXPECT_TRUE((*find_record(on.layout, "lesson"))["positional"]);
  a = weights_of((*orders)["rows"][0]), b = weights_of((*orders)["rows"][1]);
  double differ = 0;
  for (const auto& [word, w] : a) differ = std::max(differ, std::fabs(w - b[word]));
  EXPECT_GT(differ, 0.01);
}

int step_after(const std::string& args) {
  AppRun r = run_lesson(args);
  if (r.rc != 0) return -100;
  const nlohmann::json* lesson = find_record(r.layout, "lesson");
  return lesson ? (*lesson)["step"].get<int>() : 0;  // 0: the lesson was left
}

TEST(Lesson, PresenterKeysStep) {
  EXPECT_EQ(step_after("--lesson 1 --keys pagedown,pagedown,right,pageup"), 3);
  EXPECT_EQ(step_after("--lesson 8 --keys pagedown,right"), 8);  // stays on the last step
  EXPECT_EQ(step_after("--lesson 2 --keys left,left,pageup"), 1);
  EXPECT_EQ(step_after("--lesson 3 --keys end"), 8);
  EXPECT_EQ(step_after("--lesson 6 --keys home"), 1);
  EXPECT_EQ(step_after("--lesson 4 --keys escape"), 0);  // left: the explorer is back
  EXPECT_EQ(step_after("--keys f5,pagedown"), 2);        // F5 enters the lesson
}

TEST(Lesson, PredictFirstHidesTheNumbersUntilRevealed) {
  const std::string dir = test::temp_dir(), session = dir + "/predict.attnscope";
  std::ofstream(session) << R"({"format": "attnscope-session/1",
      "view": {"mode": "lesson", "lesson_step": 5, "lesson_predict": true}})";
  AppRun hidden = run_lesson("--session " + shell_quote(session));
  ASSERT_EQ(hidden.rc, 0);
  const nlohmann::json* lesson = find_record(hidden.layout, "lesson");
  ASSERT_NE(lesson, nullptr);
  EXPECT_EQ((*lesson)["step"], 5);
  EXPECT_TRUE((*lesson)["predict"]);
  EXPECT_FALSE((*lesson)["revealed"]);
  EXPECT_EQ(find_record(hidden.layout, "lesson_picture", "weights"), nullptr);
  // The clicker's "next" reveals first, then moves on.
  AppRun shown = run_lesson("--session " + shell_quote(session) + " --keys pagedown");
  EXPECT_TRUE((*find_record(shown.layout, "lesson"))["revealed"]);
  EXPECT_NE(find_record(shown.layout, "lesson_picture", "weights"), nullptr);
  EXPECT_EQ(step_after("--session " + shell_quote(session) + " --keys pagedown,pagedown"), 6);
}

TEST(Lesson, TheTeacherRetypesTheSentence) {
  AppRun r = run_lesson("--lesson 5 --type-keys " + shell_quote("dogs chase cats"));
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.layout["traces"][0]["text"], "dogs chase cats");
  const nlohmann::json* grid = find_record(r.layout, "lesson_picture", "weights");
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ((*grid)["rows"], 3);
  AttentionTrace t = core_trace("dogs chase cats");
  check_grid(*grid, t.attention[0][0], &t.steps[0].scaled, r.image);
}

// Steps 7 and 8 with a real model loaded before the lesson (here the built-in tiny trained
// transformer, a 4-layer Llama-shaped decoder): step 7 shows one layer's heads of that model on
// the live sentence, each thumbnail with that head's weights and the label its summary gives.
// A heatmap drawn by the lesson's real-model panels: its values are `want` and the middle of each
// cell has the colormap color of its weight over [0, the head's largest weight].
void check_heat(const nlohmann::json& heat, const Matrix& want, const test::Image& img) {
  const int n = heat["rows"];
  ASSERT_EQ(n, want.rows());
  const double x0 = heat["x"], y0 = heat["y"], cell = heat["cell"], vmax = heat["vmax"];
  EXPECT_NEAR(vmax, want.maxCoeff(), 1e-5);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      EXPECT_NEAR(heat["values"][i][j].get<double>(), want(i, j), 1e-4);
      if (cell < 4) continue;
      const auto rgb = colormap_rgb("viridis", want(i, j) / vmax);
      const auto got =
          img.at(static_cast<int>(x0 + (j + 0.5) * cell), static_cast<int>(y0 + (i + 0.5) * cell));
      for (int c = 0; c < 3; ++c)
        if (std::abs(got[c] - rgb[c]) > 6 && ++bad <= 5)
          ADD_FAILURE() << "cell " << i << "," << j << " channel " << c << ": " << got[c]
                        << " != " << rgb[c];
    }
}

AttentionTrace real_trace(const std::string& spec, const std::string& text) {
  auto cpu = make_cpu_backend();
  return open_model(spec)->run(text, *cpu);
}

TEST(Lesson, Step7ShowsTheRealModelsHeadsWithWhatEachDoes) {
  AppRun r = run_lesson("--model tiny --lesson 7");
  check_lesson_frame(r, 7);
  const nlohmann::json* strip = find_record(r.layout, "lesson_picture", "real_heads");
  ASSERT_NE(strip, nullptr) << "no real-model strip at step 7";
  const ModelInfo info = open_model("tiny")->info();
  EXPECT_EQ((*find_record(r.layout, "lesson"))["real_model"], info.name);
  // The lesson's own two heads are still there.
  EXPECT_NE(find_record(r.layout, "lesson_picture", "head0"), nullptr);
  EXPECT_NE(find_record(r.layout, "lesson_picture", "head1"), nullptr);
  const AttentionTrace t = real_trace("tiny", kSentence);
  const auto summaries = summarize_trace(t);
  const int n = static_cast<int>(t.tokens.size());
  const int layer = (*strip)["layer"];
  EXPECT_EQ(layer, most_varied_layer(summaries, n));
  EXPECT_EQ((*strip)["heads"], info.heads);
  const auto thumbs = find_records(r.layout, "lesson_picture", "real_head");
  ASSERT_EQ(static_cast<int>(thumbs.size()), info.heads);
  for (int h = 0; h < info.heads; ++h) {
    SCOPED_TRACE("head " + std::to_string(h));
    EXPECT_EQ((*thumbs[h])["layer"], layer);
    EXPECT_EQ((*thumbs[h])["head"], h);
    EXPECT_EQ((*thumbs[h])["label"], head_behaviour_words(head_behaviour(summaries[layer][h], n)));
    check_heat(*thumbs[h], *t.head_weights(layer, h), r.image);
  }
  // Retyped at step 7: the strip follows the new sentence.
  AppRun typed =
      run_lesson("--model tiny --lesson 7 --type-keys " + shell_quote("dogs chase cats"));
  ASSERT_EQ(typed.rc, 0);
  const auto typed_thumbs = find_records(typed.layout, "lesson_picture", "real_head");
  ASSERT_FALSE(typed_thumbs.empty());
  const AttentionTrace d = real_trace("tiny", "dogs chase cats");
  const int typed_layer = (*typed_thumbs[0])["layer"];
  check_heat(*typed_thumbs[0], *d.head_weights(typed_layer, 0), typed.image);
}

TEST(Lesson, Step8NamesTheRealModelsPositionsAndShowsBothOrders) {
  const std::string llama = ATTNSCOPE_FIXTURES "/llama-tiny",
                    gpt2 = ATTNSCOPE_FIXTURES "/gpt2-tiny-f32";
  for (const std::string& spec : {std::string("tiny"), llama, gpt2}) {
    SCOPED_TRACE(spec);
    AppRun r = run_lesson("--model " + shell_quote(spec) + " --lesson 8");
    ASSERT_EQ(r.rc, 0);
    const nlohmann::json* panel = find_record(r.layout, "lesson_picture", "real_positions");
    ASSERT_NE(panel, nullptr);
    const std::string scheme = (*panel)["scheme"];
    if (spec == gpt2) {
      EXPECT_NE(scheme.find("learned one position vector"), std::string::npos) << scheme;
    } else {
      EXPECT_NE(scheme.find("rotary"), std::string::npos) << scheme;
    }
    // The head with the strongest previous-token score, on both orders.
    const AttentionTrace t = real_trace(spec, kSentence);
    const HeadRef head = strongest_previous_token_head(summarize_trace(t));
    EXPECT_EQ((*panel)["layer"], head.layer);
    EXPECT_EQ((*panel)["head"], head.head);
    const nlohmann::json* order = find_record(r.layout, "lesson_picture", "real_order");
    const nlohmann::json* reversed = find_record(r.layout, "lesson_picture", "real_reversed");
    ASSERT_NE(order, nullptr);
    ASSERT_NE(reversed, nullptr);
    check_heat(*order, *t.head_weights(head.layer, head.head), r.image);
    const std::string back = "water the watched and river the of bank the on sat she";
    EXPECT_EQ((*reversed)["text"], back);
    check_heat(*reversed, *real_trace(spec, back).head_weights(head.layer, head.head), r.image);
  }
}

TEST(Lesson, LeavingTheLessonRestoresTheRealModel) {
  AppRun r = run_lesson("--model tiny --lesson 7 --keys escape");
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(find_record(r.layout, "lesson"), nullptr);
  EXPECT_EQ(r.layout["model"], open_model("tiny")->info().name);
  EXPECT_EQ(r.layout["traces"][0]["text"], kSentence);
}

}  // namespace
}  // namespace attnscope
