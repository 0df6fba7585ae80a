// The decoder families as Models opened by spec (the registry), with their real tokenizers: traces,
// the JSON contract (kind, kv_heads, generated, predictions), and generation (greedy, seeded
// sampling, stopping at EOS) checked against one full forward pass over the generated ids.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/trace/json_writer.h"
#include "core/util/error.h"
#include "tests/common/golden.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::max_abs_diff;

fs::path fixture(const std::string& name) {
  return fs::path(ATTNSCOPE_FIXTURES) / name;
}

// The trace as `attnscope export` writes it, parsed back.
nlohmann::json trace_to_json(const AttentionTrace& t) {
  std::ostringstream out;
  write_trace_json(t, out);
  return nlohmann::json::parse(out.str());
}

bool has_tokenizer(const std::string& name) {
  return fs::exists(fixture(name) / "tokenizer.json");
}

class DecoderModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderModelTest, OpensByPathAndTracesEveryQueryHead) {
  const std::string name = GetParam();
  if (!has_tokenizer(name)) GTEST_SKIP() << "no tokenizer files (scripts/fetch_test_data.sh)";
  const auto model = open_model(fixture(name).string());
  const nlohmann::json config = read_model_config(fixture(name));
  const ModelInfo info = model->info();
  EXPECT_EQ(info.kind, config["model_type"].get<std::string>());
  EXPECT_EQ(info.kv_heads, config["num_key_value_heads"].get<int>());
  EXPECT_TRUE(info.capabilities.generation);
  EXPECT_TRUE(info.capabilities.predictions);
  EXPECT_FALSE(info.capabilities.meaning_shift);
  const auto backend = make_cpu_backend();
  const std::string text = "The quick brown fox jumps over the lazy dog, again and again.";
  const AttentionTrace t = model->run(text, *backend);
  const int n = static_cast<int>(t.tokens.size());
  ASSERT_GT(n, 6);
  ASSERT_EQ(t.layers(), info.layers);
  ASSERT_EQ(t.heads(), info.heads);
  for (const auto& layer : t.attention)
    for (const Matrix& a : layer) {
      ASSERT_EQ(a.rows(), n);
      ASSERT_EQ(a.cols(), n);
      for (int i = 0; i < n; ++i) EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5f);
    }
  EXPECT_EQ(t.predictions.size(), 10u);
  const nlohmann::json doc = trace_to_json(t);
  EXPECT_EQ(doc["model"]["kind"], info.kind);
  EXPECT_EQ(doc["model"]["kv_heads"], info.kv_heads);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecoderModelTest,
                         ::testing::Values("llama-tiny", "smollm-tiny", "mistral-tiny",
                                           "qwen2-tiny", "qwen3-tiny", "gemma2-tiny",
                                           "gemma3-tiny"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

// Generation's trace equals one forward pass over the whole sequence of ids.
void expect_matches_full_forward(const AttentionTrace& t, const std::string& fixture_name) {
  const fs::path folder = fixture(fixture_name);
  const nlohmann::json config = read_model_config(folder);
  const DecoderNetwork net =
      DecoderNetwork::load(folder, llama_spec(config, folder / "config.json"));
  const auto backend = make_cpu_backend();
  KvCache cache;
  const DecoderOutputs full = net.forward(token_ids(t.tokens), cache, *backend);
  float worst = 0;
  for (int l = 0; l < t.layers(); ++l)
    for (int h = 0; h < t.heads(); ++h)
      worst = std::max(worst, max_abs_diff(t.attention[l][h], full.attention[l][h]));
  EXPECT_LE(worst, 1e-5f);
}

TEST(DecoderGenerationTest, GreedyMarksTokensAndMatchesFullForward) {
  if (!has_tokenizer("llama-tiny")) GTEST_SKIP() << "no tokenizer files";
  const auto model = open_model(fixture("llama-tiny").string());
  const auto backend = make_cpu_backend();
  GenerationOptions o;
  o.max_new_tokens = 6;
  auto gen = model->start_generation("Once upon a time", *backend, o);
  const int prompt = static_cast<int>(gen->trace().tokens.size());
  int steps = 0;
  while (!gen->done()) {
    const GenerationStep st = gen->step();
    ++steps;
    EXPECT_TRUE(st.token.generated);
    ASSERT_EQ(st.predictions.size(), 10u);
    EXPECT_EQ(st.token.id, st.predictions[0].id) << "greedy takes the most likely token";
    ASSERT_EQ(static_cast<int>(st.attention.size()), model->info().layers);
    EXPECT_EQ(static_cast<int>(st.attention[0][0].size()), prompt + steps);
  }
  const AttentionTrace& t = gen->trace();
  ASSERT_EQ(static_cast<int>(t.tokens.size()), prompt + steps);
  EXPECT_EQ(steps, 6);
  for (int i = 0; i < static_cast<int>(t.tokens.size()); ++i) {
    EXPECT_EQ(t.tokens[i].generated, i >= prompt);
    EXPECT_EQ(t.token_predictions[i].empty(), i < prompt);
  }
  expect_matches_full_forward(t, "llama-tiny");
  const nlohmann::json doc = trace_to_json(t);
  EXPECT_EQ(doc["tokens"][prompt]["generated"], true);
  EXPECT_EQ(doc["tokens"][prompt]["predictions"].size(), 10u);
  EXPECT_FALSE(doc["tokens"][0].contains("generated"));
}

TEST(DecoderGenerationTest, SamplingIsDeterministicForASeed) {
  if (!has_tokenizer("smollm-tiny")) GTEST_SKIP() << "no tokenizer files";
  const auto model = open_model(fixture("smollm-tiny").string());
  const auto backend = make_cpu_backend();
  auto ids_for = [&](std::uint64_t seed) {
    GenerationOptions o;
    o.max_new_tokens = 8;
    o.temperature = 1.0f;
    o.top_k = 50;
    o.seed = seed;
    auto gen = model->start_generation("Hello", *backend, o);
    std::vector<int> ids;
    while (!gen->done()) ids.push_back(gen->step().token.id);
    return ids;
  };
  EXPECT_EQ(ids_for(7), ids_for(7));
  EXPECT_NE(ids_for(7), ids_for(8));
}

TEST(DecoderGenerationTest, StopsAtEndOfSequence) {
  if (!has_tokenizer("llama-tiny")) GTEST_SKIP() << "no tokenizer files";
  const auto backend = make_cpu_backend();
  GenerationOptions o;
  o.max_new_tokens = 5;
  // The greedy first token of this fixture, declared as its EOS in a copy of the folder.
  const int first = open_model(fixture("llama-tiny").string())
                        ->start_generation("Once upon a time", *backend, o)
                        ->step()
                        .token.id;
  const fs::path dir = fs::temp_directory_path() / ("attnscope_eos_" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(fixture("llama-tiny")))
    fs::create_symlink(e.path(), dir / e.path().filename());
  fs::remove(dir / "config.json");
  nlohmann::json config = read_model_config(fixture("llama-tiny"));
  config["eos_token_id"] = {128001, first};
  std::ofstream(dir / "config.json") << config.dump();
  auto gen = open_model(dir.string())->start_generation("Once upon a time", *backend, o);
  const GenerationStep st = gen->step();
  EXPECT_TRUE(st.end_of_text);
  EXPECT_TRUE(gen->done());
  EXPECT_THROW(gen->step(), UsageError);
  fs::remove_all(dir);
}

TEST(DecoderGenerationTest, EncodersCannotGenerate) {
  const auto backend = make_cpu_backend();
  EXPECT_THROW(open_model("lesson")->start_generation("a b", *backend, {}), UsageError);
}

}  // namespace
}  // namespace attnscope
