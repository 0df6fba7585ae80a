// The ambiguous-word presets of assets/presets.json, and the acceptance measure:
// how many pairs lean to the right sense.
//
// "Leans to the right sense", precisely: take the ambiguous word's context-enriched output
// (weights·V, mapped back to word-vector space, default options) in each sentence. Sense k is
// represented by the mean of its cue words' vectors (presets.json, cues1/cues2). The pair leans
// right when, by cosine, the word in sentence 1 is closer to sense 1's mean than to sense 2's,
// AND the word in sentence 2 is closer to sense 2's mean than to sense 1's.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/lesson/lesson_model.h"
#include "core/model/lesson/word_vectors.h"

namespace attnscope {
namespace {

constexpr int kMinimumRightPairs = 15;  // the bar

int index_of(const AttentionTrace& t, const std::string& word) {
  for (size_t i = 0; i < t.tokens.size(); ++i)
    if (t.tokens[i].text == word) return static_cast<int>(i);
  return -1;
}

Eigen::VectorXd cue_mean(const WordVectors& wv, const std::vector<std::string>& cues) {
  Eigen::VectorXd m = Eigen::VectorXd::Zero(wv.dim());
  for (const std::string& c : cues) m += wv.vectors.row(wv.lookup(c)).transpose().cast<double>();
  return m / static_cast<double>(cues.size());
}

double cosine(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.dot(b) / (a.norm() * b.norm());
}

TEST(LessonPresets, AtLeastTwentyWellFormedPairs) {
  auto presets = lesson_presets();
  EXPECT_GE(presets.size(), 20u);
  auto wv = lesson_word_vectors();
  auto model = make_lesson_model();
  std::set<std::string> words;
  for (const PresetPair& p : presets) {
    EXPECT_TRUE(words.insert(p.word).second) << "duplicate preset " << p.word;
    EXPECT_GE(wv->lookup(p.word), 0) << p.word;
    EXPECT_FALSE(p.sense1.empty());
    EXPECT_FALSE(p.sense2.empty());
    EXPECT_GE(p.cues1.size(), 3u) << p.word;
    EXPECT_GE(p.cues2.size(), 3u) << p.word;
    for (const auto& c : p.cues1) EXPECT_GE(wv->lookup(c), 0) << p.word << ": cue " << c;
    for (const auto& c : p.cues2) EXPECT_GE(wv->lookup(c), 0) << p.word << ": cue " << c;
    for (const std::string& text : {p.text1, p.text2}) {
      Tokens t = model->tokenize(text);
      bool found = false;
      int unknown = 0;
      for (const Token& tok : t) found |= tok.text == p.word, unknown += tok.unknown;
      EXPECT_TRUE(found) << p.word << " missing from: " << text;
      EXPECT_EQ(unknown, 0) << "unknown word in: " << text;
      EXPECT_GE(t.size(), 5u) << "a sentence, not a phrase: " << text;
    }
  }
  // The app opens on the article's example.
  ASSERT_FALSE(presets.empty());
  EXPECT_EQ(presets[0].word, "bank");
}

TEST(LessonPresets, MostPairsLeanToTheRightSense) {
  auto presets = lesson_presets();
  auto wv = lesson_word_vectors();
  auto model = make_lesson_model();
  auto cpu = make_cpu_backend();
  int right = 0;
  for (const PresetPair& p : presets) {
    const Eigen::VectorXd s1 = cue_mean(*wv, p.cues1), s2 = cue_mean(*wv, p.cues2);
    double margin[2];
    for (int k = 0; k < 2; ++k) {
      AttentionTrace t = model->run(k == 0 ? p.text1 : p.text2, *cpu);
      Eigen::VectorXd c = lesson_context_vector(t, index_of(t, p.word)).transpose().cast<double>();
      margin[k] = k == 0 ? cosine(c, s1) - cosine(c, s2) : cosine(c, s2) - cosine(c, s1);
    }
    const bool ok = margin[0] > 0 && margin[1] > 0;
    right += ok;
    std::printf("  %-8s %-10s %+.3f   %-10s %+.3f   %s\n", p.word.c_str(), p.sense1.c_str(),
                margin[0], p.sense2.c_str(), margin[1], ok ? "right" : "WRONG");
  }
  std::printf("  %d of %zu pairs lean to the right sense\n", right, presets.size());
  RecordProperty("right_pairs", right);
  EXPECT_GE(right, kMinimumRightPairs);
}

}  // namespace
}  // namespace attnscope
