// The guided lesson's words for a real model's heads and positions (app/lesson/real_heads.h):
// each head's label comes from its summary, the chosen layer is the one whose heads differ most,
// and the position scheme is read from the family registry for the kinds the fixture models
// report.
#include <gtest/gtest.h>

#include "app/lesson/real_heads.h"
#include "core/model/registry.h"

namespace attnscope {
namespace {

// Causal rows (n x n): query i puts `pick(i)` of its mass on key `key(i)`, the rest spread evenly
// over its other visible keys.
template <class Key>
Matrix causal(int n, float mass, Key key) {
  Matrix w = Matrix::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    const int k = key(i);
    if (i == 0) {
      w(0, 0) = 1;
      continue;
    }
    for (int j = 0; j <= i; ++j) w(i, j) = (1 - mass) / i;
    w(i, k) = mass;
    float sum = w.row(i).sum();
    w.row(i) /= sum;
  }
  return w;
}

Matrix uniform_causal(int n) {
  Matrix w = Matrix::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) w(i, j) = 1.0f / (i + 1);
  return w;
}

constexpr int kN = 10;

TEST(LessonRealHeads, EachPatternGetsItsLabel) {
  const auto prev = summarize_head(causal(kN, 0.9f, [](int i) { return i - 1; }));
  const auto first = summarize_head(causal(kN, 0.9f, [](int) { return 0; }));
  const auto self = summarize_head(causal(kN, 0.9f, [](int i) { return i; }));
  const auto spread = summarize_head(uniform_causal(kN));
  // Two words back: none of the three, and not spread out either.
  const auto two_back = summarize_head(causal(kN, 0.9f, [](int i) { return std::max(0, i - 2); }));
  EXPECT_EQ(head_behaviour(prev, kN), HeadBehaviour::kPreviousWord);
  EXPECT_EQ(head_behaviour(first, kN), HeadBehaviour::kFirstToken);
  EXPECT_EQ(head_behaviour(self, kN), HeadBehaviour::kItself);
  EXPECT_EQ(head_behaviour(spread, kN), HeadBehaviour::kSpreadOut);
  EXPECT_EQ(head_behaviour(two_back, kN), HeadBehaviour::kFewWords);
  EXPECT_STREQ(head_behaviour_words(HeadBehaviour::kPreviousWord), "looks at the previous word");
  EXPECT_STREQ(head_behaviour_words(HeadBehaviour::kFirstToken), "rests on the first token");
}

TEST(LessonRealHeads, TheMassThresholdDecides) {
  // Just below kHeadBehaviourMass on the previous token the row is no longer "previous word".
  HeadSummary s;
  s.previous_token = kHeadBehaviourMass - 0.01f;
  s.entropy = 0.1f;
  EXPECT_EQ(head_behaviour(s, kN), HeadBehaviour::kFewWords);
  s.previous_token = kHeadBehaviourMass;
  EXPECT_EQ(head_behaviour(s, kN), HeadBehaviour::kPreviousWord);
  // The largest of the three wins.
  s.first_token_mass = kHeadBehaviourMass + 0.2f;
  EXPECT_EQ(head_behaviour(s, kN), HeadBehaviour::kFirstToken);
}

TEST(LessonRealHeads, TheLayerWhoseHeadsDifferMostAndTheOrderHead) {
  const auto prev = summarize_head(causal(kN, 0.9f, [](int i) { return i - 1; }));
  const auto prev_weaker = summarize_head(causal(kN, 0.6f, [](int i) { return i - 1; }));
  const auto first = summarize_head(causal(kN, 0.9f, [](int) { return 0; }));
  const auto spread = summarize_head(uniform_causal(kN));
  HeadSummaries layers = {
      {first, first, first},         // one behaviour
      {prev_weaker, first, spread},  // three
      {spread, spread, first},       // two
  };
  EXPECT_EQ(most_varied_layer(layers, kN), 1);
  EXPECT_EQ(most_varied_layer({}, kN), -1);
  // Equal counts of behaviours: the larger spread of the summaries decides.
  HeadSummaries ties = {{prev_weaker, first}, {prev, first}};
  EXPECT_EQ(most_varied_layer(ties, kN), 1);
  layers[2][1] = prev;
  const HeadRef h = strongest_previous_token_head(layers);
  EXPECT_EQ(h.layer, 2);
  EXPECT_EQ(h.head, 1);
}

TEST(LessonRealHeads, PositionSchemeOfTheKindsTheModelsReport) {
  const std::string fixtures = ATTNSCOPE_FIXTURES;
  const auto gpt2 = open_model(fixtures + "/gpt2-tiny-f32")->info();
  const auto llama = open_model(fixtures + "/llama-tiny")->info();
  EXPECT_EQ(position_scheme_of(gpt2.kind), PositionScheme::kLearned);
  EXPECT_EQ(position_scheme_of(llama.kind), PositionScheme::kRotary);
  EXPECT_EQ(position_scheme_of(open_model("lesson")->info().kind), PositionScheme::kUnknown);
  EXPECT_NE(position_scheme_words(PositionScheme::kRotary, "m").find("rotary"), std::string::npos);
  EXPECT_NE(position_scheme_words(PositionScheme::kLearned, "m").find("learned"),
            std::string::npos);
  EXPECT_EQ(position_scheme_words(PositionScheme::kUnknown, "m"), "");
}

}  // namespace
}  // namespace attnscope
