// Value-weighted attention (issue 27, core/analysis/value_weighting.h): w_ij = a_ij·n_j /
// Σ_j' a_ij'·n_j'. The transform against numbers worked out by hand, its invariants (rows sum to
// 1, masked entries stay 0, never weighted twice), the compact long-input trace against the stored
// one, and the trace files keeping "weighting" and "value_norms" through every writer and reader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/analysis/value_weighting.h"
#include "core/trace/json_writer.h"
#include "core/trace/recomputed_attention.h"
#include "core/trace/trace_reader.h"
#include "core/trace/trace_writer.h"
#include "core/util/error.h"
#include "tests/common/sample_trace.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

Matrix rows(std::initializer_list<std::initializer_list<float>> r) {
  Matrix m(static_cast<Eigen::Index>(r.size()), static_cast<Eigen::Index>(r.begin()->size()));
  Eigen::Index i = 0;
  for (const auto& row : r) {
    Eigen::Index j = 0;
    for (float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

RowVector vec(std::initializer_list<float> v) {
  RowVector r(static_cast<Eigen::Index>(v.size()));
  Eigen::Index j = 0;
  for (float x : v) r[j++] = x;
  return r;
}

// Norms 0.5 … 2.5 that differ per layer, head and key.
void add_norms(AttentionTrace& t) {
  const int n = static_cast<int>(t.tokens.size());
  t.value_norms.assign(t.attention.size(), {});
  for (std::size_t l = 0; l < t.attention.size(); ++l)
    for (std::size_t h = 0; h < t.attention[l].size(); ++h) {
      RowVector norms(n);
      for (int j = 0; j < n; ++j)
        norms[j] =
            0.5f +
            static_cast<float>((l * 7 + h * 3 + static_cast<std::size_t>(j) * 5) % 9) * 0.25f;
      t.value_norms[l].push_back(norms);
    }
}

// ---- the transform ----------------------------------------------------------------------------

TEST(WeightKeysTest, HandComputedExample) {
  // Row 0: 0.5·2 = 1, 0.25·0 = 0, 0.25·4 = 1, sum 2 -> 0.5, 0, 0.5.
  // Row 1 (fully masked): stays 0.
  // Row 2: 0.2·2 = 0.4, 0.8·0 = 0, 0 -> 1, 0, 0.
  // Row 3: 0.1·2 = 0.2, 0.6·0 = 0, 0.3·4 = 1.2, sum 1.4 -> 1/7, 0, 6/7.
  // Row 4: all its weight on the key with norm 0: nothing left, so 0 (not NaN).
  const Matrix a = rows({{0.5f, 0.25f, 0.25f},
                         {0.0f, 0.0f, 0.0f},
                         {0.2f, 0.8f, 0.0f},
                         {0.1f, 0.6f, 0.3f},
                         {0.0f, 1.0f, 0.0f}});
  const Matrix w = weight_keys(a, vec({2.0f, 0.0f, 4.0f}));
  const Matrix expected = rows({{0.5f, 0.0f, 0.5f},
                                {0.0f, 0.0f, 0.0f},
                                {1.0f, 0.0f, 0.0f},
                                {1.0f / 7.0f, 0.0f, 6.0f / 7.0f},
                                {0.0f, 0.0f, 0.0f}});
  EXPECT_LE((w - expected).cwiseAbs().maxCoeff(), 1e-7f) << w;
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    for (Eigen::Index j = 0; j < w.cols(); ++j) EXPECT_FALSE(std::isnan(w(i, j)));
}

TEST(WeightKeysTest, EqualNormsChangeNothingAndScaleDoesNotMatter) {
  const Matrix a = rows({{0.7f, 0.3f}, {0.4f, 0.6f}});
  EXPECT_LE((weight_keys(a, vec({3.0f, 3.0f})) - a).cwiseAbs().maxCoeff(), 1e-7f);
  // 1 : 3 norms on 0.5 / 0.5: 0.25, 0.75; on 0.7 / 0.3: 0.7 / (0.7 + 0.9) = 0.4375, 0.5625.
  const Matrix expected = rows({{0.4375f, 0.5625f}, {0.4f / 2.2f, 1.8f / 2.2f}});
  EXPECT_LE((weight_keys(a, vec({1.0f, 3.0f})) - expected).cwiseAbs().maxCoeff(), 1e-7f);
  EXPECT_LE((weight_keys(a, vec({10.0f, 30.0f})) - expected).cwiseAbs().maxCoeff(), 1e-7f);
}

TEST(WeightKeysTest, CausalRowsSumToOneAndMaskedEntriesStayZero) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.01f, 1.0f);
  const int n = 40;
  Matrix a = Matrix::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) a(i, j) = u(rng);
    a.row(i) /= a.row(i).sum();
  }
  RowVector norms(n);
  for (int j = 0; j < n; ++j) norms[j] = 5.0f * u(rng);
  const Matrix w = weight_keys(a, norms);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(w.row(i).cast<double>().sum(), 1.0, 1e-6) << "row " << i;
    for (int j = i + 1; j < n; ++j) EXPECT_EQ(w(i, j), 0.0f) << i << ", " << j;
  }
}

TEST(WeightKeysTest, WrongLengthIsAnError) {
  EXPECT_THROW(weight_keys(Matrix::Ones(2, 3), vec({1.0f, 2.0f})), Error);
}

// ---- on a trace ----------------------------------------------------------------------------

TEST(ApplyWeightingTest, WeightsEveryHeadAndRecordsIt) {
  AttentionTrace t = test::sample_trace(2, 3, 5);
  add_norms(t);
  const AttentionTrace raw = t;
  apply_weighting(t, "value-norm");
  EXPECT_EQ(t.weighting, "value-norm");
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 3; ++h) {
      const Matrix& w = t.attention[l][h];
      const Matrix& a = raw.attention[l][h];
      const RowVector& n = raw.value_norms[l][h];
      for (int i = 0; i < 5; ++i) {
        double sum = 0;
        for (int j = 0; j < 5; ++j) sum += static_cast<double>(a(i, j)) * n[j];
        for (int j = 0; j < 5; ++j)
          EXPECT_NEAR(w(i, j), static_cast<double>(a(i, j)) * n[j] / sum, 1e-7);
      }
    }
  // Never weighted twice; "raw" leaves a trace as it is.
  const AttentionTrace once = t;
  apply_weighting(t, "value-norm");
  apply_weighting(t, "raw");
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 3; ++h) EXPECT_EQ(t.attention[l][h], once.attention[l][h]);
  AttentionTrace plain = raw;
  apply_weighting(plain, "raw");
  EXPECT_EQ(plain.weighting, "raw");
  EXPECT_EQ(plain.attention[1][2], raw.attention[1][2]);
}

TEST(ApplyWeightingTest, NoValuesIsOneClearLine) {
  AttentionTrace t = test::sample_trace(1, 2, 3);
  try {
    apply_weighting(t, "value-norm");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("value_norms"), std::string::npos) << m;
    EXPECT_NE(m.find("model 'sample'"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  try {
    apply_weighting(t, "value-norm", "the stored trace f.json");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the stored trace f.json"), std::string::npos);
  }
  EXPECT_EQ(t.weighting, "raw");
  EXPECT_THROW(apply_weighting(t, "values"), UsageError);
  EXPECT_NO_THROW(apply_weighting(t, "raw"));
}

TEST(ApplyWeightingTest, NormsThatDoNotFitAreNamed) {
  AttentionTrace t = test::sample_trace(1, 2, 3);
  add_norms(t);
  t.value_norms[0][1] = vec({1.0f, 2.0f});
  EXPECT_THROW(apply_weighting(t, "value-norm"), Error);
  add_norms(t);
  t.value_norms[0][0][2] = -1.0f;
  EXPECT_THROW(apply_weighting(t, "value-norm"), Error);
  t.value_norms[0][0][2] = NAN;
  EXPECT_THROW(apply_weighting(t, "value-norm"), Error);
}

// ---- compact long-input traces ----------------------------------------------------------------

// Two layers of 4 query heads on 2 KV heads, causal, 70 tokens (past one 64-row kernel block).
std::vector<AttentionInputs> random_inputs(int n) {
  std::mt19937 rng(11);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<AttentionInputs> layers(2);
  for (AttentionInputs& a : layers) {
    a.heads = 4;
    a.kv_heads = 2;
    a.head_dim = 8;
    a.scale = 1.0f / std::sqrt(8.0f);
    a.mask.causal = true;
    a.q = Matrix::NullaryExpr(n, 32, [&] { return d(rng); });
    a.k = Matrix::NullaryExpr(n, 16, [&] { return d(rng); });
  }
  return layers;
}

TEST(CompactWeightingTest, RecomputedHeadsAndRowsEqualTheStoredOnes) {
  const int n = 70;
  AttentionTrace compact = test::sample_trace(1, 1, n);
  compact.attention.clear();
  compact.model.layers = 2;
  compact.model.heads = 4;
  compact.recomputed = std::make_shared<const RecomputedAttention>(random_inputs(n));
  AttentionTrace stored = compact;
  stored.recomputed.reset();
  stored.attention.assign(2, std::vector<Matrix>(4));
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h) stored.attention[l][h] = *compact.head_weights(l, h, false);
  add_norms(stored);
  compact.value_norms = stored.value_norms;
  const AttentionTrace compact_raw = compact;  // shares the raw RecomputedAttention

  apply_weighting(stored, "value-norm");
  apply_weighting(compact, "value-norm");
  ASSERT_TRUE(compact.recomputed);
  EXPECT_TRUE(compact.recomputed->weighted());
  EXPECT_TRUE(compact.attention.empty());
  EXPECT_EQ(compact.weighting, "value-norm");
  float worst = 0;
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h) {
      const auto cached = compact.head_weights(l, h);
      const auto uncached = compact.head_weights(l, h, false);
      worst = std::max(worst, (*cached - stored.attention[l][h]).cwiseAbs().maxCoeff());
      worst = std::max(worst, (*uncached - stored.attention[l][h]).cwiseAbs().maxCoeff());
      for (int q : {0, 1, 37, 63, 64, 69}) {
        const std::vector<float> row = compact.head_row(l, h, q);
        for (int j = 0; j < n; ++j)
          worst = std::max(worst, std::abs(row[j] - stored.attention[l][h](q, j)));
        double sum = 0;
        for (int j = 0; j < n; ++j) sum += row[j];
        EXPECT_NEAR(sum, 1.0, 1e-5);
        for (int j = q + 1; j < n; ++j) EXPECT_EQ(row[j], 0.0f);
      }
    }
  EXPECT_LE(worst, 1e-6f);
  // The raw trace that shared the inputs is still raw, and weighting the weighted one again
  // changes nothing.
  EXPECT_FALSE(compact_raw.recomputed->weighted());
  EXPECT_GT((*compact_raw.head_weights(1, 2) - stored.attention[1][2]).cwiseAbs().maxCoeff(),
            1e-3f);
  const auto before = compact.recomputed;
  apply_weighting(compact, "value-norm");
  EXPECT_EQ(compact.recomputed, before);
  EXPECT_THROW(compact_raw.recomputed->with_key_factors({}), Error);
}

// ---- files -------------------------------------------------------------------------------------

std::string json_of(const TraceSlice& slice) {
  std::ostringstream out;
  write_trace_json(slice, out);
  return out.str();
}

AttentionTrace read_json(const std::string& text) {
  std::istringstream in(text);
  return read_trace_json(in, "t.json");
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("attnscope_vw_" + std::to_string(getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void write_file(const TraceSlice& slice, const std::string& format, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  ExportTarget target{
      out, [&](const std::string& suffix, const std::function<void(std::ostream&)>& write) {
        fs::path side = path;
        side.replace_extension(suffix);
        std::ofstream s(side, std::ios::binary);
        write(s);
      }};
  trace_writer(format).write(slice, target);
}

TEST(WeightingFilesTest, JsonKeepsWeightingAndValueNorms) {
  AttentionTrace t = test::sample_trace(2, 3, 4);
  add_norms(t);
  // A raw trace with norms: no "weighting" key, norms kept exactly.
  const std::string raw_text = json_of(whole_trace(t));
  const nlohmann::json raw_doc = nlohmann::json::parse(raw_text);
  EXPECT_FALSE(raw_doc.contains("weighting"));
  ASSERT_TRUE(raw_doc.contains("value_norms"));
  EXPECT_EQ(raw_doc["value_norms"][1][2][3].get<float>(), t.value_norms[1][2][3]);
  const AttentionTrace raw_back = read_json(raw_text);
  EXPECT_EQ(raw_back.weighting, "raw");
  ASSERT_EQ(raw_back.value_norms.size(), 2u);
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 3; ++h) EXPECT_EQ(raw_back.value_norms[l][h], t.value_norms[l][h]);

  // Weighted: "weighting": "value-norm", read back as such and never weighted again.
  AttentionTrace w = t;
  apply_weighting(w, "value-norm");
  const std::string text = json_of(whole_trace(w));
  EXPECT_EQ(nlohmann::json::parse(text)["weighting"], "value-norm");
  AttentionTrace back = read_json(text);
  EXPECT_EQ(back.weighting, "value-norm");
  apply_weighting(back, "value-norm");
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 3; ++h) EXPECT_EQ(back.attention[l][h], w.attention[l][h]);

  // A stored raw trace weighted after reading equals the one weighted before writing.
  AttentionTrace later = read_json(raw_text);
  apply_weighting(later, "value-norm", "the stored trace t.json");
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 3; ++h)
      EXPECT_LE((later.attention[l][h] - w.attention[l][h]).cwiseAbs().maxCoeff(), 1e-7f);

  // A selection keeps the norms of what it holds.
  const TraceSlice part = select_trace(t, "1", "2,0");
  const AttentionTrace sel = read_json(json_of(part));
  ASSERT_EQ(sel.value_norms.size(), 1u);
  ASSERT_EQ(sel.value_norms[0].size(), 2u);
  EXPECT_EQ(sel.value_norms[0][0], t.value_norms[1][2]);
  EXPECT_EQ(sel.value_norms[0][1], t.value_norms[1][0]);
}

TEST(WeightingFilesTest, StoredTraceWithoutNormsGetsTheClearError) {
  const AttentionTrace t = test::sample_trace(1, 2, 3);
  AttentionTrace back = read_json(json_of(whole_trace(t)));
  EXPECT_TRUE(back.value_norms.empty());
  try {
    apply_weighting(back, "value-norm", "the stored trace t.json");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the stored trace t.json"), std::string::npos);
  }
}

TEST(WeightingFilesTest, SafetensorsAndNpyKeepTheWeighting) {
  TempDir dir;
  AttentionTrace t = test::sample_trace(2, 2, 3);
  add_norms(t);
  apply_weighting(t, "value-norm");
  write_file(whole_trace(t), "safetensors", dir.path / "t.safetensors");
  const AttentionTrace back = read_trace_file(dir.path / "t.safetensors");
  EXPECT_EQ(back.weighting, "value-norm");
  ASSERT_EQ(back.value_norms.size(), 2u);
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 2; ++h) {
      EXPECT_EQ(back.value_norms[l][h], t.value_norms[l][h]);
      EXPECT_EQ(back.attention[l][h], t.attention[l][h]);
    }
  const AttentionTrace part = [&] {
    write_file(select_trace(t, "1", "1"), "safetensors", dir.path / "p.safetensors");
    return read_trace_file(dir.path / "p.safetensors");
  }();
  ASSERT_EQ(part.value_norms.size(), 1u);
  EXPECT_EQ(part.value_norms[0][0], t.value_norms[1][1]);

  write_file(whole_trace(t), "npy", dir.path / "t.npy");
  std::ifstream side(dir.path / "t.tokens.json");
  EXPECT_EQ(nlohmann::json::parse(side)["weighting"], "value-norm");
  // Raw traces write no key.
  AttentionTrace raw = test::sample_trace(1, 1, 2);
  write_file(whole_trace(raw), "npy", dir.path / "r.npy");
  std::ifstream raw_side(dir.path / "r.tokens.json");
  EXPECT_FALSE(nlohmann::json::parse(raw_side).contains("weighting"));
}

// The readers refuse what does not fit, naming the key (trace_reader.h's untrusted-input rules).
TEST(WeightingFilesTest, ReadersRefuseBadWeightingAndNorms) {
  AttentionTrace t = test::sample_trace(1, 2, 3);
  add_norms(t);
  nlohmann::json doc = nlohmann::json::parse(json_of(whole_trace(t)));
  auto message = [&](const nlohmann::json& d) -> std::string {
    try {
      read_json(d.dump());
    } catch (const TraceError& e) {
      return e.what();
    }
    return "(read)";
  };
  nlohmann::json bad = doc;
  bad["weighting"] = "softmax";
  EXPECT_NE(message(bad).find("key 'weighting'"), std::string::npos) << message(bad);
  bad = doc;
  bad["weighting"] = 3;
  EXPECT_NE(message(bad).find("key 'weighting'"), std::string::npos) << message(bad);
  bad = doc;
  bad["value_norms"][0][1] = {1.0, 2.0};  // 2 keys where the first head has 3
  EXPECT_NE(message(bad).find("value_norms"), std::string::npos) << message(bad);
  bad = doc;
  bad["value_norms"] = nlohmann::json::array({doc["value_norms"][0], doc["value_norms"][0]});
  EXPECT_NE(message(bad).find("key 'value_norms': expected 1 layers"), std::string::npos)
      << message(bad);
  bad = doc;
  bad["value_norms"][0][0][1] = -2.0;
  EXPECT_NE(message(bad).find("value_norms"), std::string::npos) << message(bad);
  bad = doc;
  bad["value_norms"][0][0][1] = nullptr;
  EXPECT_NE(message(bad).find("value_norms[0][0][1]"), std::string::npos) << message(bad);
  bad = doc;
  bad["value_norms"][0][0][1] = {{1.0}};
  EXPECT_NE(message(bad).find("value_norms"), std::string::npos) << message(bad);
  bad = doc;
  bad["value_norms"] = "none";
  EXPECT_NE(message(bad).find("value_norms"), std::string::npos) << message(bad);
  bad = doc;
  bad["value_norms"] = nlohmann::json::array();
  EXPECT_NE(message(bad).find("value_norms"), std::string::npos) << message(bad);
  // Too many layers: refused while streaming, before they cost memory.
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxTraceLayers; ++i) many += i ? ",[]" : "[]";
  many += "]";
  std::string text = json_of(whole_trace(t));
  const std::size_t at = text.find("\"value_norms\":") + 14;
  const std::size_t end = text.find("]]]", at) + 3;
  text.replace(at, end - at, many);
  try {
    read_json(text);
    FAIL() << "read";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("more than a trace may hold"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(message(doc), "(read)");
}

}  // namespace
}  // namespace attnscope
