// The built-in real trained model (spec `stories`: Karpathy's stories260K, a Llama trained on
// TinyStories, assets/stories260K): it opens without a download, its files are the ones its
// provenance note lists, its tokenizer is Hugging Face's, greedy decoding from "Once upon a time"
// writes llama2.c's reference story word for word, its forward pass matches the independent float64
// reference (tests/data/golden/stories-model.json from tools/reference/make_stories_golden.py), and
// the heads README.md names keep the roles it states.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "core/analysis/head_summary.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/generation.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/model/stories/stories_model.h"
#include "core/text/tokenizer.h"
#include "core/util/sha256.h"
#include "tests/common/golden.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::golden;
using test::max_abs_diff;
using test::to_matrix;

// llama2.c's doc/stories260K.md (its run.c at temperature 0), as ../shared/models/README.md and
// assets/stories260K/PROVENANCE.md quote it.
constexpr const char* kPrompt = "Once upon a time";
constexpr const char* kReferenceStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big, red ball. She wanted to play with it, but it was too high.";

TEST(StoriesModel, OpensAsABuiltInModel) {
  const auto model = open_model("stories");
  const ModelInfo info = model->info();
  EXPECT_EQ(info.name, "stories");
  EXPECT_EQ(info.kind, "llama");
  EXPECT_EQ(info.layers, 5);
  EXPECT_EQ(info.heads, 8);
  EXPECT_EQ(info.kv_heads, 4);
  EXPECT_TRUE(info.capabilities.generation);
  const std::vector<ModelListing> all = list_models();
  const auto it = std::find_if(all.begin(), all.end(),
                               [](const ModelListing& m) { return m.spec == "stories"; });
  ASSERT_NE(it, all.end());
  EXPECT_EQ(it->kind, "llama");
  EXPECT_EQ(it->where, "built-in");
  EXPECT_EQ(it->title, "a real Llama trained on TinyStories");
  EXPECT_NE(it->note.find("writes English"), std::string::npos) << it->note;
  // With the other built-ins, before the folders, so the GUI's picker shows them together.
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[2].spec, "stories");
}

TEST(StoriesModel, FilesAreTheProvenanceNotesOnesWithTheirLicence) {
  const fs::path folder = stories_model_folder();
  EXPECT_EQ(sha256_file_hex(folder / "config.json"),
            "5836e2c66d96a48c423250b4654d41e793e5fb752dfd8fbd417bd0e8b41871b3");
  EXPECT_EQ(sha256_file_hex(folder / "model.safetensors"),
            "c549afd8464a1250200b5338d39d23d0bf096c7f6578944268d40512c133daa6");
  EXPECT_EQ(sha256_file_hex(folder / "tokenizer.json"),
            "122d22ca558413499eac24a0a4373c6ac76528aa97bd1f1a6a889214df0b254b");
  EXPECT_TRUE(fs::is_regular_file(folder / "LICENSE"));  // MIT: it travels with the weights
  EXPECT_TRUE(fs::is_regular_file(folder / "PROVENANCE.md"));
}

TEST(StoriesModel, AFolderCalledStoriesIsStillReachable) {
  // `stories` is the built-in; ./stories is a folder of that name (here a copy of the tiny model,
  // 4 layers, to tell the two apart).
  const fs::path dir =
      fs::temp_directory_path() / ("attnscope_stories_" + std::to_string(getpid()));
  fs::create_directories(dir / "stories");
  for (const auto& entry :
       fs::directory_iterator(fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "tiny_model"))
    fs::copy_file(entry.path(), dir / "stories" / entry.path().filename());
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  int layers = -1;
  try {
    layers = open_model("./stories")->info().layers;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  fs::current_path(before);
  fs::remove_all(dir);
  EXPECT_EQ(layers, 4);
  EXPECT_EQ(open_model("stories")->info().layers, 5);
}

TEST(StoriesModel, TokenizerMatchesHuggingFace) {
  const fs::path folder = stories_model_folder();
  const auto tok = load_tokenizer(folder);
  std::vector<std::string> inputs = {
      "Once upon a time, there was a little girl named Lily.",
      "  two  spaces, tabs\tand\nnewlines\n\n",
      "\"Lily, let's go to the park.\" Tom's dog didn't bark!",
      "Numbers 12345 and 3.14159, (brackets) [and] {braces}!",
      "naïve café, Straße, 東京, emoji 😀",  // byte fallback
      "<s> written in the text is a special token, </s> too",
      "",
  };
  const std::vector<std::string> alphabet = {"a", "e", "t",  "h", " ", "  ",  "\n", ".", ",", "'s",
                                             "'", "1", "23", "é", "€", "<s>", "s>", "Q", "\t"};
  for (const std::string& t : testing::random_texts(alphabet, 200, 24, 4321)) inputs.push_back(t);
  const int mismatches =
      testing::hf_mismatches((folder / "tokenizer.json").string(), inputs,
                             [&](const std::string& t) { return tok->encode(t, false); },
                             [&](const std::string& t) { return tok->encode(t, true); }, 5);
  EXPECT_EQ(mismatches, 0);
}

// ---- against the float64 reference
// ---------------------------------------------------------------

DecoderNetwork stories_network() {
  const fs::path folder = stories_model_folder();
  return DecoderNetwork::load(folder,
                              llama_spec(read_model_config(folder), folder / "config.json"));
}

TEST(StoriesModel, ForwardMatchesFloat64Reference) {
  const nlohmann::json g = golden("stories-model");
  ASSERT_EQ(g["cases"].size(), 3u);
  const auto model = open_model("stories");
  const DecoderNetwork net = stories_network();
  const auto backend = make_cpu_backend();
  float worst_attention = 0, worst_trace_attention = 0, worst_logit = 0, worst_probability = 0;
  for (const auto& c : g["cases"]) {
    const std::string text = c["text"].get<std::string>();
    SCOPED_TRACE(text);
    const std::vector<int> ids = c["ids"].get<std::vector<int>>();
    const int n = static_cast<int>(ids.size());
    // The model's own tokenizer gives the reference's ids, "<s>" first.
    EXPECT_EQ(token_ids(model->tokenize(text)), ids);

    // The network, every layer and head.
    KvCache cache;
    DecoderRequest request;
    request.all_logits = true;
    const DecoderOutputs out = net.forward(ids, cache, *backend, request);
    ASSERT_EQ(out.attention.size(), 5u);
    for (int l = 0; l < 5; ++l) {
      ASSERT_EQ(out.attention[l].size(), 8u);
      for (int h = 0; h < 8; ++h)
        worst_attention = std::max(
            worst_attention, max_abs_diff(out.attention[l][h], to_matrix(c["attention"][l][h])));
    }
    const auto logit_ids = c["logit_ids"].get<std::vector<int>>();
    ASSERT_EQ(out.logits.rows(), n);
    for (int i = 0; i < n; ++i)
      for (std::size_t j = 0; j < logit_ids.size(); ++j)
        worst_logit = std::max(
            worst_logit, std::abs(out.logits(i, logit_ids[j]) - c["logits"][i][j].get<float>()));

    // The app's path (export, the GUI): the trace's attention and top-10 predictions.
    const AttentionTrace t = model->run(text, *backend);
    EXPECT_EQ(token_ids(t.tokens), ids);
    for (int l = 0; l < 5; ++l)
      for (int h = 0; h < 8; ++h)
        worst_trace_attention =
            std::max(worst_trace_attention,
                     max_abs_diff(t.attention[l][h], to_matrix(c["attention"][l][h])));
    ASSERT_EQ(t.predictions.size(), 10u);
    for (int i = 0; i < 10; ++i) {
      EXPECT_EQ(t.predictions[i].id, c["top_ids"][i].get<int>()) << "rank " << i;
      worst_probability =
          std::max(worst_probability,
                   std::abs(t.predictions[i].probability - c["top_probabilities"][i].get<float>()));
    }
  }
  EXPECT_LE(worst_attention, 1e-4f);
  EXPECT_LE(worst_trace_attention, 1e-4f);
  EXPECT_LE(worst_probability, 1e-4f);
  EXPECT_LE(worst_logit, 1e-3f);  // logits of order 10: 1e-4 relative
  std::cout << "stories: max |diff| vs float64 PyTorch over 3 sentences: attention "
            << worst_attention << " (trace " << worst_trace_attention << "), top-10 probabilities "
            << worst_probability << ", logits " << worst_logit << "\n";
}

// ---- greedy decoding
// -----------------------------------------------------------------------------

TEST(StoriesModel, GreedyDecodingWritesTheReferenceStory) {
  const nlohmann::json g = golden("stories-model");
  const auto model = open_model("stories");
  const auto backend = make_cpu_backend();
  GenerationOptions options;
  options.max_new_tokens = 60;
  options.temperature = 0.0f;  // greedy
  std::unique_ptr<Generator> generator = model->start_generation(kPrompt, *backend, options);
  while (!generator->done()) generator->step();
  const AttentionTrace& t = generator->trace();
  // Word for word as llama2.c's run.c wrote it, and token for token as the float64 reference.
  EXPECT_EQ(t.text.substr(0, std::string(kReferenceStory).size()), kReferenceStory) << t.text;
  EXPECT_EQ(token_ids(t.tokens), g["greedy"]["ids"].get<std::vector<int>>());
  EXPECT_EQ(t.text, g["greedy"]["text"].get<std::string>().substr(0, t.text.size()));
  std::cout << "stories, greedy from \"" << kPrompt << "\":\n" << t.text << "\n";
}

// ---- the command line
// ---------------------------------------------------------------------------- The app sits beside
// this test; the sanitizer tree builds no app, so these skip there.

fs::path attnscope_exe() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "attnscope";
}

struct CliRun {
  int exit_code;
  std::string out;  // stdout only (stderr goes to the test log)
};

CliRun run_app(const std::string& args) {
  std::string cmd = "'";
  cmd.append(attnscope_exe().string()).append("' ").append(args);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(StoriesCli, GenerateGreedyWritesTheReferenceStory) {
  if (!fs::exists(attnscope_exe())) GTEST_SKIP() << "the app was not built";
  const CliRun g =
      run_app("generate --model stories --text 'Once upon a time' -n 60 --backend cpu -o -");
  ASSERT_EQ(g.exit_code, 0) << g.out;
  const nlohmann::json t = nlohmann::json::parse(g.out);
  EXPECT_EQ(t["model"]["name"], "stories");
  const std::string text = t["text"].get<std::string>();
  EXPECT_EQ(text.substr(0, std::string(kReferenceStory).size()), kReferenceStory) << text;
  const std::vector<int> expected = golden("stories-model")["greedy"]["ids"];
  ASSERT_EQ(t["tokens"].size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(t["tokens"][i]["id"], expected[i]);
}

TEST(StoriesCli, EveryCommandTakingAModelOpensIt) {
  if (!fs::exists(attnscope_exe())) GTEST_SKIP() << "the app was not built";
  const CliRun models = run_app("models");
  ASSERT_EQ(models.exit_code, 0);
  EXPECT_NE(models.out.find("stories "), std::string::npos) << models.out;
  EXPECT_NE(models.out.find("a real Llama trained on TinyStories, writes English"),
            std::string::npos)
      << models.out;

  const std::string text = "--text 'Once upon a time, there was a little girl named Lily.'";
  const nlohmann::json g = golden("stories-model");
  const CliRun tok = run_app("tokenize --model stories " + text);
  ASSERT_EQ(tok.exit_code, 0) << tok.out;
  const nlohmann::json tokens = nlohmann::json::parse(tok.out)["tokens"];
  std::vector<int> ids = {1};  // tokenize leaves out "<s>" (no --special)
  for (const auto& t : tokens) ids.push_back(t["id"].get<int>());
  EXPECT_EQ(ids, g["cases"][0]["ids"].get<std::vector<int>>());

  const CliRun e = run_app("export --model stories --backend cpu " + text);
  ASSERT_EQ(e.exit_code, 0) << e.out;
  const nlohmann::json trace = nlohmann::json::parse(e.out);
  EXPECT_EQ(trace["model"]["kind"], "llama");
  EXPECT_EQ(trace["model"]["kv_heads"], 4);
  ASSERT_EQ(trace["predictions"].size(), 10u);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(trace["predictions"][i]["id"], g["cases"][0]["top_ids"][i]) << "rank " << i;

  const CliRun h = run_app("heads --model stories --backend cpu --json " + text);
  ASSERT_EQ(h.exit_code, 0) << h.out;
  EXPECT_EQ(nlohmann::json::parse(h.out)["model"]["layers"], 5);

  const fs::path svg =
      fs::temp_directory_path() / ("attnscope_stories_" + std::to_string(getpid()) + ".svg");
  const CliRun r = run_app("render --model stories --backend cpu --layer 1 --head 3 " + text +
                           " -o '" + svg.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_GT(fs::exists(svg) ? fs::file_size(svg) : 0u, 1000u);
  fs::remove(svg);
}

// ---- heads
// ---------------------------------------------------------------------------------------

// TinyStories-like sentences, the ones README.md's numbers are averaged over.
const std::vector<std::string>& head_sentences() {
  static const std::vector<std::string> s = {
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
      "park.",
      "Tom and his mom went to the store. They bought a big red ball and went home happy.",
      "One day, a cat saw a bird in the tree. The cat wanted to play with the bird, but the bird "
      "flew away.",
      "Ben had a toy car. He liked to push it on the floor. His sister Sue wanted to play too.",
  };
  return s;
}

// mean[layer][head] of the app's head summaries (`attnscope heads`) over head_sentences(), and
// the same summaries of uniform causal attention on the same sentences (what "no preference"
// reads).
struct MeanSummaries {
  std::vector<std::vector<HeadSummary>> heads;
  HeadSummary uniform;
};

MeanSummaries mean_summaries() {
  const auto model = open_model("stories");
  const auto backend = make_cpu_backend();
  MeanSummaries mean;
  mean.heads.assign(5, std::vector<HeadSummary>(8));
  const float k = 1.0f / float(head_sentences().size());
  auto add = [k](HeadSummary& to, const HeadSummary& s) {
    to.first_token_mass += k * s.first_token_mass;
    to.previous_token += k * s.previous_token;
    to.diagonal += k * s.diagonal;
    to.entropy += k * s.entropy;
  };
  for (const std::string& text : head_sentences()) {
    const AttentionTrace t = model->run(text, *backend);
    const auto s = summarize_trace(t);
    for (int l = 0; l < 5; ++l)
      for (int h = 0; h < 8; ++h) add(mean.heads[l][h], s[l][h]);
    const int n = static_cast<int>(t.tokens.size());
    Matrix uniform = Matrix::Zero(n, n);
    for (int i = 0; i < n; ++i) uniform.row(i).head(i + 1).setConstant(1.0f / float(i + 1));
    add(mean.uniform, summarize_head(uniform));
  }
  return mean;
}

TEST(StoriesModel, HeadRolesStatedInTheReadmeHold) {
  const MeanSummaries mean = mean_summaries();
  std::cout << "stories heads, mean over " << head_sentences().size()
            << " sentences (first-token mass / previous-token / diagonal / entropy):\n";
  for (int l = 0; l < 5; ++l)
    for (int h = 0; h < 8; ++h) {
      const HeadSummary& m = mean.heads[l][h];
      std::printf("  L%d.H%d  first %.3f  prev %.3f  diag %.3f  entropy %.2f\n", l, h,
                  m.first_token_mass, m.previous_token, m.diagonal, m.entropy);
    }
  std::printf("  uniform causal attention: first %.3f  prev %.3f\n", mean.uniform.first_token_mass,
              mean.uniform.previous_token);

  // README.md, "Models", `stories` (measured: L1.H3 0.61, L1.H6 0.56, L3.H6 0.54; uniform 0.09).
  // Previous-token heads: most of each row on the token just before, L1.H3 the strongest of all.
  const HeadSummary& l1h3 = mean.heads[1][3];
  EXPECT_GE(l1h3.previous_token, 0.55f);
  EXPECT_GE(mean.heads[1][6].previous_token, 0.48f);
  EXPECT_GE(mean.heads[3][6].previous_token, 0.48f);
  for (int l = 0; l < 5; ++l)
    for (int h = 0; h < 8; ++h)
      if (l != 1 || h != 3) {
        EXPECT_LT(mean.heads[l][h].previous_token, l1h3.previous_token) << "L" << l << ".H" << h;
      }
  EXPECT_LE(mean.uniform.previous_token, 0.12f);
  // No first-token (attention sink) head: the largest mean weight on "<s>" is L1.H1's 0.30, then
  // L4.H0's 0.27, where uniform attention gives 0.11 (query 0 sees only "<s>" and counts as 1).
  float most_first = 0;
  for (int l = 0; l < 5; ++l)
    for (int h = 0; h < 8; ++h)
      most_first = std::max(most_first, mean.heads[l][h].first_token_mass);
  EXPECT_EQ(most_first, mean.heads[1][1].first_token_mass);
  EXPECT_LE(most_first, 0.4f);
  EXPECT_GE(mean.heads[4][0].first_token_mass, 0.22f);
  EXPECT_LE(mean.uniform.first_token_mass, 0.14f);
}

}  // namespace
}  // namespace attnscope
