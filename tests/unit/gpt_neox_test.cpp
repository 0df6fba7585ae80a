// GPT-NeoX (Pythia) beyond the family table's golden, cache, CLI and OpenGL tests: the description
// real Pythia configs map to (partial rotary, parallel residual, LayerNorm), the sequential
// residual against its own float64 golden, GPTNeoXModel's names without the gpt_neox. prefix, the
// GPT-NeoX-style tokenizer.json against Hugging Face's tokenizers, and broken configs and
// checkpoints as one clear error each.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/text/tokenizer.h"
#include "core/util/error.h"
#include "tests/common/decoder_fixture.h"
#include "tests/common/golden.h"
#include "tests/common/safetensors_file.h"
#include "tests/tools/node_reference.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kPythia = fs::path(ATTNSCOPE_FIXTURES) / "pythia-tiny";

// EleutherAI/pythia-160m's config.json (transformers 4.24), as released.
json pythia_160m() {
  return json::parse(R"({
    "architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0,
    "hidden_act": "gelu", "hidden_size": 768, "initializer_range": 0.02,
    "intermediate_size": 3072, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
    "model_type": "gpt_neox", "num_attention_heads": 12, "num_hidden_layers": 12,
    "rotary_emb_base": 10000, "rotary_pct": 0.25, "tie_word_embeddings": false,
    "torch_dtype": "float16", "transformers_version": "4.24.0", "use_cache": true,
    "use_parallel_residual": true, "vocab_size": 50304})");
}

DecoderSpec spec_of(const json& config) {
  return decoder_spec_of(config, "pythia/config.json");
}

std::string spec_error(const json& config) {
  try {
    spec_of(config);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GptNeoxSpec, Pythia160mMapsToPartialRotaryParallelLayerNorm) {
  const DecoderSpec s = spec_of(pythia_160m());
  EXPECT_EQ(s.kind, "gpt_neox");
  EXPECT_EQ(s.layers, 12);
  EXPECT_EQ(s.heads, 12);
  EXPECT_EQ(s.kv_heads, 12);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_EQ(s.ff, 3072);
  EXPECT_EQ(s.vocab, 50304);
  EXPECT_EQ(s.max_positions, 2048);
  EXPECT_EQ(s.norm, NormKind::kLayer);
  EXPECT_FLOAT_EQ(s.norm_eps, 1e-5f);
  EXPECT_TRUE(s.parallel_residual);
  EXPECT_FALSE(s.gated_mlp);
  EXPECT_EQ(s.activation, MlpActivation::kGeluErf);
  EXPECT_TRUE(s.qkv_bias && s.o_bias && s.mlp_bias);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_EQ(s.fused_qkv_layout, FusedQkvLayout::kPerHead);
  EXPECT_EQ(s.tensor_names, TensorNames::kGptNeox);
  // int(64 · 0.25) = 16 rotated dimensions: 8 frequencies, 10000^(-2i/16).
  ASSERT_EQ(s.rope.rotary_dims(), 16);
  for (int i = 0; i < 8; ++i)
    EXPECT_FLOAT_EQ(s.rope.inv_freq[i], static_cast<float>(std::pow(10000.0, -2.0 * i / 16)));
  EXPECT_FLOAT_EQ(s.attention_scale, 0.125f);  // 1/√64 of the whole head, not of the rotated part
  EXPECT_EQ(s.bos_id, 0);
  EXPECT_EQ(s.eos_ids, std::vector<int>{0});
  EXPECT_EQ(position_scheme_of("gpt_neox"), PositionScheme::kRotary);
}

TEST(GptNeoxSpec, TransformersFiveRopeParametersAndDefaults) {
  json c = pythia_160m();
  c.erase("rotary_pct");
  c.erase("rotary_emb_base");
  c["rope_parameters"] = {
      {"rope_type", "default"}, {"rope_theta", 1000.0}, {"partial_rotary_factor", 0.5}};
  DecoderSpec s = spec_of(c);
  EXPECT_EQ(s.rope.rotary_dims(), 32);
  EXPECT_FLOAT_EQ(s.rope.inv_freq[1], static_cast<float>(std::pow(1000.0, -2.0 / 32)));
  // Without any of them: GPTNeoXConfig's defaults (rotary_pct 0.25, base 10000, parallel).
  c.erase("rope_parameters");
  c.erase("use_parallel_residual");
  c.erase("layer_norm_eps");
  s = spec_of(c);
  EXPECT_EQ(s.rope.rotary_dims(), 16);
  EXPECT_TRUE(s.parallel_residual);
  EXPECT_FLOAT_EQ(s.norm_eps, 1e-5f);
  // GPT-NeoX-20B and Pythia-style rounding: int(head_dim · pct) in double, 0.7 · 100 = 70.
  c["hidden_size"] = 1200;
  c["rotary_pct"] = 0.7;
  EXPECT_EQ(spec_of(c).rope.rotary_dims(), 70);  // head_dim 100 (a float 0.7 would give 69)
}

TEST(GptNeoxSpec, BrokenConfigsSayWhatIsWrong) {
  json c = pythia_160m();
  c["rotary_pct"] = 0;
  EXPECT_NE(spec_error(c).find("rotary_pct"), std::string::npos) << spec_error(c);
  c["rotary_pct"] = 1.5;
  EXPECT_NE(spec_error(c).find("rotary_pct"), std::string::npos) << spec_error(c);
  c["rotary_pct"] = "quarter";
  EXPECT_NE(spec_error(c).find("'rotary_pct' must be a number"), std::string::npos)
      << spec_error(c);
  c = pythia_160m();
  c["rotary_pct"] = 0.01;  // int(64 · 0.01) = 0 rotated dimensions
  EXPECT_NE(spec_error(c).find("rotary dimensions"), std::string::npos) << spec_error(c);
  c = pythia_160m();
  c["num_key_value_heads"] = 4;
  EXPECT_NE(spec_error(c).find("grouped-query"), std::string::npos) << spec_error(c);
  c = pythia_160m();
  c["hidden_act"] = "relu6";
  EXPECT_NE(spec_error(c).find("relu6"), std::string::npos) << spec_error(c);
}

// A copy of pythia-tiny whose config.json `edit` changes (the weights and tokenizer linked).
class PythiaCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPythia / "tokenizer.json")) GTEST_SKIP() << "no tokenizer files";
    dir_ = fs::temp_directory_path() / ("attnscope_neox_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
      fs::create_symlink(kPythia / f, dir_ / f);
  }
  void TearDown() override { fs::remove_all(dir_); }
  json config() const {
    std::ifstream in(kPythia / "config.json");
    return json::parse(in);
  }
  void write_config(const json& c) const { std::ofstream(dir_ / "config.json") << c.dump(); }
  void link_weights() const {
    fs::create_symlink(kPythia / "model.safetensors", dir_ / "model.safetensors");
  }
  // model.safetensors with every tensor name passed through `rename` (the data unchanged).
  template <class Rename>
  void write_renamed_weights(Rename rename) const {
    const test::SafetensorsFile file = test::read_safetensors_file(kPythia / "model.safetensors");
    json renamed = json::object();
    for (auto& [name, entry] : file.header.items()) {
      const std::string to = rename(name);
      if (!to.empty()) renamed[to] = entry;
    }
    test::write_safetensors_file(dir_ / "model.safetensors", renamed, file.data);
  }
  fs::path dir_;
};

// use_parallel_residual false (x + attn(ln1(x)), then + mlp(ln2(·))) against its own golden,
// written by the reference from this very config.
TEST_F(PythiaCopy, SequentialResidualMatchesItsFloat64Golden) {
  json c = config();
  c["use_parallel_residual"] = false;
  write_config(c);
  link_weights();
  const DecoderNetwork net = test::load_decoder_folder(dir_);
  ASSERT_FALSE(net.spec().parallel_residual);
  const json g = test::golden("pythia-tiny-sequential");
  const auto backend = make_cpu_backend();
  float worst_attention = 0, worst_logit = 0;
  for (const auto& cs : g["cases"]) {
    const std::vector<int> ids = cs["ids"].get<std::vector<int>>();
    KvCache cache;
    DecoderRequest request;
    request.all_logits = true;
    const DecoderOutputs out = net.forward(ids, cache, *backend, request);
    for (int l = 0; l < net.spec().layers; ++l)
      for (int h = 0; h < net.spec().heads; ++h)
        worst_attention = std::max(
            worst_attention,
            test::max_abs_diff(out.attention[l][h], test::to_matrix(cs["attention"][l][h])));
    const auto logit_ids = cs["logit_ids"].get<std::vector<int>>();
    for (std::size_t i = 0; i < ids.size(); ++i)
      for (std::size_t j = 0; j < logit_ids.size(); ++j)
        worst_logit = std::max(worst_logit, std::abs(out.logits(static_cast<int>(i), logit_ids[j]) -
                                                     cs["logits"][i][j].get<float>()));
    const auto top =
        DecoderNetwork::top_predictions(out.logits, static_cast<int>(ids.size()) - 1, 1);
    EXPECT_EQ(top[0].id, cs["top_ids"][0].get<int>());
  }
  EXPECT_LE(worst_attention, 1e-4f);
  EXPECT_LE(worst_logit, 1e-4f);
  std::cout << "pythia-tiny sequential: max |diff| vs float64: attention " << worst_attention
            << ", logits " << worst_logit << "\n";
  // And it is a different model from the parallel one: the same ids give other weights.
  const DecoderNetwork parallel = test::load_decoder_folder(kPythia);
  const json pg = test::golden("pythia-tiny");
  EXPECT_GT(test::max_abs_diff(test::to_matrix(pg["cases"][0]["attention"][1][0]),
                               test::to_matrix(g["cases"][0]["attention"][1][0])),
            1e-3f);
}

// GPTNeoXModel.save_pretrained writes the names without "gpt_neox." (embed_out kept here: without
// it there is no LM head, which the next test refuses by name).
TEST_F(PythiaCopy, NamesWithoutThePrefixOpenAsTheSameModel) {
  write_config(config());
  write_renamed_weights([](const std::string& name) {
    return name.rfind("gpt_neox.", 0) == 0 ? name.substr(9) : name;
  });
  const auto backend = make_cpu_backend();
  const std::vector<int> ids = {50256, 464, 3797, 3332, 319, 262, 2603, 13};
  KvCache a, b;
  const DecoderOutputs renamed = test::load_decoder_folder(dir_).forward(ids, a, *backend);
  const DecoderOutputs original = test::load_decoder_folder(kPythia).forward(ids, b, *backend);
  EXPECT_EQ(test::max_abs_diff(renamed.attention[2][3], original.attention[2][3]), 0.0f);
  EXPECT_EQ(test::max_abs_diff(renamed.logits, original.logits), 0.0f);
}

TEST_F(PythiaCopy, MissingOrMisshapenTensorsAreNamed) {
  write_config(config());
  write_renamed_weights([](const std::string& name) {
    return name == "gpt_neox.layers.1.attention.query_key_value.weight" ? std::string() : name;
  });
  try {
    test::load_decoder_folder(dir_);
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("gpt_neox.layers.1.attention.query_key_value.weight"),
              std::string::npos)
        << e.what();
  }
  fs::remove(dir_ / "model.safetensors");
  json c = config();
  c["hidden_size"] = 32;  // the tensors were written for 64
  write_config(c);
  link_weights();
  try {
    test::load_decoder_folder(dir_);
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("expected ["), std::string::npos) << e.what();
  }
}

// The fixture's GPT-NeoX-style tokenizer.json (NFC + byte-level BPE, no prefix space, no BOS)
// encodes as Hugging Face's tokenizers does, and the model adds no BOS either.
TEST(GptNeoxTokenizer, MatchesHuggingFace) {
  if (!fs::exists(kPythia / "tokenizer.json")) GTEST_SKIP() << "no tokenizer files";
  const auto tok = load_tokenizer(kPythia);
  std::vector<std::string> inputs = {
      "The cat sat on the mat.",
      " leading space and  double  spaces ",
      "decomposed cafe\u0301 and composed caf\u00e9 (NFC makes them one)",
      "<|endoftext|>two documents<|endoftext|>",
      "tabs\tand\nnewlines\n\n  indented",
      "emoji 😀👍🏽 and 東京",
      "",
  };
  const std::vector<std::string> alphabet = {
      "a", "e", " ", "  ", "\n", "'s", "1", "é", "e\u0301", "<|endoftext|>", "Q", "\t"};
  for (const std::string& t : testing::random_texts(alphabet, 150, 20, 4242)) inputs.push_back(t);
  EXPECT_EQ(testing::hf_mismatches((kPythia / "tokenizer.json").string(), inputs,
                                   [&](const std::string& t) { return tok->encode(t, false); },
                                   [&](const std::string& t) { return tok->encode(t, true); }, 5),
            0);
  const auto model = open_model(kPythia.string());
  const Tokens tokens = model->tokenize("The cat");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].id, 464);  // "The": no BOS in front, as Pythia's tokenizer adds none
  EXPECT_EQ(model->info().kind, "gpt_neox");
}

}  // namespace
}  // namespace attnscope
