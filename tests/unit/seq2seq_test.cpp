// The encoder–decoders (BART, Marian, T5 v1.0, flan-t5; issue 24) on their tiny fixtures
// (tools/make_fixture_models/seq2seq_fixtures.cpp) against the goldens of the independent float64
// reference (tools/reference/seq2seq_reference.py, after modeling_bart.py, modeling_marian.py and
// modeling_t5.py): the encoder's, decoder's and cross-attention, the top-10 predictions at every
// decoder position, a few raw logits, the tokens' ids and the greedy output; the KV cache against
// the full pass; the CPU against CUDA (skipped without a device); the released checkpoints'
// config.json mapped to the spec; broken configs and tensors as one clear ModelError line; and
// `export --target` on the command line.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/select.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/model/seq2seq/seq2seq_network.h"
#include "core/model/seq2seq/seq2seq_spec.h"
#include "core/util/error.h"
#include "tests/common/golden.h"
#include "tests/common/shell.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
constexpr float kTolerance = 1e-4f;

const std::vector<std::string>& fixture_names() {
  static const std::vector<std::string> names = {"bart-tiny", "marian-tiny", "t5-tiny",
                                                 "flan-t5-tiny"};
  return names;
}

fs::path fixture_folder(const std::string& name) {
  return fs::path(ATTNSCOPE_FIXTURES) / name;
}
fs::path golden_path(const std::string& name) {
  return fs::path(ATTNSCOPE_TEST_DATA) / "golden" / (name + ".json");
}

// The fixture's spec through the registry, as the app finds it.
Seq2SeqSpec spec_of(const fs::path& folder) {
  const nlohmann::json config = read_model_config(folder);
  const HfFamily* family = find_hf_family(config);
  if (!family || !family->seq2seq_spec)
    throw ModelError(folder.string() + ": not an encoder–decoder family");
  Seq2SeqSpec spec = family->seq2seq_spec(config, folder / "config.json");
  apply_generation_config(spec, folder);
  return spec;
}

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return a.size() ? (a - b).cwiseAbs().maxCoeff() : 0.0f;
}

// The largest difference between a [layer][head] stack of matrices and the golden's nested lists.
float worst_diff(const std::vector<std::vector<Matrix>>& got, const nlohmann::json& want) {
  EXPECT_EQ(got.size(), want.size());
  float worst = 0.0f;
  for (std::size_t l = 0; l < got.size() && l < want.size(); ++l) {
    EXPECT_EQ(got[l].size(), want[l].size()) << "layer " << l;
    for (std::size_t h = 0; h < got[l].size() && h < want[l].size(); ++h)
      worst = std::max(worst, max_abs_diff(got[l][h], test::to_matrix(want[l][h])));
  }
  return worst;
}

float worst_diff(const std::vector<std::vector<Matrix>>& a,
                 const std::vector<std::vector<Matrix>>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0.0f;
  for (std::size_t l = 0; l < a.size() && l < b.size(); ++l) {
    EXPECT_EQ(a[l].size(), b[l].size());
    for (std::size_t h = 0; h < a[l].size() && h < b[l].size(); ++h)
      worst = std::max(worst, max_abs_diff(a[l][h], b[l][h]));
  }
  return worst;
}

bool have_fixture(const std::string& name) {
  return fs::exists(fixture_folder(name) / "config.json") && fs::exists(golden_path(name));
}

class Seq2SeqGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_fixture(GetParam()))
      GTEST_SKIP() << GetParam() << ": no fixture or golden yet (" << fixture_folder(GetParam())
                   << ", " << golden_path(GetParam()) << ")";
  }
};

// Text -> trace through the Model: token ids, all three kinds of attention, the predictions.
TEST_P(Seq2SeqGolden, TraceMatchesTheFloat64Reference) {
  const nlohmann::json g = test::golden(GetParam());
  ASSERT_EQ(g.at("format"), "attnscope-seq2seq-golden/1");
  const auto model = open_model(fixture_folder(GetParam()).string());
  const ModelInfo info = model->info();
  EXPECT_EQ(info.kind, g.at("kind").get<std::string>());
  EXPECT_TRUE(info.capabilities.cross_attention);
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  float worst_enc = 0, worst_dec = 0, worst_cross = 0, worst_top = 0;
  for (const nlohmann::json& c : g.at("cases")) {
    const std::string source = c.at("source");
    SCOPED_TRACE(testing::Message() << GetParam() << ": " << source);
    std::optional<std::string> target;
    if (!c.at("target").is_null()) target = c.at("target").get<std::string>();
    const AttentionTrace trace = model->run_translation(source, target, *cpu);
    ASSERT_TRUE(trace.decoder);
    const DecoderTrace& d = *trace.decoder;
    EXPECT_EQ(token_ids(trace.tokens), c.at("encoder_ids").get<std::vector<int>>());
    EXPECT_EQ(token_ids(d.tokens), c.at("decoder_ids").get<std::vector<int>>())
        << (target ? "teacher-forced target" : "greedy output");
    EXPECT_EQ(info.layers, trace.layers());
    EXPECT_EQ(info.decoder_layers, d.layers());
    EXPECT_EQ(info.decoder_heads, d.heads());
    const float enc = worst_diff(trace.attention, c.at("encoder_attention"));
    const float dec = worst_diff(d.attention, c.at("decoder_attention"));
    const float cross = worst_diff(d.cross_attention, c.at("cross_attention"));
    EXPECT_LE(enc, kTolerance) << "encoder self-attention";
    EXPECT_LE(dec, kTolerance) << "decoder self-attention";
    EXPECT_LE(cross, kTolerance) << "cross-attention";
    worst_enc = std::max(worst_enc, enc);
    worst_dec = std::max(worst_dec, dec);
    worst_cross = std::max(worst_cross, cross);
    // Top 10 at every decoder position: the same ids in the same order where their probabilities
    // differ clearly, and the probabilities within the tolerance.
    const nlohmann::json& top = c.at("top10");
    ASSERT_EQ(d.predictions.size(), top.size());
    for (std::size_t i = 0; i < top.size(); ++i) {
      const std::vector<int> ids = top[i].at("ids");
      const std::vector<float> probs = top[i].at("probs");
      ASSERT_EQ(d.predictions[i].size(), ids.size()) << "position " << i;
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const Prediction& p = d.predictions[i][k];
        const bool tie = (k > 0 && std::abs(probs[k] - probs[k - 1]) < kTolerance) ||
                         (k + 1 < ids.size() && std::abs(probs[k] - probs[k + 1]) < kTolerance);
        if (!tie) {
          EXPECT_EQ(p.id, ids[k]) << "position " << i << ", rank " << k;
        }
        EXPECT_NEAR(p.probability, probs[k], kTolerance) << "position " << i << ", rank " << k;
        worst_top = std::max(worst_top, std::abs(p.probability - probs[k]));
      }
    }
    // The decoder's self-attention is causal and every row sums to 1; cross rows too.
    for (int l = 0; l < d.layers(); ++l) {
      for (int h = 0; h < d.heads(); ++h) {
        const Matrix& w = d.attention[l][h];
        ASSERT_EQ(w.rows(), d.targets());
        ASSERT_EQ(w.cols(), d.targets());
        for (int i = 0; i < w.rows(); ++i) {
          EXPECT_NEAR(w.row(i).sum(), 1.0f, 1e-5f);
          for (int j = i + 1; j < w.cols(); ++j) EXPECT_EQ(w(i, j), 0.0f) << i << "," << j;
        }
        const Matrix& x = d.cross_attention[l][h];
        ASSERT_EQ(x.rows(), d.targets());
        ASSERT_EQ(x.cols(), static_cast<int>(trace.tokens.size()));
        for (int i = 0; i < x.rows(); ++i) EXPECT_NEAR(x.row(i).sum(), 1.0f, 1e-5f);
      }
    }
  }
  std::cout << "[ " << GetParam() << " ] max |diff| vs float64: encoder " << worst_enc
            << ", decoder " << worst_dec << ", cross " << worst_cross << ", top-10 probs "
            << worst_top << "\n";
}

// The network on the golden's ids: raw logits (scale errors: T5's d_model^-½, final_logits_bias)
// and the KV cache, step by step, against the full pass.
TEST_P(Seq2SeqGolden, LogitsAndTheKvCache) {
  const nlohmann::json g = test::golden(GetParam());
  const fs::path folder = fixture_folder(GetParam());
  const Seq2SeqNetwork net = Seq2SeqNetwork::load(folder, spec_of(folder));
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  float worst_logit = 0;
  for (const nlohmann::json& c : g.at("cases")) {
    const std::vector<int> src = c.at("encoder_ids"), tgt = c.at("decoder_ids");
    Seq2SeqState full_state, step_state;
    net.encode(src, full_state, *cpu, false);
    step_state = full_state;
    const Seq2SeqDecoderOutputs full = net.decode(tgt, full_state, *cpu, true, true);
    for (const nlohmann::json& sample : c.at("logits_sample")) {
      const int pos = sample[0], id = sample[1];
      const float want = sample[2];
      const float diff = std::abs(full.logits(pos, id) - want);
      EXPECT_LE(diff, kTolerance * (1.0f + std::abs(want))) << "logit " << pos << ", " << id;
      worst_logit = std::max(worst_logit, diff);
    }
    for (std::size_t t = 0; t < tgt.size(); ++t) {
      const Seq2SeqDecoderOutputs step = net.decode({tgt[t]}, step_state, *cpu, true, false);
      EXPECT_LE(max_abs_diff(step.logits, full.logits.middleRows(t, 1)),
                kTolerance * (1.0f + full.logits.cwiseAbs().maxCoeff()))
          << "step " << t;
      for (std::size_t l = 0; l < step.attention.size(); ++l)
        for (std::size_t h = 0; h < step.attention[l].size(); ++h) {
          EXPECT_LE(max_abs_diff(step.attention[l][h],
                                 full.attention[l][h].block(t, 0, 1, static_cast<int>(t) + 1)),
                    1e-5f);
          EXPECT_LE(max_abs_diff(step.cross_attention[l][h], full.cross_attention[l][h].row(t)),
                    1e-5f);
        }
    }
  }
  std::cout << "[ " << GetParam() << " ] max |logit diff| vs float64: " << worst_logit << "\n";
}

// CUDA runs the same network code: every attention and the logits as the CPU's (skipped, never
// passed, without a device).
TEST_P(Seq2SeqGolden, CudaMatchesTheCpu) {
  std::string why;
  const auto cuda = try_cuda_backend(why);
  if (!cuda) GTEST_SKIP() << "no CUDA device: " << why;
  const nlohmann::json g = test::golden(GetParam());
  const fs::path folder = fixture_folder(GetParam());
  const Seq2SeqNetwork net = Seq2SeqNetwork::load(folder, spec_of(folder));
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  for (const nlohmann::json& c : g.at("cases")) {
    const std::vector<int> src = c.at("encoder_ids"), tgt = c.at("decoder_ids");
    Seq2SeqState a, b;
    const Seq2SeqEncoderOutputs ea = net.encode(src, a, *cpu), eb = net.encode(src, b, *cuda);
    EXPECT_LE(worst_diff(ea.attention, eb.attention), kTolerance);
    const Seq2SeqDecoderOutputs da = net.decode(tgt, a, *cpu, true, true),
                                db = net.decode(tgt, b, *cuda, true, true);
    EXPECT_LE(worst_diff(da.attention, db.attention), kTolerance);
    EXPECT_LE(worst_diff(da.cross_attention, db.cross_attention), kTolerance);
    EXPECT_LE(max_abs_diff(da.logits, db.logits),
              kTolerance * (1.0f + da.logits.cwiseAbs().maxCoeff()));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Seq2SeqGolden, ::testing::ValuesIn(fixture_names()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// Limits: a source past max_position_embeddings is cut with its <s> … </s> kept and the cut
// recorded (truncated_at_byte), a target past it is a usage error, and the greedy output stops at
// max_new_tokens (0: the start token alone, with its predictions).
TEST(Seq2SeqLimits, LongSourcesLongTargetsAndTheNewTokenLimit) {
  if (!have_fixture("bart-tiny")) GTEST_SKIP() << "bart-tiny not built yet";
  const fs::path folder = fixture_folder("bart-tiny");
  const auto model = open_model(folder.string());
  const int limit = spec_of(folder).max_source_tokens;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  std::string text;
  for (int i = 0; i < 2 * limit; ++i) text += (i ? " " : "") + std::string(i % 2 ? "cat" : "mat");
  const AttentionTrace trace = model->run_translation(text, std::string("the cat"), *cpu);
  ASSERT_EQ(static_cast<int>(trace.tokens.size()), limit);
  EXPECT_EQ(trace.tokens.front().text, "<s>");
  EXPECT_EQ(trace.tokens.back().text, "</s>");
  EXPECT_TRUE(trace.tokens.back().special);
  ASSERT_GT(trace.truncated_at_byte, 0);
  // The kept words end before the cut; the cut starts a word of the text (byte-level BPE's
  // offsets leave out the space before it).
  EXPECT_LE(trace.tokens[trace.tokens.size() - 2].end, trace.truncated_at_byte);
  EXPECT_EQ(text[static_cast<std::size_t>(trace.truncated_at_byte) - 1], ' ');
  EXPECT_EQ(trace.attention[0][0].rows(), limit);
  EXPECT_THROW(model->run_translation("the cat", text, *cpu), UsageError);
  // bart-tiny's generation settings are bart-base's: forced_bos_token_id 0 makes <s> the first
  // generated token, forced_eos_token_id 2 makes </s> the last one the limit allows, whatever
  // the model predicts there.
  const Seq2SeqSpec spec = spec_of(folder);
  ASSERT_EQ(spec.forced_bos_id, 0);
  ASSERT_EQ(spec.forced_eos_id, 2);
  for (int n : {0, 1, 2, 3}) {
    const AttentionTrace t = model->run_translation("the cat", std::nullopt, *cpu, n);
    ASSERT_TRUE(t.decoder);
    EXPECT_LE(t.decoder->targets(), n + 1);
    EXPECT_EQ(t.decoder->tokens.front().id, spec.decoder_start_id);
    EXPECT_EQ(static_cast<int>(t.decoder->predictions.size()), t.decoder->targets());
    for (std::size_t i = 1; i < t.decoder->tokens.size(); ++i)
      EXPECT_TRUE(t.decoder->tokens[i].generated);
    if (n >= 1) {
      EXPECT_EQ(t.decoder->tokens[1].id, n == 1 ? spec.forced_eos_id : spec.forced_bos_id);
    }
    if (n >= 2) {
      EXPECT_EQ(t.decoder->tokens.back().id, spec.eos_id);
    }
  }
  EXPECT_THROW(model->run_translation("the cat", std::nullopt, *cpu, -1), UsageError);
}

// ---- the released checkpoints' config.json ------------------------------------------------------

const fs::path kWhere = "config.json";

TEST(Seq2SeqSpec, T5SmallAsReleased) {
  const nlohmann::json config = nlohmann::json::parse(R"({
    "architectures": ["T5ForConditionalGeneration"], "d_ff": 2048, "d_kv": 64, "d_model": 512,
    "decoder_start_token_id": 0, "dropout_rate": 0.1, "eos_token_id": 1,
    "initializer_factor": 1.0, "is_encoder_decoder": true, "layer_norm_epsilon": 1e-06,
    "model_type": "t5", "n_positions": 512, "num_heads": 8, "num_layers": 6, "output_past": true,
    "pad_token_id": 0, "relative_attention_num_buckets": 32, "vocab_size": 32128})");
  const Seq2SeqSpec s = t5_spec(config, kWhere);
  EXPECT_EQ(s.encoder.layers, 6);
  EXPECT_EQ(s.decoder.layers, 6);  // num_decoder_layers absent: num_layers
  EXPECT_EQ(s.encoder.heads, 8);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_EQ(s.relative_max_distance, 128);
  EXPECT_FALSE(s.gated_mlp);
  EXPECT_EQ(s.activation, Seq2SeqActivation::kRelu);
  EXPECT_TRUE(s.tied_lm_head);
  EXPECT_FLOAT_EQ(s.lm_head_scale, 1.0f / std::sqrt(512.0f));
  EXPECT_EQ(s.norm, Seq2SeqNorm::kRms);
  EXPECT_TRUE(s.pre_norm);
  EXPECT_FLOAT_EQ(s.attention_scale, 1.0f);
  EXPECT_EQ(s.decoder_start_id, 0);
  EXPECT_EQ(s.eos_id, 1);
}

TEST(Seq2SeqSpec, FlanT5SmallAsReleased) {
  const nlohmann::json config = nlohmann::json::parse(R"({
    "architectures": ["T5ForConditionalGeneration"], "d_ff": 1024, "d_kv": 64, "d_model": 512,
    "decoder_start_token_id": 0, "dense_act_fn": "gelu_new", "dropout_rate": 0.1,
    "eos_token_id": 1, "feed_forward_proj": "gated-gelu", "initializer_factor": 1.0,
    "is_encoder_decoder": true, "is_gated_act": true, "layer_norm_epsilon": 1e-06,
    "model_type": "t5", "n_positions": 512, "num_decoder_layers": 8, "num_heads": 6,
    "num_layers": 8, "output_past": true, "pad_token_id": 0,
    "relative_attention_max_distance": 128, "relative_attention_num_buckets": 32,
    "tie_word_embeddings": false, "use_cache": true, "vocab_size": 32128})");
  const Seq2SeqSpec s = t5_spec(config, kWhere);
  EXPECT_EQ(s.encoder.heads * s.head_dim, 384);  // not d_model: d_kv · num_heads
  EXPECT_EQ(s.d_model, 512);
  EXPECT_EQ(s.decoder.layers, 8);
  EXPECT_TRUE(s.gated_mlp);
  EXPECT_EQ(s.activation,
            Seq2SeqActivation::kGeluTanh);  // gated-gelu is gelu_new
  EXPECT_FALSE(s.tied_lm_head);
  EXPECT_FLOAT_EQ(s.lm_head_scale, 1.0f);
}

TEST(Seq2SeqSpec, OpusMtEnDeAsReleased) {
  const nlohmann::json config = nlohmann::json::parse(R"({
    "activation_dropout": 0.0, "activation_function": "swish", "add_bias_logits": false,
    "add_final_layer_norm": false, "architectures": ["MarianMTModel"], "attention_dropout": 0.0,
    "bad_words_ids": [[58100]], "bos_token_id": 0, "classif_dropout": 0.0, "d_model": 512,
    "decoder_attention_heads": 8, "decoder_ffn_dim": 2048, "decoder_layerdrop": 0.0,
    "decoder_layers": 6, "decoder_start_token_id": 58100, "decoder_vocab_size": 58101,
    "dropout": 0.1, "encoder_attention_heads": 8, "encoder_ffn_dim": 2048,
    "encoder_layerdrop": 0.0, "encoder_layers": 6, "eos_token_id": 0, "forced_eos_token_id": 0,
    "init_std": 0.02, "is_encoder_decoder": true, "max_length": 512,
    "max_position_embeddings": 512, "model_type": "marian", "normalize_before": false,
    "normalize_embedding": false, "num_beams": 4, "num_hidden_layers": 6, "pad_token_id": 58100,
    "scale_embedding": true, "share_encoder_decoder_embeddings": true,
    "static_position_embeddings": true, "use_cache": true, "vocab_size": 58101})");
  const Seq2SeqSpec s = marian_spec(config, kWhere);
  EXPECT_EQ(s.positions, Seq2SeqPositions::kSinusoidal);
  EXPECT_EQ(s.activation, Seq2SeqActivation::kSilu);
  EXPECT_FLOAT_EQ(s.embedding_scale, std::sqrt(512.0f));
  EXPECT_FALSE(s.embedding_norm);
  EXPECT_FALSE(s.separate_embeddings);
  EXPECT_EQ(s.decoder_start_id, 58100);
  EXPECT_EQ(s.eos_id, 0);
  EXPECT_EQ(s.forced_eos_id, 0);
  ASSERT_EQ(s.bad_words.size(), 1u);
  EXPECT_EQ(s.bad_words[0], std::vector<int>{58100});
  EXPECT_EQ(s.max_source_tokens, 512);
  EXPECT_FLOAT_EQ(s.attention_scale, 1.0f / 8.0f);
}

TEST(Seq2SeqSpec, BartBaseAsReleased) {
  const nlohmann::json config = nlohmann::json::parse(R"({
    "activation_dropout": 0.1, "activation_function": "gelu", "add_bias_logits": false,
    "add_final_layer_norm": false, "architectures": ["BartModel"], "attention_dropout": 0.1,
    "bos_token_id": 0, "classif_dropout": 0.1, "classifier_dropout": 0.0, "d_model": 768,
    "decoder_attention_heads": 12, "decoder_ffn_dim": 3072, "decoder_layerdrop": 0.0,
    "decoder_layers": 6, "decoder_start_token_id": 2, "dropout": 0.1, "early_stopping": true,
    "encoder_attention_heads": 12, "encoder_ffn_dim": 3072, "encoder_layerdrop": 0.0,
    "encoder_layers": 6, "eos_token_id": 2, "forced_bos_token_id": 0, "forced_eos_token_id": 2,
    "gradient_checkpointing": false, "init_std": 0.02, "is_encoder_decoder": true,
    "max_position_embeddings": 1024, "model_type": "bart", "no_repeat_ngram_size": 3,
    "normalize_before": false, "normalize_embedding": true, "num_beams": 4,
    "num_hidden_layers": 6, "pad_token_id": 1, "scale_embedding": false, "use_cache": true,
    "vocab_size": 50265})");
  const Seq2SeqSpec s = bart_spec(config, kWhere);
  EXPECT_EQ(s.positions, Seq2SeqPositions::kLearned);
  EXPECT_EQ(s.position_offset, 2);
  EXPECT_EQ(s.position_rows, 1026);
  EXPECT_EQ(s.max_source_tokens, 1024);
  EXPECT_TRUE(s.embedding_norm);
  EXPECT_FLOAT_EQ(s.embedding_scale, 1.0f);
  EXPECT_EQ(s.activation, Seq2SeqActivation::kGeluErf);
  EXPECT_FALSE(s.pre_norm);
  EXPECT_TRUE(s.final_logits_bias);
  EXPECT_EQ(s.decoder_start_id, 2);
  EXPECT_EQ(s.forced_bos_id, 0);
  EXPECT_EQ(s.forced_eos_id, 2);
  EXPECT_EQ(s.no_repeat_ngram_size, 3);
  EXPECT_EQ(s.min_length, 0);
  EXPECT_FLOAT_EQ(s.attention_scale, 0.125f);
}

// A generation_config.json replaces config.json's generation settings as from_pretrained does
// (keys it lacks are GenerationConfig's defaults), and a count that is not one is named.
TEST(Seq2SeqGenerationSettings, GenerationConfigReplacesTheModelConfigs) {
  Seq2SeqSpec s;
  s.decoder_vocab = 100;
  read_seq2seq_generation_settings(
      s, nlohmann::json::parse(R"({"forced_bos_token_id": 0, "no_repeat_ngram_size": 3,
                                   "bad_words_ids": [[7]], "min_length": 5})"),
      "config.json");
  EXPECT_EQ(s.forced_bos_id, 0);
  EXPECT_EQ(s.no_repeat_ngram_size, 3);
  EXPECT_EQ(s.min_length, 5);
  read_seq2seq_generation_settings(s, nlohmann::json::parse(R"({"forced_eos_token_id": [2, 3]})"),
                                   "generation_config.json");
  EXPECT_EQ(s.forced_bos_id, -1);
  EXPECT_EQ(s.forced_eos_id, 2);
  EXPECT_EQ(s.no_repeat_ngram_size, 0);
  EXPECT_EQ(s.min_length, 0);
  EXPECT_TRUE(s.bad_words.empty());
  try {
    read_seq2seq_generation_settings(s, nlohmann::json::parse(R"({"no_repeat_ngram_size": -1})"),
                                     "generation_config.json");
    ADD_FAILURE() << "accepted a negative n-gram size";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("generation_config.json: 'no_repeat_ngram_size'"),
              std::string::npos)
        << e.what();
  }
}

// T5's buckets as _relative_position_bucket gives them (values worked out from its formula):
// bidirectional 32 buckets / 128: 16 per side, exact below 8, logarithmic up to 128; causal 32:
// exact below 16, nothing for keys after the query.
TEST(Seq2SeqSpec, T5RelativeBuckets) {
  EXPECT_EQ(t5_relative_bucket(0, true, 32, 128), 0);
  EXPECT_EQ(t5_relative_bucket(-3, true, 32, 128), 3);
  EXPECT_EQ(t5_relative_bucket(3, true, 32, 128), 19);
  EXPECT_EQ(t5_relative_bucket(-8, true, 32, 128), 8);
  EXPECT_EQ(t5_relative_bucket(-16, true, 32, 128),
            10);                                            // 8 + log(2)/log(16)·8 = 10
  EXPECT_EQ(t5_relative_bucket(-32, true, 32, 128), 12);    // 8 + 4
  EXPECT_EQ(t5_relative_bucket(-1000, true, 32, 128), 15);  // capped
  EXPECT_EQ(t5_relative_bucket(1000, true, 32, 128), 31);
  EXPECT_EQ(t5_relative_bucket(5, false, 32, 128), 0);  // a later key: bucket 0
  EXPECT_EQ(t5_relative_bucket(-15, false, 32, 128), 15);
  EXPECT_EQ(t5_relative_bucket(-32, false, 32, 128),
            21);  // 16 + ⌊log(2)/log(8)·16⌋ = 16 + 5
  EXPECT_EQ(t5_relative_bucket(-500, false, 32, 128), 31);
}

// ---- broken folders: one clear ModelError line ------------------------------------------------

class Seq2SeqBrokenFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnscope_seq2seq_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A copy of fixture `name` with config.json replaced; false when the fixture is not built.
  bool copy_fixture(const std::string& name) {
    const fs::path from = fixture_folder(name);
    if (!fs::exists(from / "model.safetensors")) return false;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const auto& e : fs::directory_iterator(from))
      fs::copy_file(e.path(), dir_ / e.path().filename(), fs::copy_options::overwrite_existing);
    config_ = read_model_config(dir_);
    return true;
  }
  // The message of opening the copy with config.json = `config`, or "(no error)".
  std::string open_error(const nlohmann::json& config) {
    std::ofstream(dir_ / "config.json") << config.dump();
    try {
      open_model(dir_.string());
    } catch (const ModelError& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
  nlohmann::json config_;
};

TEST_F(Seq2SeqBrokenFolder, MissingKeysAndMismatchedShapesNameTheProblem) {
  for (const std::string& name : fixture_names()) {
    SCOPED_TRACE(name);
    if (!copy_fixture(name)) continue;
    const bool t5 = config_.at("model_type") == "t5";
    for (const std::string& key :
         t5 ? std::vector<std::string>{"d_model", "d_kv", "num_heads", "num_layers", "d_ff"}
            : std::vector<std::string>{"d_model", "encoder_layers", "decoder_attention_heads",
                                       "encoder_ffn_dim", "vocab_size"}) {
      nlohmann::json c = config_;
      c.erase(key);
      const std::string e = open_error(c);
      EXPECT_NE(e.find("'" + key + "'"), std::string::npos) << e;
      EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
    // Sizes the tensors do not have: the tensor named with both shapes.
    nlohmann::json c = config_;
    if (t5)
      c["d_kv"] = c["d_kv"].get<int>() + 1;  // d_kv · num_heads no longer the q rows
    else
      c["encoder_ffn_dim"] = c["encoder_ffn_dim"].get<int>() * 2;
    std::string e = open_error(c);
    EXPECT_NE(e.find("has shape"), std::string::npos) << e;
    EXPECT_NE(e.find(t5 ? "SelfAttention.q.weight" : "fc1.weight"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    c = config_;
    c["vocab_size"] = c["vocab_size"].get<int>() + 3;
    e = open_error(c);
    EXPECT_NE(e.find("has shape"), std::string::npos) << e;
    c = config_;
    c[t5 ? "feed_forward_proj" : "activation_function"] = "tanhsoftplus";
    e = open_error(c);
    EXPECT_NE(e.find("tanhsoftplus"), std::string::npos) << e;
    // An id beyond the vocabulary in generation_config.json (which generate reads first), then,
    // without that file, in config.json: each message names its file.
    if (fs::exists(dir_ / "generation_config.json")) {
      std::ofstream(dir_ / "generation_config.json")
          << nlohmann::json{{"decoder_start_token_id", 1 << 20}}.dump();
      e = open_error(config_);
      EXPECT_NE(e.find("generation_config.json"), std::string::npos) << e;
      EXPECT_NE(e.find("decoder_start_token_id"), std::string::npos) << e;
      fs::remove(dir_ / "generation_config.json");
    }
    c = config_;
    c["decoder_start_token_id"] = c["vocab_size"].get<int>() + 5;
    e = open_error(c);
    EXPECT_NE(e.find("config.json: 'decoder_start_token_id'"), std::string::npos) << e;
    c = config_;
    c["d_model"] = "512";
    e = open_error(c);
    EXPECT_NE(e.find("'d_model'"), std::string::npos) << e;
  }
}

// Marian's positions are computed, not read: a config with 2^24 of them opens and runs without
// building a table of that many rows.
TEST_F(Seq2SeqBrokenFolder, HugePositionLimitsCostNothingUntilUsed) {
  if (!copy_fixture("marian-tiny")) GTEST_SKIP() << "marian-tiny not built yet";
  nlohmann::json c = config_;
  c["max_position_embeddings"] = 1 << 24;
  std::ofstream(dir_ / "config.json") << c.dump();
  const auto model = open_model(dir_.string());
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  const AttentionTrace trace = model->run_translation("The cat.", std::nullopt, *cpu, 4);
  ASSERT_TRUE(trace.decoder);
  EXPECT_GE(trace.decoder->targets(), 2);
}

// A relative_attention_bias of the wrong shape, and a checkpoint without a layer's tensor.
TEST_F(Seq2SeqBrokenFolder, BucketCountsAndMissingTensors) {
  if (copy_fixture("t5-tiny")) {
    nlohmann::json c = config_;
    c["relative_attention_num_buckets"] = c.value("relative_attention_num_buckets", 32) + 2;
    const std::string e = open_error(c);
    EXPECT_NE(e.find("relative_attention_bias"), std::string::npos) << e;
    c = config_;
    c["num_layers"] = c["num_layers"].get<int>() + 1;
    const std::string missing = open_error(c);
    EXPECT_NE(missing.find("is missing"), std::string::npos) << missing;
  }
  if (copy_fixture("bart-tiny")) {
    nlohmann::json c = config_;
    c["max_position_embeddings"] = c["max_position_embeddings"].get<int>() + 1;
    const std::string e = open_error(c);
    EXPECT_NE(e.find("embed_positions"), std::string::npos) << e;
  }
}

// ---- the command line --------------------------------------------------------------------------

TEST(Seq2SeqCli, TargetOnADecoderIsAUsageError) {
  if (!fs::exists(test::app_exe())) GTEST_SKIP() << "the app was not built";
  const std::string gpt2 = (fixture_folder("gpt2-tiny-f32")).string();
  const test::ShellRun r =
      test::run_app("export --model '" + gpt2 + "' --text hello --target Hallo", true);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(test::one_line_containing(r.output, "--target needs an encoder–decoder")) << r.output;
  EXPECT_TRUE(test::one_line_containing(r.output, "bart, marian, t5")) << r.output;
  const test::ShellRun n = test::run_app("export --model '" + gpt2 + "' --text hello -n 3", true);
  EXPECT_EQ(n.exit_code, 2) << n.output;
  EXPECT_TRUE(test::one_line_containing(n.output, "--tokens needs an encoder–decoder")) << n.output;
}

TEST(Seq2SeqCli, ExportWritesTheEncodersTraceOfTheSource) {
  if (!fs::exists(test::app_exe())) GTEST_SKIP() << "the app was not built";
  for (const std::string& name : fixture_names()) {
    if (!have_fixture(name)) continue;
    SCOPED_TRACE(name);
    const nlohmann::json g = test::golden(name);
    for (const nlohmann::json& c : g.at("cases")) {
      std::string args = "export --model '" + fixture_folder(name).string() + "' --text '" +
                         c.at("source").get<std::string>() + "'";
      if (!c.at("target").is_null())
        args += " --target '" + c.at("target").get<std::string>() + "'";
      const test::ShellRun r = test::run_app(args);
      ASSERT_EQ(r.exit_code, 0) << args;
      const nlohmann::json trace = nlohmann::json::parse(r.output);
      std::vector<int> ids;
      for (const nlohmann::json& t : trace.at("tokens")) ids.push_back(t.at("id"));
      EXPECT_EQ(ids, c.at("encoder_ids").get<std::vector<int>>());
      const Matrix first = test::to_matrix(trace.at("attention")[0][0]);
      EXPECT_LE(max_abs_diff(first, test::to_matrix(c.at("encoder_attention")[0][0])), kTolerance);
      ASSERT_TRUE(trace.contains("decoder")) << "the trace file lacks the decoder's half";
      std::vector<int> dids;
      for (const nlohmann::json& t : trace["decoder"].at("tokens")) dids.push_back(t.at("id"));
      EXPECT_EQ(dids, c.at("decoder_ids").get<std::vector<int>>());
      const Matrix cross = test::to_matrix(trace["decoder"].at("cross_attention")[0][0]);
      EXPECT_LE(max_abs_diff(cross, test::to_matrix(c.at("cross_attention")[0][0])), kTolerance);
      const nlohmann::json& self = trace["decoder"].at("attention");
      const nlohmann::json& want = c.at("decoder_attention");
      EXPECT_LE(
          max_abs_diff(test::to_matrix(self.back().back()), test::to_matrix(want.back().back())),
          kTolerance);
    }
  }
}

// `tokenize --target` gives the decoder's tokens of a target (decoder_start_token_id and the target
// side's ids with </s>) without loading the weights; on a decoder it is a usage error.
TEST(Seq2SeqCli, TokenizeTargetGivesTheDecodersTokens) {
  if (!fs::exists(test::app_exe())) GTEST_SKIP() << "the app was not built";
  for (const std::string& name : fixture_names()) {
    if (!have_fixture(name)) continue;
    SCOPED_TRACE(name);
    for (const nlohmann::json& c : test::golden(name).at("cases")) {
      if (c.at("target").is_null()) continue;
      const test::ShellRun r = test::run_app("tokenize --model '" + fixture_folder(name).string() +
                                             "' --text x --target '" +
                                             c.at("target").get<std::string>() + "' --special");
      ASSERT_EQ(r.exit_code, 0) << r.output;
      std::vector<int> ids;
      for (const nlohmann::json& t : nlohmann::json::parse(r.output).at("tokens"))
        ids.push_back(t.at("id"));
      EXPECT_EQ(ids, c.at("decoder_ids").get<std::vector<int>>());
    }
  }
  const test::ShellRun r = test::run_app(
      "tokenize --model '" + fixture_folder("gpt2-tiny-f32").string() + "' --text x --target y",
      true);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(test::one_line_containing(r.output, "--target needs an encoder–decoder")) << r.output;
}

// `attnscope models` lists a folder of each encoder–decoder family under ./models with its
// model_type (the family registry decides what opens).
TEST(Seq2SeqCli, ModelsListsTheFamilies) {
  if (!fs::exists(test::app_exe())) GTEST_SKIP() << "the app was not built";
  const fs::path work =
      fs::temp_directory_path() / ("attnscope_seq2seq_models_" + std::to_string(getpid()));
  fs::create_directories(work / "models");
  std::vector<std::pair<std::string, std::string>> listed;  // folder, kind
  for (const std::string& name : fixture_names()) {
    if (!fs::exists(fixture_folder(name) / "config.json")) continue;
    fs::create_directory_symlink(fixture_folder(name), work / "models" / name);
    listed.push_back({name, read_model_config(fixture_folder(name)).at("model_type")});
  }
  const test::ShellRun r = test::run_shell(
      "cd '" + work.string() + "' && HF_HOME='" + (work / "hf").string() + "' HF_HUB_CACHE='" +
      (work / "hf").string() + "' '" + test::app_exe().string() + "' models");
  fs::remove_all(work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& [name, kind] : listed) {
    bool found = false;
    for (std::size_t at = 0; at < r.output.size();) {
      const std::size_t end = std::min(r.output.find('\n', at), r.output.size());
      const std::string line = r.output.substr(at, end - at);
      found = found ||
              (line.rfind(name + " ", 0) == 0 && line.find(" " + kind + " ") != std::string::npos);
      at = end + 1;
    }
    EXPECT_TRUE(found) << name << " as " << kind << " in:\n" << r.output;
  }
}

}  // namespace
}  // namespace attnscope
