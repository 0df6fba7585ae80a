// The encoder families after BERT (RoBERTa, XLM-RoBERTa, DistilBERT; issue 24) on their tiny
// fixtures (tools/make_fixture_models/encoder_fixtures.cpp): the forward pass against the
// independent float64 reference (tools/reference/hf_reference.py, after modeling_roberta.py and
// modeling_distilbert.py), the text -> trace path with the family's <s>/</s> or [CLS]/[SEP], the
// tokenizers against Hugging Face's own library, and config.json errors that name the key.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/bert/bert_model.h"
#include "core/model/bert/bert_network.h"
#include "core/model/hf/hf_families.h"
#include "core/text/tokenizer.h"
#include "core/util/error.h"
#include "tests/common/golden.h"
#include "tests/common/shell.h"
#include "tests/tools/tokenizer_check.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
constexpr float kTolerance = 1e-4f;

using test::golden;
using test::max_abs_diff;
using test::to_matrix;

struct EncoderFixture {
  std::string name;  // folder under build/fixtures, golden under tests/data/golden
  std::string kind;  // config.json's model_type
  std::string cls, sep;
  std::string tokenizer_file;  // what Hugging Face's library loads ("bert": BERT's vocab.txt)
};

const std::vector<EncoderFixture>& fixtures() {
  static const std::vector<EncoderFixture> f = {
      {"roberta-tiny", "roberta", "<s>", "</s>", "tokenizer.json"},
      {"xlm-roberta-tiny", "xlm-roberta", "<s>", "</s>", "tokenizer.json"},
      {"distilbert-tiny", "distilbert", "[CLS]", "[SEP]", "bert"},
  };
  return f;
}

fs::path fixture_folder(const std::string& name) {
  return fs::path(ATTNSCOPE_FIXTURES) / name;
}

bool has_tokenizer(const fs::path& folder) {
  return fs::exists(folder / "tokenizer.json") || fs::exists(folder / "vocab.txt");
}
#define REQUIRE_TOKENIZER(folder)                                                          \
  if (!has_tokenizer(folder))                                                              \
  GTEST_SKIP() << "tokenizer files missing: run scripts/fetch_test_data.sh, then rebuild " \
                  "fixture_models"

void PrintTo(const EncoderFixture& f, std::ostream* os) {
  *os << f.name;
}

class EncoderFamily : public ::testing::TestWithParam<EncoderFixture> {};

std::string param_name(const ::testing::TestParamInfo<EncoderFixture>& info) {
  std::string s = info.param.name;
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

TEST_P(EncoderFamily, MatchesFloat64Reference) {
  const EncoderFixture& f = GetParam();
  const BertNetwork net = BertNetwork::load(fixture_folder(f.name));  // family by model_type
  EXPECT_EQ(net.config().kind, f.kind);
  const auto backend = make_cpu_backend();
  const nlohmann::json g = golden(f.name);
  ASSERT_EQ(g["kind"], f.kind);
  ASSERT_GE(g["cases"].size(), 4u);
  float worst_attention = 0, worst_hidden = 0;
  for (const auto& c : g["cases"]) {
    const std::vector<int> ids = c["ids"].get<std::vector<int>>();
    BertOutputs out;
    const AttentionTrace t = net.forward_ids(ids, *backend, &out);
    EXPECT_EQ(t.model.kind, f.kind);
    ASSERT_EQ(t.layers(), 2);
    ASSERT_EQ(t.heads(), 4);
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 4; ++h)
        worst_attention = std::max(
            worst_attention, max_abs_diff(t.attention[l][h], to_matrix(c["attention"][l][h])));
    worst_hidden =
        std::max(worst_hidden, max_abs_diff(out.last_hidden, to_matrix(c["last_hidden"])));
  }
  EXPECT_LE(worst_attention, kTolerance);
  EXPECT_LE(worst_hidden, kTolerance);
  std::cout << f.name << ": max |diff| vs float64 reference over " << g["cases"].size()
            << " cases: attention " << worst_attention << ", last hidden state " << worst_hidden
            << "\n";
}

// The base model classes (RobertaModel, XLMRobertaModel, DistilBertModel) save the same tensors
// without the masked-LM class's prefix: a copy of each fixture with the prefix taken off every name
// (the header rewritten, the data as it was) gives the same trace.
TEST(EncoderLayouts, BaseModelNamesWithoutPrefixGiveTheSameTrace) {
  const auto backend = make_cpu_backend();
  for (const auto& [name, prefix] : std::vector<std::pair<std::string, std::string>>{
           {"roberta-tiny", "roberta."}, {"distilbert-tiny", "distilbert."}}) {
    const fs::path from = fixture_folder(name);
    const fs::path to =
        fs::temp_directory_path() / ("attnscope_base_" + name + "_" + std::to_string(getpid()));
    fs::create_directories(to);
    fs::copy_file(from / "config.json", to / "config.json", fs::copy_options::overwrite_existing);
    std::ifstream in(from / "model.safetensors", std::ios::binary);
    const std::string blob((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::uint64_t header_size = 0;
    for (int b = 7; b >= 0; --b)
      header_size = (header_size << 8) | static_cast<unsigned char>(blob[static_cast<size_t>(b)]);
    const nlohmann::json header = nlohmann::json::parse(blob.substr(8, header_size));
    nlohmann::json renamed = nlohmann::json::object();
    int stripped = 0;
    for (const auto& [key, value] : header.items()) {
      const bool prefixed = key.rfind(prefix, 0) == 0;
      stripped += prefixed;
      renamed[prefixed ? key.substr(prefix.size()) : key] = value;
    }
    ASSERT_GT(stripped, 10) << name;
    std::string text = renamed.dump();
    while (text.size() % 8 != 0) text.push_back(' ');
    std::ofstream out(to / "model.safetensors", std::ios::binary);
    for (int b = 0; b < 8; ++b) out.put(static_cast<char>((text.size() >> (8 * b)) & 0xffu));
    out << text << blob.substr(8 + header_size);
    out.close();
    const std::vector<int> ids =
        golden(name)["cases"][0]["ids"].get<std::vector<int>>();  // the sentence
    const AttentionTrace a = BertNetwork::load(from).forward_ids(ids, *backend);
    const AttentionTrace b = BertNetwork::load(to).forward_ids(ids, *backend);
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 4; ++h)
        EXPECT_EQ(max_abs_diff(a.attention[l][h], b.attention[l][h]), 0.0f);
    fs::remove_all(to);
  }
}

// RoBERTa's positions start after padding_idx (1): 66 rows hold 64 tokens, and a wrong offset
// would read other rows than the reference's (the golden above would differ).
TEST(RobertaPositions, PaddingIdxLeavesRowsForMaxTokens) {
  for (const char* name : {"roberta-tiny", "xlm-roberta-tiny"}) {
    const BertNetwork net = BertNetwork::load(fixture_folder(name));
    EXPECT_EQ(net.config().positions, 66);
    EXPECT_EQ(net.config().position_padding_idx, 1);
    EXPECT_EQ(net.config().max_tokens(), 64);
    EXPECT_EQ(net.config().type_vocab, 1);
    const auto backend = make_cpu_backend();
    EXPECT_NO_THROW(net.forward_ids(std::vector<int>(64, 5), *backend));
    try {
      net.forward_ids(std::vector<int>(65, 5), *backend);
      ADD_FAILURE() << name << ": 65 tokens ran";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(net.config().kind + " takes at most 64", 0), 0u)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("64"), std::string::npos) << e.what();
    }
    const std::vector<int> ids = {0, 5, 2}, second_type = {0, 1, 0};
    EXPECT_THROW(net.forward_ids(ids, *backend, nullptr, &second_type), UsageError);
  }
  const BertNetwork distil = BertNetwork::load(fixture_folder("distilbert-tiny"));
  EXPECT_EQ(distil.config().type_vocab, 0);
  EXPECT_EQ(distil.config().max_tokens(), 64);
  EXPECT_EQ(distil.config().position_padding_idx, -1);
}

// Text -> trace: the ids the golden's first case (the sentence) and third (the pair) were made of,
// with the family's specials, and the reference's attention.
TEST_P(EncoderFamily, TextToTraceAddsTheFamilysSpecials) {
  const EncoderFixture& f = GetParam();
  const fs::path folder = fixture_folder(f.name);
  REQUIRE_TOKENIZER(folder);
  const auto model = load_bert_model(folder, {});
  EXPECT_EQ(model->info().kind, f.kind);
  const auto backend = make_cpu_backend();
  const nlohmann::json g = golden(f.name);
  const std::string pair =
      f.kind == "distilbert" ? "The cat sat [SEP] it was tired." : "The cat sat</s>it was tired.";
  const std::vector<std::pair<std::string, int>> texts = {
      {"The cat sat on the MAT.", 0}, {"", 1}, {pair, 2}};
  for (const auto& [text, index] : texts) {
    const nlohmann::json& c = g["cases"][index];
    const AttentionTrace t = model->run(text, *backend);
    ASSERT_EQ(token_ids(t.tokens), c["ids"].get<std::vector<int>>()) << text;
    EXPECT_EQ(t.tokens.front().text, f.cls);
    EXPECT_TRUE(t.tokens.front().special);
    EXPECT_EQ(t.tokens.front().start, -1);
    EXPECT_EQ(t.tokens.back().text, f.sep);
    EXPECT_TRUE(t.tokens.back().special);
    float worst = 0;
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 4; ++h)
        worst = std::max(worst, max_abs_diff(t.attention[l][h], to_matrix(c["attention"][l][h])));
    EXPECT_LE(worst, kTolerance) << text;
    EXPECT_EQ(token_ids(model->tokenize(text)), token_ids(t.tokens)) << text;
  }
  // RoBERTa's pair is <s> a </s></s> b </s>: the typed </s> keeps its offsets, the one added
  // after it has none.
  if (f.kind != "distilbert") {
    const Tokens tokens = model->tokenize(pair);
    std::size_t typed = 1;
    while (typed + 1 < tokens.size() && tokens[typed].text != "</s>") ++typed;
    ASSERT_LT(typed + 2, tokens.size());
    EXPECT_EQ(tokens[typed].start, 11);
    EXPECT_FALSE(tokens[typed].special);
    EXPECT_EQ(tokens[typed + 1].text, "</s>");
    EXPECT_EQ(tokens[typed + 1].start, -1);
    EXPECT_TRUE(tokens[typed + 1].special);
  }
}

TEST_P(EncoderFamily, LongTextIsTruncatedToItsPositions) {
  const EncoderFixture& f = GetParam();
  const fs::path folder = fixture_folder(f.name);
  REQUIRE_TOKENIZER(folder);
  const auto model = load_bert_model(folder, {});
  const auto backend = make_cpu_backend();
  std::string text;
  for (int i = 0; i < 100; ++i) text += "a ";
  const AttentionTrace t = model->run(text, *backend);
  ASSERT_EQ(t.tokens.size(), 64u);  // every position the fixture has
  EXPECT_EQ(t.tokens.back().text, f.sep);
  EXPECT_GT(t.truncated_at_byte, 0);
  // Typed pairs' extra </s> counts against the positions too.
  std::string pairs;
  for (int i = 0; i < 40; ++i) pairs += f.kind == "distilbert" ? "a [SEP] " : "a</s>";
  EXPECT_NO_THROW(model->run(pairs, *backend));
  EXPECT_LE(model->run(pairs, *backend).tokens.size(), 64u);
}

// The fixtures' tokenizers and Hugging Face's tokenizers library (npm binding) on the same files:
// ids, pieces and byte offsets without specials (the tokenizer) and with them (the model's
// tokenize: <s> … </s> / [CLS] … [SEP], as tokenizer(text) adds them).
TEST_P(EncoderFamily, TokenizesAsHuggingFace) {
  const EncoderFixture& f = GetParam();
  const fs::path folder = fixture_folder(f.name);
  REQUIRE_TOKENIZER(folder);
  const auto model = load_bert_model(folder, {});
  const std::shared_ptr<const Tokenizer> tokenizer = load_tokenizer(folder);
  std::vector<std::string> inputs = {
      "The cat sat on the MAT.",
      "",
      " leading and  double  spaces ",
      "Hello <mask> world",
      "I'm sure you'll see they've done it. ISN'T IT?",
      "Un chat s'est assis sur le tapis. Die Katze saß auf der Matte.",
      "accents: café naïve Ångström, CJK 中文字符 日本語, emoji 🤗 👍🏽",
      "numbers 1234567890 3.14159 and code: def f(x): return x**2",
      "line one\nline two\r\n\tthree",
      "full-width ＨＥＬＬＯ ﬁne",
  };
  // Random texts; a typed separator stays out (the model turns it into a pair, see above).
  std::vector<std::string> alphabet = testing::alphabet_with({"<mask>", "<unk>", "<pad>"});
  for (const std::string& s : testing::random_texts(alphabet, 150, 20, 2412u)) inputs.push_back(s);
  const std::string reference =
      f.tokenizer_file == "bert" ? "bert" : (folder / f.tokenizer_file).string();
  const int mismatches = testing::hf_mismatches(
      reference, inputs, [&](const std::string& s) { return tokenizer->encode(s, false); },
      [&](const std::string& s) { return model->tokenize(s); }, 6);
  EXPECT_EQ(mismatches, 0) << "of " << inputs.size() << " strings";
  std::cout << f.name << ": " << inputs.size() - mismatches << " of " << inputs.size()
            << " strings tokenized as Hugging Face's tokenizers does (with and without specials)\n";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EncoderFamily, ::testing::ValuesIn(fixtures()), param_name);

TEST(EncoderRegistry, FamiliesAreRegisteredAsEncoders) {
  for (const char* kind : {"bert", "roberta", "xlm-roberta", "distilbert"}) {
    const HfFamily* f = find_hf_family({{"model_type", kind}});
    ASSERT_NE(f, nullptr) << kind;
    EXPECT_NE(f->encoder_spec, nullptr) << kind;
    EXPECT_EQ(f->decoder_spec, nullptr) << kind;
    EXPECT_EQ(position_scheme_of(kind), PositionScheme::kLearned);
  }
  // Old configs with only the architecture.
  EXPECT_EQ(find_hf_family({{"architectures", {"XLMRobertaForMaskedLM"}}})->model_type,
            "xlm-roberta");
  EXPECT_EQ(find_hf_family({{"architectures", {"RobertaModel"}}})->model_type, "roberta");
  EXPECT_EQ(find_hf_family({{"architectures", {"DistilBertForMaskedLM"}}})->model_type,
            "distilbert");
  const std::string names = hf_family_names();
  for (const char* kind : {"roberta", "xlm-roberta", "distilbert"})
    EXPECT_NE(names.find(kind), std::string::npos) << names;
  EXPECT_THROW(encoder_spec_of({{"model_type", "llama"}}, "config.json"), ModelError);
}

// The released checkpoints' config.json as published (roberta-base, xlm-roberta-base,
// distilbert-base-uncased): the numbers the families read from them.
TEST(EncoderSpecs, ReleasedConfigs) {
  const nlohmann::json roberta_base = nlohmann::json::parse(R"({
    "architectures": ["RobertaForMaskedLM"], "attention_probs_dropout_prob": 0.1,
    "bos_token_id": 0, "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "layer_norm_eps": 1e-05, "max_position_embeddings": 514, "model_type": "roberta",
    "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 1, "type_vocab_size": 1,
    "vocab_size": 50265})");
  const EncoderSpec r = roberta_encoder_spec(roberta_base, "config.json");
  EXPECT_EQ(r.config.kind, "roberta");
  EXPECT_EQ(r.config.max_tokens(), 512);
  EXPECT_EQ(r.config.position_padding_idx, 1);
  EXPECT_EQ(r.config.type_vocab, 1);
  EXPECT_EQ(r.config.vocab, 50265);
  EXPECT_FLOAT_EQ(r.config.ln_eps, 1e-5f);
  EXPECT_EQ(r.config.gelu, Gelu::kErf);
  EXPECT_EQ(r.cls, "<s>");
  EXPECT_EQ(r.sep, "</s>");
  EXPECT_EQ(r.pair_separators, 2);
  nlohmann::json xlmr_base = roberta_base;
  xlmr_base["architectures"] = {"XLMRobertaForMaskedLM"};
  xlmr_base["model_type"] = "xlm-roberta";
  xlmr_base["output_past"] = true;
  xlmr_base["vocab_size"] = 250002;
  const HfFamily* xf = find_hf_family(xlmr_base);
  ASSERT_NE(xf, nullptr);
  const EncoderSpec x = xf->encoder_spec(xlmr_base, "config.json");
  EXPECT_EQ(x.config.kind, "xlm-roberta");
  EXPECT_EQ(x.config.vocab, 250002);
  EXPECT_EQ(x.config.max_tokens(), 512);
  EXPECT_EQ(x.names.prefixes, std::vector<std::string>{"roberta."});
  const nlohmann::json distil_base = nlohmann::json::parse(R"({
    "activation": "gelu", "architectures": ["DistilBertForMaskedLM"], "attention_dropout": 0.1,
    "dim": 768, "dropout": 0.1, "hidden_dim": 3072, "initializer_range": 0.02,
    "max_position_embeddings": 512, "model_type": "distilbert", "n_heads": 12, "n_layers": 6,
    "pad_token_id": 0, "qa_dropout": 0.1, "seq_classif_dropout": 0.2,
    "sinusoidal_pos_embds": false, "tie_weights_": true, "vocab_size": 30522})");
  const EncoderSpec d = encoder_spec_of(distil_base, "config.json");
  EXPECT_EQ(d.config.kind, "distilbert");
  EXPECT_EQ(d.config.layers, 6);
  EXPECT_EQ(d.config.heads, 12);
  EXPECT_EQ(d.config.d_model, 768);
  EXPECT_EQ(d.config.d_ff, 3072);
  EXPECT_EQ(d.config.max_tokens(), 512);
  EXPECT_EQ(d.config.type_vocab, 0);
  EXPECT_FLOAT_EQ(d.config.ln_eps, 1e-12f);
  EXPECT_EQ(d.cls, "[CLS]");
  EXPECT_EQ(d.pair_separators, 1);
  EXPECT_EQ(d.names.query, "attention.q_lin");
}

// ---- hostile configs: a clear ModelError naming config.json and the key ----

class RobertaBrokenFolderTest : public test::BrokenFolderTest<BertNetwork> {
 protected:
  RobertaBrokenFolderTest() : BrokenFolderTest("roberta-tiny", "roberta") {}
  nlohmann::json config() const {
    return {{"model_type", "roberta"}, {"num_hidden_layers", 2},  {"num_attention_heads", 4},
            {"hidden_size", 32},       {"intermediate_size", 64}, {"max_position_embeddings", 66},
            {"type_vocab_size", 1},    {"vocab_size", 50265},     {"pad_token_id", 1},
            {"layer_norm_eps", 1e-5}};
  }
};

TEST_F(RobertaBrokenFolderTest, GoodConfigLoads) {
  EXPECT_EQ(load_error(config()), "(no error)");
}

TEST_F(RobertaBrokenFolderTest, OddKeysAreNamed) {
  auto expect = [&](nlohmann::json c, const std::string& part) {
    const std::string e = load_error(c);
    EXPECT_NE(e.find("config.json"), std::string::npos) << e;
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  nlohmann::json c = config();
  c.erase("hidden_size");
  expect(c, "required key 'hidden_size' is missing");
  c = config();
  c["pad_token_id"] = "one";
  expect(c, "'pad_token_id'");
  c["pad_token_id"] = 65;  // no row left after it
  expect(c, "'pad_token_id'");
  c["pad_token_id"] = -1;
  expect(c, "'pad_token_id'");
  c = config();
  c["max_position_embeddings"] = 64;  // the stored table has 66 rows
  expect(c, "has shape [66 x 32], expected [64 x 32]");
  c = config();
  c["type_vocab_size"] = 2;
  expect(c, "token_type_embeddings.weight' has shape [1 x 32]");
  c = config();
  c["hidden_act"] = "relu";
  expect(c, "hidden_act 'relu'");
  c = config();
  c["model_type"] = "xlm-roberta";  // the same network: opens
  EXPECT_EQ(load_error(c), "(no error)");
  c["num_hidden_layers"] = 3;
  EXPECT_NE(load_error(c).find("'encoder.layer.2.attention.self.query.weight' is missing"),
            std::string::npos)
      << load_error(c);
}

class DistilBertBrokenFolderTest : public test::BrokenFolderTest<BertNetwork> {
 protected:
  DistilBertBrokenFolderTest() : BrokenFolderTest("distilbert-tiny", "distilbert") {}
  nlohmann::json config() const {
    return {{"model_type", "distilbert"},
            {"max_position_embeddings", 64},
            {"n_layers", 2},
            {"n_heads", 4},
            {"dim", 32},
            {"hidden_dim", 64},
            {"vocab_size", 30522},
            {"activation", "gelu"},
            {"sinusoidal_pos_embds", false}};
  }
};

TEST_F(DistilBertBrokenFolderTest, GoodConfigLoads) {
  EXPECT_EQ(load_error(config()), "(no error)");
}

TEST_F(DistilBertBrokenFolderTest, OddKeysAreNamed) {
  auto expect = [&](nlohmann::json c, const std::string& part) {
    const std::string e = load_error(c);
    EXPECT_NE(e.find("config.json"), std::string::npos) << e;
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  for (const char* key : {"n_layers", "n_heads", "dim"}) {
    nlohmann::json c = config();
    c.erase(key);
    expect(c, std::string("required key '") + key + "' is missing");
  }
  nlohmann::json c = config();
  c["activation"] = "relu";
  expect(c, "activation 'relu' is not supported");
  c = config();
  c["activation"] = 3;
  expect(c, "'activation'");
  c = config();
  c["dim"] = 30;  // not a multiple of n_heads... 30 % 4
  expect(c, "dim (30) is not a multiple of n_heads (4)");
  c = config();
  c["sinusoidal_pos_embds"] = "yes";
  expect(c, "'sinusoidal_pos_embds'");
  c = config();
  c["hidden_dim"] = 128;
  expect(c,
         "'distilbert.transformer.layer.0.ffn.lin1.weight' has shape [64 x 32], expected "
         "[128 x 32]");
  c = config();
  c["n_layers"] = 3;
  EXPECT_NE(load_error(c).find("'transformer.layer.2.attention.q_lin.weight' is missing"),
            std::string::npos)
      << load_error(c);
}

// ---- the command line: export, tokenize and models on each family ----

TEST_P(EncoderFamily, ExportAndTokenizeOnTheCommandLine) {
  const EncoderFixture& f = GetParam();
  const fs::path folder = fixture_folder(f.name);
  if (!fs::exists(test::app_exe())) GTEST_SKIP() << "the app was not built";
  REQUIRE_TOKENIZER(folder);
  const std::string app = "'" + test::app_exe().string() + "'";
  const std::string model = " --model '" + folder.string() + "' --text 'The cat sat on the MAT.'";
  const test::ShellRun exported = test::run_shell(app + " export --backend cpu" + model);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const nlohmann::json trace = nlohmann::json::parse(exported.output);
  EXPECT_EQ(trace["model"]["kind"], f.kind);
  const nlohmann::json c = golden(f.name)["cases"][0];
  ASSERT_EQ(trace["tokens"].size(), c["ids"].size());
  for (std::size_t i = 0; i < c["ids"].size(); ++i)
    EXPECT_EQ(trace["tokens"][i]["id"], c["ids"][i]);
  EXPECT_EQ(trace["tokens"].front()["text"], f.cls);
  EXPECT_EQ(trace["tokens"].front()["special"], true);
  EXPECT_EQ(trace["tokens"].front()["start"], -1);
  EXPECT_EQ(trace["tokens"].back()["text"], f.sep);
  float worst = 0;
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h)
      worst = std::max(worst, max_abs_diff(to_matrix(trace["attention"][l][h]),
                                           to_matrix(c["attention"][l][h])));
  EXPECT_LE(worst, kTolerance);

  const test::ShellRun plain = test::run_shell(app + " tokenize" + model);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const nlohmann::json words = nlohmann::json::parse(plain.output)["tokens"];
  EXPECT_EQ(words.size(), c["ids"].size() - 2);  // specials excluded without --special
  EXPECT_EQ(words.front()["id"], c["ids"][1]);
  const test::ShellRun special = test::run_shell(app + " tokenize --special" + model);
  ASSERT_EQ(special.exit_code, 0) << special.output;
  const nlohmann::json all = nlohmann::json::parse(special.output)["tokens"];
  ASSERT_EQ(all.size(), c["ids"].size());
  EXPECT_EQ(all.front()["text"], f.cls);
  EXPECT_EQ(all.back()["text"], f.sep);

  // A typed pair: tokenize --special gives the trace's tokens (RoBERTa's second </s> included).
  const std::string pair =
      f.kind == "distilbert" ? "The cat sat [SEP] it was tired." : "The cat sat</s>it was tired.";
  const std::string pair_model = " --model '" + folder.string() + "' --text '" + pair + "'";
  const test::ShellRun pair_tokens = test::run_shell(app + " tokenize --special" + pair_model);
  const test::ShellRun pair_trace = test::run_shell(app + " export --backend cpu" + pair_model);
  ASSERT_EQ(pair_tokens.exit_code, 0) << pair_tokens.output;
  ASSERT_EQ(pair_trace.exit_code, 0) << pair_trace.output;
  EXPECT_EQ(nlohmann::json::parse(pair_tokens.output)["tokens"],
            nlohmann::json::parse(pair_trace.output)["tokens"]);
  EXPECT_EQ(nlohmann::json::parse(pair_tokens.output)["tokens"].size(),
            golden(f.name)["cases"][2]["ids"].size());
}

// `attnscope models` lists a folder of each family under ./models with its model_type.
TEST(EncoderCli, ModelsListsTheFamilies) {
  if (!fs::exists(test::app_exe())) GTEST_SKIP() << "the app was not built";
  const fs::path work =
      fs::temp_directory_path() / ("attnscope_encoder_models_" + std::to_string(getpid()));
  fs::create_directories(work / "models");
  for (const EncoderFixture& f : fixtures())
    fs::create_directory_symlink(fixture_folder(f.name), work / "models" / f.name);
  const test::ShellRun r = test::run_shell(
      "cd '" + work.string() + "' && HF_HOME='" + (work / "hf").string() + "' HF_HUB_CACHE='" +
      (work / "hf").string() + "' '" + test::app_exe().string() + "' models");
  fs::remove_all(work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const EncoderFixture& f : fixtures()) {
    bool listed = false;
    for (std::size_t at = 0; at < r.output.size();) {
      const std::size_t end = std::min(r.output.find('\n', at), r.output.size());
      const std::string line = r.output.substr(at, end - at);
      listed = listed || (line.rfind(f.name + " ", 0) == 0 &&
                          line.find(" " + f.kind + " ") != std::string::npos);
      at = end + 1;
    }
    EXPECT_TRUE(listed) << f.name << " as " << f.kind << " in:\n" << r.output;
  }
}

}  // namespace
}  // namespace attnscope
