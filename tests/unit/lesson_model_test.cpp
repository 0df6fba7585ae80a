#include "core/model/lesson/lesson_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/lesson/word_vectors.h"
#include "core/util/assets.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

int index_of(const AttentionTrace& t, const std::string& word) {
  for (size_t i = 0; i < t.tokens.size(); ++i)
    if (t.tokens[i].text == word) return static_cast<int>(i);
  return -1;
}

AttentionTrace run(const std::string& text, const LessonOptions& o = {}) {
  auto backend = make_cpu_backend();
  return make_lesson_model(o)->run(text, *backend);
}

double cosine(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.dot(b) / (a.norm() * b.norm());
}

// Mean of the cue words' vectors, straight from the asset file (independent of the model).
Eigen::VectorXd cue_mean(const WordVectors& wv, const std::vector<std::string>& cues) {
  Eigen::VectorXd m = Eigen::VectorXd::Zero(wv.dim());
  for (const std::string& c : cues) {
    int id = wv.lookup(c);
    EXPECT_GE(id, 0) << c;
    if (id >= 0) m += wv.vectors.row(id).transpose().cast<double>();
  }
  return m / static_cast<double>(cues.size());
}

void expect_rows_sum_to_one_or_zero(const Matrix& w) {
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    double s = w.row(i).cast<double>().sum();
    EXPECT_TRUE(std::abs(s - 1.0) < 1e-5 || s == 0.0) << "row " << i << " sums to " << s;
    EXPECT_TRUE(w.row(i).allFinite());
  }
}

TEST(LessonModel, RiverBankAttendsToRiverAndMoneyBankToMoney) {
  auto t1 = run("she sat by the bank of the river");
  auto t2 = run("she withdrew money from the bank");
  const Matrix& w1 = t1.attention[0][0];
  const Matrix& w2 = t2.attention[0][0];
  Eigen::Index best;
  w1.row(index_of(t1, "bank")).maxCoeff(&best);
  EXPECT_EQ(t1.tokens[best].text, "river");
  w2.row(index_of(t2, "bank")).maxCoeff(&best);
  EXPECT_EQ(t2.tokens[best].text, "money");
}

TEST(LessonModel, EnrichedBankMovesTowardsTheRightSense) {
  auto wv = load_word_vectors(find_asset("lesson_vectors.bin"));
  Eigen::VectorXd river = cue_mean(wv, {"river", "shore", "water", "stream"});
  Eigen::VectorXd money = cue_mean(wv, {"money", "loan", "deposit", "cash"});
  auto t1 = run("she sat by the bank of the river");
  auto t2 = run("she withdrew money from the bank");
  Eigen::VectorXd c1 = lesson_context_vector(t1, index_of(t1, "bank")).transpose().cast<double>();
  Eigen::VectorXd c2 = lesson_context_vector(t2, index_of(t2, "bank")).transpose().cast<double>();
  EXPECT_GT(cosine(c1, river), cosine(c1, money));
  EXPECT_GT(cosine(c2, money), cosine(c2, river));
}

TEST(LessonModel, WeightsMatchAnIndependentSoftmaxOfBetaCosines) {
  auto wv = load_word_vectors(find_asset("lesson_vectors.bin"));
  const std::string text = "the crane lifted steel beams onto the building";
  LessonOptions o;
  o.beta = 3.0f;
  auto t = run(text, o);
  const int n = static_cast<int>(t.tokens.size());
  ASSERT_EQ(n, 8);
  for (int i = 0; i < n; ++i) {
    // softmax over j != i of β·cos(x_i, x_j), in double
    std::vector<double> logits(n);
    double mx = -1e300, z = 0;
    for (int j = 0; j < n; ++j) {
      Eigen::VectorXd a = wv.vectors.row(t.tokens[i].id).transpose().cast<double>();
      Eigen::VectorXd b = wv.vectors.row(t.tokens[j].id).transpose().cast<double>();
      logits[j] = 3.0 * cosine(a, b);
      if (j != i) mx = std::max(mx, logits[j]);
    }
    for (int j = 0; j < n; ++j) z += j == i ? 0 : std::exp(logits[j] - mx);
    for (int j = 0; j < n; ++j) {
      double expect = j == i ? 0 : std::exp(logits[j] - mx) / z;
      EXPECT_NEAR(t.attention[0][0](i, j), expect, 1e-5) << i << "," << j;
    }
  }
  // Steps: Q = K = V, scores = Q·Kᵀ, weights and output as in the trace.
  const HeadSteps& s = t.steps[0];
  EXPECT_TRUE(s.q.isApprox(s.k));
  EXPECT_TRUE(s.q.isApprox(s.v));
  EXPECT_TRUE(s.scores.isApprox(s.q * s.k.transpose(), 1e-5f));
  EXPECT_TRUE(s.output.isApprox(s.weights * s.v, 1e-4f));
  EXPECT_EQ(s.weights, t.attention[0][0]);
}

TEST(LessonModel, OptionsAreRecordedAndChangeTheResult) {
  LessonOptions o;
  o.beta = 2.0f;
  o.mask_self = false;
  o.causal = true;
  o.positional = true;
  o.heads = 4;
  auto t = run("she sat by the bank of the river", o);
  EXPECT_EQ(t.model.name, "lesson");
  EXPECT_EQ(t.model.kind, "lesson");
  EXPECT_EQ(t.model.layers, 1);
  EXPECT_EQ(t.model.heads, 4);
  EXPECT_EQ(t.backend, "cpu");
  EXPECT_EQ(t.model.options["beta"], 2.0);
  EXPECT_EQ(t.model.options["mask_self"], false);
  EXPECT_EQ(t.model.options["causal"], true);
  EXPECT_EQ(t.model.options["positional"], true);
  EXPECT_EQ(t.model.options["heads"], 4);
  EXPECT_EQ(t.model.options["scale"], true);
  ASSERT_EQ(t.layers(), 1);
  ASSERT_EQ(t.heads(), 4);
  ASSERT_EQ(t.steps.size(), 4u);
  for (int h = 0; h < 4; ++h) {
    const Matrix& w = t.attention[0][h];
    expect_rows_sum_to_one_or_zero(w);
    EXPECT_EQ(t.steps[h].q.cols(), 32);
    for (int i = 0; i < w.rows(); ++i) {
      EXPECT_GT(w(i, i), 0.0f);                                         // self allowed
      for (int j = i + 1; j < w.cols(); ++j) EXPECT_EQ(w(i, j), 0.0f);  // causal
    }
  }
  // Different heads see different subspaces, so they disagree somewhere.
  EXPECT_GT((t.attention[0][0] - t.attention[0][1]).cwiseAbs().maxCoeff(), 1e-3f);
  // Positional encoding changes who attends where.
  o.positional = false;
  auto u = run("she sat by the bank of the river", o);
  EXPECT_GT((t.attention[0][0] - u.attention[0][0]).cwiseAbs().maxCoeff(), 1e-3f);
}

TEST(LessonModel, ScalingOffSharpensByRootDk) {
  const std::string text = "the dog began to bark at the stranger";
  LessonOptions o;
  auto on = run(text, o);
  o.scale = false;
  auto off = run(text, o);
  // Same scores; the logits without 1/√d_k are √128 times larger.
  EXPECT_TRUE(on.steps[0].scores.isApprox(off.steps[0].scores));
  const float r = std::sqrt(128.0f);
  EXPECT_NEAR(off.steps[0].scaled(0, 1), on.steps[0].scaled(0, 1) * r, 1e-3f);
  EXPECT_GT(off.attention[0][0].row(0).maxCoeff(), on.attention[0][0].row(0).maxCoeff());
}

TEST(LessonModel, HeadProjectionsAreOrthonormalAndDisjoint) {
  Matrix all(128, 128);
  for (int h = 0; h < 8; ++h) all.middleCols(h * 16, 16) = lesson_head_projection(8, h, 128);
  EXPECT_TRUE((all.transpose() * all).isApprox(Matrix::Identity(128, 128), 1e-4f));
  EXPECT_EQ(lesson_head_projection(8, 3, 128), lesson_head_projection(8, 3, 128));  // fixed seed
  EXPECT_THROW(make_lesson_model(LessonOptions{.heads = 3}), UsageError);
  EXPECT_THROW(make_lesson_model(LessonOptions{.heads = 0}), UsageError);
  EXPECT_THROW(make_lesson_model(LessonOptions{.beta = -1.0f}), UsageError);
  EXPECT_THROW(make_lesson_model(LessonOptions{.beta = std::numeric_limits<float>::quiet_NaN()}),
               UsageError);
}

TEST(LessonModel, UnknownWordsStayTokensAndReceiveNoAttention) {
  auto t = run("the zorblax sat by the bank.");
  ASSERT_EQ(t.tokens.size(), 7u);
  EXPECT_EQ(t.tokens[1].text, "zorblax");
  EXPECT_EQ(t.tokens[1].id, -1);
  EXPECT_TRUE(t.tokens[1].unknown);
  EXPECT_TRUE(t.tokens[6].unknown);  // "."
  EXPECT_FALSE(t.tokens[5].unknown);
  const Matrix& w = t.attention[0][0];
  expect_rows_sum_to_one_or_zero(w);
  EXPECT_EQ(w.col(1).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_EQ(w.col(6).cwiseAbs().maxCoeff(), 0.0f);
  // The unknown query is a zero vector: equal weight on every key it may see (4 known others).
  for (int j : {0, 2, 3, 4, 5}) EXPECT_NEAR(w(1, j), 0.2f, 1e-6f);
  // Without the mask an unknown key scores 0 and gets weight by the formula.
  LessonOptions o;
  o.mask_unknown = false;
  auto u = run("the zorblax sat by the bank.", o);
  EXPECT_GT(u.attention[0][0](5, 1), 0.0f);
  expect_rows_sum_to_one_or_zero(u.attention[0][0]);
}

TEST(LessonModel, OddInputHasADefinedResult) {
  auto empty = run("");
  EXPECT_TRUE(empty.tokens.empty());
  EXPECT_EQ(empty.heads(), 1);
  EXPECT_EQ(empty.attention[0][0].rows(), 0);
  EXPECT_EQ(empty.truncated_at_byte, -1);

  auto punct = run("?!,.");
  ASSERT_EQ(punct.tokens.size(), 4u);
  EXPECT_TRUE(punct.attention[0][0].isZero());  // nothing known to attend to: all rows masked

  auto one = run("bank");
  EXPECT_EQ(one.attention[0][0](0, 0), 0.0f);  // a lone word with exclude-self sees nothing

  auto invalid = run(std::string("the \xff\xfe bank of the \xc0 river"));
  EXPECT_EQ(invalid.tokens[1].text, "\xEF\xBF\xBD");
  EXPECT_TRUE(invalid.tokens[1].unknown);
  expect_rows_sum_to_one_or_zero(invalid.attention[0][0]);
  Eigen::Index best;
  invalid.attention[0][0].row(index_of(invalid, "bank")).maxCoeff(&best);
  EXPECT_EQ(invalid.tokens[best].text, "river");
}

TEST(LessonModel, LongInputIsTruncatedVisibly) {
  std::string text;
  while (text.size() < 100000) text += "the river bank ";
  text.resize(100000);
  auto t = run(text);
  ASSERT_EQ(static_cast<int>(t.tokens.size()), kLessonMaxTokens);
  // 170 × "the river bank " = 510 tokens, then "the river ": token 513 ("bank") starts at
  EXPECT_EQ(t.truncated_at_byte, 170 * 15 + 10);
  EXPECT_EQ(t.text.size(), 100000u);
  EXPECT_LE(t.tokens.back().end, t.truncated_at_byte);
  EXPECT_EQ(t.attention[0][0].rows(), kLessonMaxTokens);
  expect_rows_sum_to_one_or_zero(t.attention[0][0]);
  // 100,000 characters of one word, and of punctuation.
  auto word = run(std::string(100000, 'a'));
  EXPECT_EQ(word.tokens.size(), 1u);
  EXPECT_TRUE(word.tokens[0].unknown);
  auto dots = run(std::string(100000, '.'));
  EXPECT_EQ(static_cast<int>(dots.tokens.size()), kLessonMaxTokens);
  EXPECT_EQ(dots.truncated_at_byte, kLessonMaxTokens);
}

TEST(LessonModel, MeaningShiftShowsTheContext) {
  auto t = run("she sat by the bank of the river");
  MeaningShift s = lesson_meaning_shift(t, index_of(t, "bank"), 8);
  ASSERT_EQ(s.static_neighbors.size(), 8u);
  ASSERT_EQ(s.context_neighbors.size(), 8u);
  auto contains = [](const std::vector<Neighbor>& v, const std::string& w) {
    for (const Neighbor& n : v)
      if (n.word == w) return true;
    return false;
  };
  EXPECT_FALSE(contains(s.static_neighbors, "bank"));  // the word itself is left out
  EXPECT_FALSE(contains(s.static_neighbors, "river"));
  EXPECT_TRUE(contains(s.context_neighbors, "river"));
  for (size_t i = 1; i < s.context_neighbors.size(); ++i)
    EXPECT_GE(s.context_neighbors[i - 1].similarity, s.context_neighbors[i].similarity);
  EXPECT_TRUE(lesson_meaning_shift(t, 99).context_neighbors.empty());
  auto u = run("zorblax bank");
  EXPECT_TRUE(lesson_meaning_shift(u, 0).static_neighbors.empty());
}

// The app's worker publishes every token's shift at once (projections built once per head); each
// must be what the one-token function gives, for several heads and an unknown word.
TEST(LessonModel, AllMeaningShiftsAtOnceEqualOneAtATime) {
  for (int heads : {1, 4}) {
    auto t = run("she sat by the zorblax bank of the river", LessonOptions{.heads = heads});
    std::vector<MeaningShift> all = lesson_meaning_shifts(t, 8);
    ASSERT_EQ(all.size(), t.tokens.size());
    for (int i = 0; i < static_cast<int>(t.tokens.size()); ++i) {
      MeaningShift one = lesson_meaning_shift(t, i, 8);
      ASSERT_EQ(all[i].static_neighbors.size(), one.static_neighbors.size()) << "token " << i;
      ASSERT_EQ(all[i].context_neighbors.size(), one.context_neighbors.size()) << "token " << i;
      for (size_t k = 0; k < one.context_neighbors.size(); ++k) {
        EXPECT_EQ(all[i].context_neighbors[k].word, one.context_neighbors[k].word)
            << "heads " << heads << " token " << i << " rank " << k;
        EXPECT_NEAR(all[i].context_neighbors[k].similarity, one.context_neighbors[k].similarity,
                    1e-5f);
      }
      for (size_t k = 0; k < one.static_neighbors.size(); ++k)
        EXPECT_EQ(all[i].static_neighbors[k].word, one.static_neighbors[k].word);
    }
  }
}

TEST(LessonModel, TokenizeMarksUnknownWords) {
  Tokens t = make_lesson_model()->tokenize("The bank's zorblax");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_GE(t[0].id, 0);
  auto wv = lesson_word_vectors();
  EXPECT_EQ(t[1].id, wv->lookup("bank"));  // possessive falls back to the bare word
  EXPECT_EQ(t[2].id, -1);
  EXPECT_TRUE(t[2].unknown);
}

TEST(WordVectors, TheShippedAssetIsWellFormed) {
  auto wv = lesson_word_vectors();
  EXPECT_EQ(wv->dim(), 128);
  EXPECT_GE(wv->vectors.rows(), 30000);
  EXPECT_EQ(wv->words[0], "the");
  for (int i : {0, 100, 1000, 39999}) EXPECT_NEAR(wv->vectors.row(i).norm(), 1.0f, 1e-5f);
  EXPECT_EQ(lesson_word_vectors().get(), wv.get());  // loaded once, shared
}

TEST(WordVectors, CorruptFilesAreRejectedWithAUsefulMessage) {
  const auto dir = std::filesystem::temp_directory_path() / "attnscope_lesson_test";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return dir / name;
  };
  EXPECT_THROW(load_word_vectors(dir / "missing.bin"), ModelError);
  EXPECT_THROW(load_word_vectors(write("bad_magic.bin", "NOPE")), ModelError);
  std::string header("ATWV\x01\0\0\0\x01\0\0\0\x02\0\0\0", 16);
  EXPECT_THROW(load_word_vectors(write("short.bin", header + "\x03"
                                                             "cat")),
               ModelError);
  std::string good = header +
                     "\x03"
                     "cat" +
                     std::string("\0\0\x80\x3f", 4) + "\x03\x04";
  WordVectors wv = load_word_vectors(write("good.bin", good));
  EXPECT_EQ(wv.words, std::vector<std::string>{"cat"});
  EXPECT_NEAR(wv.vectors(0, 0), 0.6f, 1e-6f);  // (3, 4) normalised
  EXPECT_NEAR(wv.vectors(0, 1), 0.8f, 1e-6f);
  try {
    load_word_vectors(write("bad_version.bin", "ATWV\x02\0\0\0"));
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("build_word_vectors"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST(Assets, EnvironmentFolderComesFirstAndMissingAssetsSayWhere) {
  const auto dir = std::filesystem::temp_directory_path() / "attnscope_assets_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "only_here.txt") << "x";
  setenv("ATTNSCOPE_ASSETS", dir.c_str(), 1);
  EXPECT_EQ(find_asset("only_here.txt"), dir / "only_here.txt");
  EXPECT_EQ(asset_search_path().front(), dir);
  unsetenv("ATTNSCOPE_ASSETS");
  try {
    find_asset("no_such_asset.bin");
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("ATTNSCOPE_ASSETS"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attnscope

namespace attnscope {
namespace {
// Issue 22: a sentence in another language is masked word by word; the trace says why in words.
TEST(LessonModel, WordsOfAnotherLanguageAreExplainedAndPointToAModelThatReadsThem) {
  const AttentionTrace zh = run("\xE9\x93\xB6\xE8\xA1\x8C \xE5\x9C\xA8\xE6\xB2\xB3\xE8\xBE\xB9");
  EXPECT_NE(zh.note.find("English only"), std::string::npos) << zh.note;
  EXPECT_NE(zh.note.find("2 words"), std::string::npos) << zh.note;
  EXPECT_NE(zh.note.find("tiny"), std::string::npos) << zh.note;
  const AttentionTrace mixed = run("the bank of the \xD1\x80\xD0\xB5\xD0\xBA\xD0\xB8");  // реки
  EXPECT_NE(mixed.note.find("1 word here"), std::string::npos) << mixed.note;
  // English, or an English word without a vector, needs no such note.
  EXPECT_EQ(run("she sat by the bank of the river").note, "");
  EXPECT_EQ(run("she xqzzvw by the bank").note, "");
}
}  // namespace
}  // namespace attnscope
