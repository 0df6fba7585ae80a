// The built-in "tiny trained transformer" (spec `tiny`, assets/tiny_model, trained by
// tools/train_tiny_model.py): it opens without a download, its tokenizer is Hugging Face's, its
// forward pass matches the independent float64 reference (tests/data/golden/tiny-model.json from
// tools/reference/make_tiny_golden.py), and its heads show what trained transformers learn — a
// first-token sink, a previous-token head and an induction head (on a repeated random block, with
// the app's head summary agreeing) — far above the random-weight llama fixture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

#include "core/analysis/head_summary.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/model/tiny/tiny_model.h"
#include "core/text/tokenizer.h"
#include "tests/common/golden.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::golden;
using test::max_abs_diff;
using test::to_matrix;

DecoderNetwork llama_network(const fs::path& folder) {
  return DecoderNetwork::load(folder,
                              llama_spec(read_model_config(folder), folder / "config.json"));
}

TEST(TinyModel, OpensAsABuiltInModel) {
  const auto model = open_model("tiny");
  const ModelInfo info = model->info();
  EXPECT_EQ(info.name, "tiny");
  EXPECT_EQ(info.kind, "llama");
  EXPECT_EQ(info.layers, 4);
  EXPECT_EQ(info.heads, 4);
  EXPECT_TRUE(info.capabilities.generation);
  const std::vector<ModelListing> all = list_models();
  const auto tiny =
      std::find_if(all.begin(), all.end(), [](const ModelListing& m) { return m.spec == "tiny"; });
  ASSERT_NE(tiny, all.end());
  EXPECT_EQ(tiny->kind, "llama");
  EXPECT_EQ(tiny->where, "built-in");
  EXPECT_NE(tiny->note.find("tiny trained transformer"), std::string::npos) << tiny->note;
  // Right after the lesson model, so the GUI's picker shows the two built-ins together.
  ASSERT_GE(all.size(), 2u);
  EXPECT_EQ(all[0].spec, "lesson");
  EXPECT_EQ(all[1].spec, "tiny");
}

TEST(TinyModel, AssetFolderStaysSmall) {
  std::uintmax_t total = 0;
  for (const auto& entry : fs::directory_iterator(tiny_model_folder()))
    total += fs::file_size(entry.path());
  EXPECT_LE(total, 10u * 1000 * 1000);  // the limit: ≤ 10 MB in the repository
}

TEST(TinyModel, TokenizerMatchesHuggingFace) {
  const fs::path folder = tiny_model_folder();
  const auto tok = load_tokenizer(folder);
  std::vector<std::string> inputs = {
      "The cat sat on the mat.",
      "  two  spaces, tabs\tand\nnewlines\n\n",
      "don't won't it's we'll I'm they've you'd",
      "Numbers 12345 and 3.14159, (brackets) [and] {braces}!",
      "naïve café, Straße, 東京, emoji 😀",
      "<s> written in the text is a special token, </s> too",
      "",
      "TELEPHONE, n. An invention of the devil which abrogates some of the advantages of making "
      "a disagreeable person keep his distance.",
  };
  const std::vector<std::string> alphabet = {"a", "e", "t",  "h", " ", "  ",  "\n", ".", ",", "'s",
                                             "'", "1", "23", "é", "€", "<s>", "s>", "Q", "\t"};
  for (const std::string& t : testing::random_texts(alphabet, 200, 24, 1234)) inputs.push_back(t);
  const int mismatches =
      testing::hf_mismatches((folder / "tokenizer.json").string(), inputs,
                             [&](const std::string& t) { return tok->encode(t, false); },
                             [&](const std::string& t) { return tok->encode(t, true); }, 5);
  EXPECT_EQ(mismatches, 0);
  // The ids round-trip to the text (byte-level: nothing is lost).
  std::string back;
  for (const Token& t : tok->encode(inputs[4], false)) back += tok->decode(t.id);
  EXPECT_EQ(back, inputs[4]);
}

TEST(TinyModel, ForwardMatchesFloat64Reference) {
  const nlohmann::json g = golden("tiny-model");
  const auto& c = g["cases"][0];
  const std::vector<int> ids = c["ids"].get<std::vector<int>>();
  const int n = static_cast<int>(ids.size());
  // The built-in model's own tokenizer gives the reference's ids, "<s>" first.
  const auto model = open_model("tiny");
  EXPECT_EQ(token_ids(model->tokenize(g["text"].get<std::string>())), ids);

  const DecoderNetwork net = llama_network(tiny_model_folder());
  const auto backend = make_cpu_backend();
  KvCache cache;
  DecoderRequest request;
  request.all_logits = true;
  const DecoderOutputs out = net.forward(ids, cache, *backend, request);
  float worst_attention = 0, worst_logit = 0;
  for (int l = 0; l < 4; ++l)
    for (int h = 0; h < 4; ++h)
      worst_attention = std::max(
          worst_attention, max_abs_diff(out.attention[l][h], to_matrix(c["attention"][l][h])));
  const auto logit_ids = c["logit_ids"].get<std::vector<int>>();
  ASSERT_EQ(out.logits.rows(), n);
  for (int i = 0; i < n; ++i)
    for (std::size_t j = 0; j < logit_ids.size(); ++j)
      worst_logit = std::max(
          worst_logit, std::abs(out.logits(i, logit_ids[j]) - c["logits"][i][j].get<float>()));
  const std::vector<Prediction> top = DecoderNetwork::top_predictions(out.logits, n - 1, 10);
  EXPECT_EQ(top[0].id, c["top_ids"][0].get<int>());
  for (int i = 0; i < 10; ++i)
    EXPECT_NEAR(top[i].probability, c["top_probabilities"][i].get<float>(), 1e-4f);
  // Trained weights give logits of order 10, not the fixtures' 0.1: 1e-4 relative to that.
  EXPECT_LE(worst_attention, 1e-4f);
  EXPECT_LE(worst_logit, 1e-3f);
  std::cout << "tiny model: max |diff| vs float64 PyTorch: attention " << worst_attention
            << ", logits " << worst_logit << "\n";
}

// ---- head scores, computed here with their own loops -------------------------------------------

struct HeadScore {
  int layer = -1, head = -1;
  double value = 0;
};

// Per head, f(attention matrix); the best head.
template <class F>
HeadScore best_head(const DecoderOutputs& out, F score) {
  HeadScore best;
  for (std::size_t l = 0; l < out.attention.size(); ++l)
    for (std::size_t h = 0; h < out.attention[l].size(); ++h) {
      const double v = score(out.attention[l][h]);
      if (best.layer < 0 || v > best.value) best = {int(l), int(h), v};
    }
  return best;
}

// Mean weight on token 0 over queries 1..n-1 (query 0 can only see itself).
double first_token_mass(const Matrix& a) {
  double s = 0;
  for (int i = 1; i < a.rows(); ++i) s += a(i, 0);
  return s / double(a.rows() - 1);
}

// Mean weight on the previous token over queries 2..n-1 (query 1's previous token is token 0,
// which a sink head would also score on).
double previous_token_score(const Matrix& a) {
  double s = 0;
  for (int i = 2; i < a.rows(); ++i) s += a(i, i - 1);
  return s / double(a.rows() - 2);
}

// "<s>" R R with R a random block of L tokens: mean weight from each query in the second copy to
// the token after that token's earlier occurrence (key i - L + 1).
double induction_score(const Matrix& a, int block) {
  double s = 0;
  for (int i = 1 + block; i <= 2 * block; ++i) s += a(i, i - block + 1);
  return s / double(block);
}

struct ModelScores {
  HeadScore sink, previous, induction;
  HeadScore induction_short;     // the same on a block of kShortBlock tokens
  double induction_summary = 0;  // the app's head summary ("induction" key) of the same head
};

// "<s>" then a block of kBlock distinct random ordinary token ids (above the tiny model's two
// specials, within every vocabulary here), twice.
constexpr int kBlock = 40, kShortBlock = 12;
std::vector<int> repeated_random_block(int vocab, int bos, int length = kBlock) {
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> pick(2, std::min(vocab, 2048) - 1);
  std::vector<int> block;
  while (static_cast<int>(block.size()) < length) {
    const int id = pick(rng);
    if (id != bos && std::find(block.begin(), block.end(), id) == block.end()) block.push_back(id);
  }
  std::vector<int> ids = {bos};
  for (int copy = 0; copy < 2; ++copy) ids.insert(ids.end(), block.begin(), block.end());
  return ids;
}

ModelScores measure(const DecoderNetwork& net, const std::vector<int>& sentence, int bos) {
  const auto backend = make_cpu_backend();
  ModelScores r;
  {
    KvCache cache;
    const DecoderOutputs out = net.forward(sentence, cache, *backend);
    r.sink = best_head(out, first_token_mass);
    r.previous = best_head(out, previous_token_score);
  }
  const std::vector<int> ids = repeated_random_block(net.spec().vocab, bos);
  KvCache cache;
  const DecoderOutputs out = net.forward(ids, cache, *backend);
  r.induction = best_head(out, [&](const Matrix& a) { return induction_score(a, kBlock); });
  // The block's tokens are distinct, so the summary's rows are exactly the second copy's and its
  // targets exactly keys i - L + 1: it must give the loop's number.
  r.induction_summary =
      summarize_head(out.attention[r.induction.layer][r.induction.head], -1, ids).induction;
  // A head at a fixed offset of L - 1 would score on one block length only.
  const std::vector<int> short_ids = repeated_random_block(net.spec().vocab, bos, kShortBlock);
  KvCache short_cache;
  const DecoderOutputs short_out = net.forward(short_ids, short_cache, *backend);
  r.induction_short =
      best_head(short_out, [&](const Matrix& a) { return induction_score(a, kShortBlock); });
  return r;
}

void print(const char* name, const ModelScores& s) {
  auto one = [](const char* what, const HeadScore& h) {
    std::cout << "  " << what << ": layer " << h.layer << " head " << h.head << " = " << h.value
              << "\n";
  };
  std::cout << name << ":\n";
  one("first-token mass", s.sink);
  one("previous-token  ", s.previous);
  one("induction       ", s.induction);
  one("induction (L 12)", s.induction_short);
  std::cout << "  (that head's induction head summary: " << s.induction_summary << ")\n";
}

TEST(TinyModel, HeadsShowSinkPreviousTokenAndInduction) {
  const nlohmann::json g = golden("tiny-model");
  const std::vector<int> sentence = g["cases"][0]["ids"].get<std::vector<int>>();
  const ModelScores tiny = measure(llama_network(tiny_model_folder()), sentence, 0);
  print("tiny trained transformer", tiny);

  // The same measurements on the llama fixture's random weights: what no training looks like.
  const fs::path fixture = fs::path(ATTNSCOPE_FIXTURES) / "llama-tiny";
  const DecoderNetwork random_net = llama_network(fixture);
  const int bos = random_net.spec().bos_id >= 0 ? random_net.spec().bos_id : 1;
  std::vector<int> random_sentence = {bos};
  for (std::size_t i = 1; i < sentence.size(); ++i)
    random_sentence.push_back(sentence[i] % random_net.spec().vocab);
  const ModelScores untrained = measure(random_net, random_sentence, bos);
  print("random llama fixture", untrained);

  // Thresholds (measured values in assets/tiny_model.md: sink 0.77, previous token 0.75 on this
  // sentence; the random fixture 0.34 and 0.19): a sink head puts more than half of every row on
  // "<s>", a previous-token head over 0.35 on the token before — each well above random weights.
  EXPECT_GE(tiny.sink.value, 0.5);
  EXPECT_GE(tiny.previous.value, 0.35);
  EXPECT_GE(tiny.sink.value, untrained.sink.value + 0.15);
  EXPECT_GE(tiny.previous.value, untrained.previous.value + 0.15);
  // The app's head summary (the model view's caption, `attnscope heads`) reads the induction score
  // the loop above computes, for both models.
  EXPECT_NEAR(tiny.induction_summary, tiny.induction.value, 1e-4);
  EXPECT_NEAR(untrained.induction_summary, untrained.induction.value, 1e-4);
  // An induction head: from each token of the second copy, most of the weight on the token that
  // followed its first occurrence, for a 40- and a 12-token block alike (measured: 0.82 and more;
  // weight spread evenly over the row would give ~0.02 and ~0.05; the random fixture 0.06).
  EXPECT_GE(tiny.induction.value, 0.5);
  EXPECT_GE(tiny.induction_short.value, 0.5);
  EXPECT_GE(tiny.induction.value, untrained.induction.value + 0.3);
}

}  // namespace
}  // namespace attnscope
