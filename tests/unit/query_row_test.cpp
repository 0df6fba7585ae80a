// One query's row of the formula at any length (core/trace/query_row.h), checked against the model
// itself: from the full steps of a short input, and recomputed from q, k, v for a long one, the
// softmax of the scaled row (computed here in double) reproduces the attention the model
// published, and the output is Σ weights · v.
#include <cmath>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"
#include "core/trace/query_row.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

// softmax of `scaled` (−∞ entries give 0), in double.
std::vector<double> softmax(const std::vector<float>& scaled) {
  double mx = -INFINITY;
  for (float v : scaled) mx = std::max<double>(mx, v);
  std::vector<double> out(scaled.size());
  double sum = 0;
  for (size_t j = 0; j < scaled.size(); ++j)
    sum += out[j] = std::isinf(scaled[j]) ? 0.0 : std::exp(scaled[j] - mx);
  for (double& v : out) v /= sum;
  return out;
}

void check_rows(const AttentionTrace& t, QueryRow::Source expected) {
  for (int l = 0; l < t.layers(); ++l)
    for (int h = 0; h < t.heads(); ++h)
      for (int i :
           {0, static_cast<int>(t.tokens.size()) / 2, static_cast<int>(t.tokens.size()) - 1}) {
        SCOPED_TRACE("layer " + std::to_string(l) + " head " + std::to_string(h) + " query " +
                     std::to_string(i));
        const QueryRow row = query_row(t, l, h, i);
        ASSERT_EQ(row.source, expected);
        const Matrix& w = t.attention[l][h];
        ASSERT_EQ(static_cast<int>(row.weights.size()), w.cols());
        const std::vector<double> p = softmax(row.scaled);
        for (int j = 0; j < w.cols(); ++j) {
          EXPECT_EQ(row.weights[j], w(i, j));
          EXPECT_NEAR(p[j], w(i, j), 1e-5 + 1e-4 * w(i, j)) << "key " << j;
        }
        const HeadSteps& s = t.steps[static_cast<size_t>(l) * t.heads() + h];
        for (int k = 0; k < s.v.cols(); ++k) {
          double out = 0;
          for (int j = 0; j < w.cols(); ++j) out += double(w(i, j)) * s.v(j, k);
          EXPECT_NEAR(row.output[k], out, 1e-4);
        }
      }
}

std::string sentence(int words) {
  std::string s;
  for (int i = 0; i < words; ++i) {
    if (i) s += ' ';
    s += i % 3 ? "river" : "bank";
  }
  return s;
}

TEST(QueryRow, FromFullStepsAndFromVectors) {
  const auto backend = make_cpu_backend();
  for (const char* name : {"gpt2-tiny-f32", "bert-tiny-uncased-f32", "llama-tiny", "gemma2-tiny"}) {
    SCOPED_TRACE(name);
    auto model = open_model((fs::path(ATTNSCOPE_FIXTURES) / name).string());
    const AttentionTrace short_trace = model->run(sentence(4), *backend);
    ASSERT_LE(short_trace.tokens.size(), static_cast<size_t>(kStepsMaxTokens));
    check_rows(short_trace, QueryRow::Source::kSteps);
    const AttentionTrace long_trace = model->run(sentence(30), *backend);
    ASSERT_GT(long_trace.tokens.size(), static_cast<size_t>(kStepsMaxTokens));
    check_rows(long_trace, QueryRow::Source::kVectors);
  }
}

TEST(QueryRow, WithoutStepsOnlyTheWeights) {
  AttentionTrace t;
  t.tokens.resize(3);
  Matrix w(3, 3);
  w << 1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5;
  t.attention = {{w}};
  const QueryRow row = query_row(t, 0, 0, 2);
  EXPECT_EQ(row.source, QueryRow::Source::kWeights);
  EXPECT_EQ(row.weights, (std::vector<float>{0.2f, 0.3f, 0.5f}));
  EXPECT_TRUE(row.scores.empty());
  EXPECT_THROW(query_row(t, 0, 0, 3), std::out_of_range);
  EXPECT_THROW(query_row(t, 1, 0, 0), std::out_of_range);
}

}  // namespace
}  // namespace attnscope
