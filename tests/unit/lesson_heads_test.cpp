// The lesson model's heads do visibly different things, each made from the same word vectors and
// positions (core/model/lesson/lesson_model.h, HeadDesign): the meaning head follows related
// words, the position head follows neighbours.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/lesson/lesson_model.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

const std::string kRiver = "she sat on the bank of the river and watched the water";

AttentionTrace run(const std::string& text, const LessonOptions& o) {
  auto backend = make_cpu_backend();
  return make_lesson_model(o)->run(text, *backend);
}

LessonOptions two_heads() {
  LessonOptions o;
  o.heads = 2;
  return o;
}

int index_of(const AttentionTrace& t, const std::string& word) {
  for (size_t i = 0; i < t.tokens.size(); ++i)
    if (t.tokens[i].text == word) return static_cast<int>(i);
  return -1;
}

// The test's own sinusoid (Vaswani et al.), base b, unit length; in double precision.
Eigen::VectorXd sinusoid(int pos, int dim, double base) {
  Eigen::VectorXd v(dim);
  for (int i = 0; i < dim; ++i) {
    double rate = std::pow(base, -2.0 * (i / 2) / dim);
    v[i] = i % 2 == 0 ? std::sin(pos * rate) : std::cos(pos * rate);
  }
  return v.normalized();
}

TEST(LessonHeads, EachHeadSaysWhatItIsMadeOf) {
  AttentionTrace t = run(kRiver, two_heads());
  const auto& opt = t.model.options;
  EXPECT_EQ(opt["head_design"], "roles");
  ASSERT_EQ(opt["head_roles"].size(), 2u);
  EXPECT_EQ(opt["head_roles"][0], "meaning");
  EXPECT_EQ(opt["head_roles"][1], "position");
  ASSERT_EQ(opt["head_recipes"].size(), 2u);
  EXPECT_NE(opt["head_recipes"][0].get<std::string>().find("word vectors"), std::string::npos);
  EXPECT_NE(opt["head_recipes"][1].get<std::string>().find("positional encodings"),
            std::string::npos);
  LessonOptions four = two_heads();
  four.heads = 4;
  EXPECT_EQ(run(kRiver, four).model.options["head_roles"],
            nlohmann::json({"meaning", "position", "mixed", "mixed"}));
  EXPECT_EQ(parse_head_design("random"), HeadDesign::kRandom);
  EXPECT_THROW(parse_head_design("clever"), UsageError);
}

TEST(LessonHeads, PositionHeadComparesPositionsOnly) {
  AttentionTrace t = run(kRiver, two_heads());
  const HeadSteps& s = t.steps[1];
  const int n = static_cast<int>(t.tokens.size()), d = static_cast<int>(s.q.cols());
  ASSERT_EQ(d, 64);
  // q = k = the scaled positional encodings: their cosines are the test's own sinusoids'.
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double want = sinusoid(i, d, kPositionHeadBase).dot(sinusoid(j, d, kPositionHeadBase));
      double got = s.q.row(i).dot(s.k.row(j)) / (s.q.row(i).norm() * s.k.row(j).norm());
      EXPECT_NEAR(got, want, 1e-5) << i << "," << j;
    }
  // Words do not matter, only positions: another sentence of the same length, same weights.
  AttentionTrace u = run("a cat and a dog ran far from the old green house", two_heads());
  ASSERT_EQ(u.tokens.size(), t.tokens.size());
  EXPECT_LT((u.attention[0][1] - t.attention[0][1]).cwiseAbs().maxCoeff(), 1e-5f);
  // The values are the word vectors (through the head's slice, as a random-design head sees them):
  // the output carries the neighbours' meaning.
  LessonOptions random = two_heads();
  random.head_design = HeadDesign::kRandom;
  EXPECT_TRUE(s.v.isApprox(run(kRiver, random).steps[1].v));
}

TEST(LessonHeads, PositionHeadAttendsToNeighbours) {
  AttentionTrace t = run(kRiver, two_heads());
  const Matrix& w = t.attention[0][1];
  const int n = static_cast<int>(w.rows());
  for (int i = 0; i < n; ++i) {
    int best = 0;
    w.row(i).maxCoeff(&best);
    EXPECT_EQ(std::abs(best - i), 1) << "query " << i << " looks at " << best;
    float near = (i > 0 ? w(i, i - 1) : 0.0f) + (i + 1 < n ? w(i, i + 1) : 0.0f);
    EXPECT_GT(near, 0.5f) << "query " << i;
  }
  // With a causal mask it becomes a "previous word" head.
  LessonOptions causal = two_heads();
  causal.causal = true;
  const AttentionTrace ct = run(kRiver, causal);
  const Matrix& c = ct.attention[0][1];
  for (int i = 2; i < n; ++i) {
    int best = 0;
    c.row(i).maxCoeff(&best);
    EXPECT_EQ(best, i - 1) << "query " << i;
  }
}

TEST(LessonHeads, MeaningHeadAttendsToRelatedWordsNotNeighbours) {
  AttentionTrace t = run(kRiver, two_heads());
  const int bank = index_of(t, "bank"), river = index_of(t, "river"), water = index_of(t, "water");
  ASSERT_GE(bank, 0);
  ASSERT_GE(river, 0);
  ASSERT_GE(water, 0);
  const Matrix& meaning = t.attention[0][0];
  const Matrix& position = t.attention[0][1];
  // "river" and "water" are far from each other; the meaning head links them, the position head
  // hardly does.
  EXPECT_GT(meaning(river, water), 2 * position(river, water));
  EXPECT_GT(meaning(water, river), 2 * position(water, river));
  int best = 0;
  meaning.row(water).maxCoeff(&best);
  EXPECT_EQ(best, river);
  // "bank" gathers more from the river words through meaning than through position.
  EXPECT_GT(meaning(bank, river) + meaning(bank, water),
            position(bank, river) + position(bank, water));
  // Meaning does not depend on order: reversing the sentence reverses the matrix.
  std::string reversed = "water the watched and river the of bank the on sat she";
  const AttentionTrace rt = run(reversed, two_heads());
  const Matrix& r = rt.attention[0][0];
  const int n = static_cast<int>(meaning.rows());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) EXPECT_NEAR(r(n - 1 - i, n - 1 - j), meaning(i, j), 1e-5f);
}

TEST(LessonHeads, RandomDesignKeepsEveryHeadOnTheSameVectors) {
  LessonOptions o = two_heads();
  o.head_design = HeadDesign::kRandom;
  AttentionTrace t = run(kRiver, o);
  EXPECT_EQ(t.model.options["head_design"], "random");
  for (const HeadSteps& s : t.steps) {
    EXPECT_TRUE(s.q.isApprox(s.k));
    EXPECT_TRUE(s.q.isApprox(s.v));
  }
  EXPECT_EQ(t.model.options["head_roles"], nlohmann::json({"mixed", "mixed"}));
}

}  // namespace
}  // namespace attnscope
