// Phi-3 (Phi-3-mini, Phi-3.5-mini, Phi-4-mini) beyond the family table's
// golden, cache, CLI and OpenGL tests: the description Phi-3-mini-4k's and
// Phi-4-mini's released configs map to; LongRoPE's switch from the short to the
// long factors just past original_max_position_embeddings, in one forward pass
// and in a generation through the KV cache, against the float64 reference's
// goldens; the fused qkv_proj / gate_up_proj row views against the same weights
// under Llama's separate names; and broken configs as one clear error each.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/error.h"
#include "tests/common/decoder_fixture.h"
#include "tests/common/golden.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kPhi3 = fs::path(ATTNSCOPE_FIXTURES) / "phi3-tiny";
const fs::path kPhi4 = fs::path(ATTNSCOPE_FIXTURES) / "phi4-mini-tiny";

// microsoft/Phi-3-mini-4k-instruct's config.json (transformers 4.40.2), as
// released.
json phi3_mini_4k() {
  return json::parse(R"({
    "_name_or_path": "Phi-3-mini-4k-instruct", "architectures": ["Phi3ForCausalLM"],
    "attention_dropout": 0.0,
    "auto_map": {"AutoConfig": "configuration_phi3.Phi3Config",
                 "AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM"},
    "bos_token_id": 1, "embd_pdrop": 0.0, "eos_token_id": 32000, "hidden_act": "silu",
    "hidden_size": 3072, "initializer_range": 0.02, "intermediate_size": 8192,
    "max_position_embeddings": 4096, "model_type": "phi3", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
    "pad_token_id": 32000, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": null,
    "rope_theta": 10000.0, "sliding_window": 2047, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "transformers_version": "4.40.2", "use_cache": true,
    "attention_bias": false, "vocab_size": 32064})");
}

// microsoft/Phi-4-mini-instruct's config.json (transformers 4.45.0), as
// released.
json phi4_mini() {
  return json::parse(R"({
    "_name_or_path": "Phi-4-mini-instruct", "architectures": ["Phi3ForCausalLM"],
    "attention_bias": false, "attention_dropout": 0.0,
    "auto_map": {"AutoConfig": "configuration_phi3.Phi3Config",
                 "AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM",
                 "AutoTokenizer": "Xenova/gpt-4o"},
    "bos_token_id": 199999, "embd_pdrop": 0.0, "eos_token_id": 199999, "full_attn_mod": 1,
    "hidden_act": "silu", "hidden_size": 3072, "initializer_range": 0.02,
    "intermediate_size": 8192, "interpolate_factor": 1, "lm_head_bias": false,
    "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "phi3",
    "num_attention_heads": 24, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "original_max_position_embeddings": 4096, "pad_token_id": 199999,
    "partial_rotary_factor": 0.75, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05,
    "rope_scaling": {
      "long_factor": [1, 1.118320672, 1.250641126, 1.398617824, 1.564103225, 1.74916897,
        1.956131817, 2.187582649, 2.446418898, 2.735880826, 3.059592084, 3.421605075,
        3.826451687, 4.279200023, 4.785517845, 5.351743533, 5.984965424, 6.693110555,
        7.485043894, 8.370679318, 9.36110372, 10.4687158, 11.70738129, 13.09260651,
        14.64173252, 16.37415215, 18.31155283, 20.47818807, 22.90118105, 25.61086418,
        28.64115884, 32.03, 32.1, 32.13, 32.23, 32.6, 32.61, 32.64, 32.66, 32.7, 32.71, 32.93,
        32.97, 33.28, 33.49, 33.5, 44.16, 47.77],
      "short_factor": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
      "type": "longrope"},
    "rope_theta": 10000.0, "sliding_window": 262144, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16", "transformers_version": "4.45.0", "use_cache": true,
    "vocab_size": 200064})");
}

DecoderSpec spec_of(const json& config) {
  return decoder_spec_of(config, "phi/config.json");
}

std::string spec_error(const json& config) {
  try {
    spec_of(config);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Phi3Spec, Phi3Mini4kMapsToFusedLayersWithASlidingWindow) {
  const DecoderSpec s = spec_of(phi3_mini_4k());
  EXPECT_EQ(s.kind, "phi3");
  EXPECT_EQ(s.layers, 32);
  EXPECT_EQ(s.hidden, 3072);
  EXPECT_EQ(s.heads, 32);
  EXPECT_EQ(s.kv_heads, 32);
  EXPECT_EQ(s.head_dim, 96);
  EXPECT_EQ(s.ff, 8192);
  EXPECT_EQ(s.vocab, 32064);
  EXPECT_EQ(s.max_positions, 4096);
  EXPECT_EQ(s.norm, NormKind::kRms);
  EXPECT_FLOAT_EQ(s.norm_eps, 1e-5f);
  EXPECT_TRUE(s.gated_mlp);
  EXPECT_EQ(s.activation, MlpActivation::kSilu);
  EXPECT_FALSE(s.qkv_bias || s.o_bias || s.mlp_bias);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_EQ(s.tensor_names, TensorNames::kPhi3);
  for (const DecoderLayerSpec& l : s.layer) EXPECT_EQ(l.window, 2047);
  // No rope_scaling: every dimension rotated, 10000^(-2i/96), no long factors,
  // no factor on cos/sin.
  ASSERT_EQ(s.rope.rotary_dims(), 96);
  for (int i = 0; i < 48; ++i)
    EXPECT_FLOAT_EQ(s.rope.inv_freq[i], static_cast<float>(std::pow(10000.0, -2.0 * i / 96)));
  EXPECT_TRUE(s.rope.long_inv_freq.empty());
  EXPECT_EQ(s.rope.attention_factor, 1.0f);
  EXPECT_EQ(&s.rope.inv_freq_for(4096), &s.rope.inv_freq);
  EXPECT_FLOAT_EQ(s.attention_scale, 1.0f / std::sqrt(96.0f));
  EXPECT_EQ(s.bos_id, 1);
  EXPECT_EQ(s.eos_ids, std::vector<int>{32000});
  EXPECT_EQ(position_scheme_of("phi3"), PositionScheme::kRotary);
}

TEST(Phi3Spec, Phi4MiniMapsToPartialLongRope) {
  const json c = phi4_mini();
  const DecoderSpec s = spec_of(c);
  EXPECT_EQ(s.heads, 24);
  EXPECT_EQ(s.kv_heads, 8);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.max_positions, 131072);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(s.layer[5].window, 262144);
  EXPECT_EQ(s.bos_id, 199999);
  // int(128 · 0.75) = 96 rotated dimensions, one short and one long factor per
  // pair.
  ASSERT_EQ(s.rope.rotary_dims(), 96);
  ASSERT_EQ(s.rope.long_inv_freq.size(), 48u);
  EXPECT_EQ(s.rope.original_max_positions, 4096);
  for (int i = 0; i < 48; ++i) {
    const double base = std::pow(10000.0, 2.0 * i / 96);
    const double short_f = c["rope_scaling"]["short_factor"][i].get<double>();
    const double long_f = c["rope_scaling"]["long_factor"][i].get<double>();
    EXPECT_FLOAT_EQ(s.rope.inv_freq[i], static_cast<float>(1.0 / (short_f * base)));
    EXPECT_FLOAT_EQ(s.rope.long_inv_freq[i], static_cast<float>(1.0 / (long_f * base)));
  }
  // factor = 131072 / 4096 = 32: √(1 + ln 32 / ln 4096) = √(1 + 5/12).
  EXPECT_FLOAT_EQ(s.rope.attention_factor, static_cast<float>(std::sqrt(1.0 + 5.0 / 12.0)));
  // The whole sequence's length picks the set: up to 4096 tokens the short one,
  // then the long.
  EXPECT_EQ(&s.rope.inv_freq_for(4096), &s.rope.inv_freq);
  EXPECT_EQ(&s.rope.inv_freq_for(4097), &s.rope.long_inv_freq);
}

TEST(Phi3Spec, OlderNamesTransformersFiveAndExplicitFactors) {
  json c = phi4_mini();
  c["rope_scaling"]["type"] = "su";  // Phi-3-mini-128k's first configs; Phi3Config reads longrope
  EXPECT_EQ(spec_of(c).rope.long_inv_freq.size(), 48u);
  c["rope_scaling"]["type"] = "yarn";  // likewise renamed by Phi3Config
  EXPECT_EQ(spec_of(c).rope.long_inv_freq.size(), 48u);
  c["rope_scaling"]["attention_factor"] = 1.25;
  EXPECT_FLOAT_EQ(spec_of(c).rope.attention_factor, 1.25f);
  c["rope_scaling"].erase("attention_factor");
  c["rope_scaling"]["factor"] = 1.0;  // no extension: cos and sin unscaled
  EXPECT_FLOAT_EQ(spec_of(c).rope.attention_factor, 1.0f);
  // transformers 5: one rope_parameters object with theta, the partial factor
  // and the context.
  c = phi4_mini();
  json p = c["rope_scaling"];
  p.erase("type");
  p["rope_type"] = "longrope";
  p["rope_theta"] = 250000.0;
  p["partial_rotary_factor"] = 0.5;
  p["original_max_position_embeddings"] = 8192;
  c.erase("rope_scaling");
  c.erase("rope_theta");
  c.erase("partial_rotary_factor");
  c["rope_parameters"] = p;
  c["rope_parameters"]["short_factor"] = json(std::vector<double>(32, 2.0));
  c["rope_parameters"]["long_factor"] = json(std::vector<double>(32, 4.0));
  const DecoderSpec s = spec_of(c);
  ASSERT_EQ(s.rope.rotary_dims(), 64);
  EXPECT_EQ(s.rope.original_max_positions, 8192);
  EXPECT_FLOAT_EQ(s.rope.inv_freq[1],
                  static_cast<float>(1.0 / (2.0 * std::pow(250000.0, 2.0 / 64))));
  EXPECT_FLOAT_EQ(s.rope.long_inv_freq[1],
                  static_cast<float>(1.0 / (4.0 * std::pow(250000.0, 2.0 / 64))));
}

// One line naming config.json and the key.
void expect_error(const json& c, const std::string& key) {
  const std::string e = spec_error(c);
  EXPECT_NE(e.find("phi/config.json"), std::string::npos) << e;
  EXPECT_NE(e.find(key), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(Phi3Spec, BrokenConfigsSayWhatIsWrong) {
  json c = phi4_mini();
  c["rope_scaling"]["short_factor"].erase(0);  // 47 of 48
  expect_error(c, "'rope_scaling.short_factor' has 47 entries, expected 48");
  c = phi4_mini();
  c["rope_scaling"]["long_factor"].push_back(50.0);
  expect_error(c, "'rope_scaling.long_factor' has 49 entries, expected 48");
  c = phi4_mini();
  c["rope_scaling"].erase("long_factor");
  expect_error(c, "'rope_scaling.long_factor'");
  c = phi4_mini();
  c["rope_scaling"]["short_factor"][3] = "one";
  expect_error(c, "'rope_scaling.short_factor' must hold positive numbers");
  c = phi4_mini();
  c["rope_scaling"]["type"] = "dynamic";
  expect_error(c, "'rope_scaling.type' is 'dynamic'");
  c["rope_scaling"]["type"] = 3;
  expect_error(c, "'rope_scaling.type' must be a string");
  c = phi4_mini();
  c["rope_scaling"] = "longrope";
  expect_error(c, "'rope_scaling' must be an object or null");
  c = phi4_mini();
  c["partial_rotary_factor"] = 0;
  expect_error(c, "'partial_rotary_factor' must be in (0, 1]");
  c = phi4_mini();
  c["original_max_position_embeddings"] = 0;
  expect_error(c, "original_max_position_embeddings");
  c = phi3_mini_4k();
  c["sliding_window"] = -5;
  expect_error(c, "'sliding_window'");
}

// Attention rows and logits of `out` (rows [first, first + rows) of the golden
// case's) against the golden; returns the worst differences.
struct Worst {
  float attention = 0, logit = 0;
};
void compare_rows(const DecoderOutputs& out, const json& cs, int first, const DecoderSpec& s,
                  Worst& worst) {
  const int rows = static_cast<int>(out.logits.rows());
  const auto logit_ids = cs["logit_ids"].get<std::vector<int>>();
  for (int l = 0; l < s.layers; ++l)
    for (int h = 0; h < s.heads; ++h) {
      const Matrix want = test::to_matrix(cs["attention"][l][h]);
      const Matrix& got = out.attention[l][h];
      ASSERT_EQ(got.cols(), first + rows);
      worst.attention = std::max(worst.attention,
                                 test::max_abs_diff(got, want.block(first, 0, rows, first + rows)));
    }
  for (int i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < logit_ids.size(); ++j)
      worst.logit = std::max(worst.logit, std::abs(out.logits(i, logit_ids[j]) -
                                                   cs["logits"][first + i][j].get<float>()));
}

// The golden's cases 2 and 3: 20 tokens (past the original 16: long factors)
// and their first 16 (the longest sequence on the short ones).
class Phi4Switch : public ::testing::Test {
 protected:
  void SetUp() override {
    g_ = test::golden("phi4-mini-tiny");
    ASSERT_EQ(g_["cases"].size(), 4u);
    long_ = g_["cases"][2];
    short_ = g_["cases"][3];
    ids_ = long_["ids"].get<std::vector<int>>();
    ASSERT_EQ(ids_.size(), 20u);
    ASSERT_EQ(net_.spec().rope.original_max_positions, 16);
  }
  DecoderOutputs run(const std::vector<int>& ids, KvCache& cache) const {
    DecoderRequest r;
    r.all_logits = true;
    return net_.forward(ids, cache, *backend_, r);
  }
  const DecoderNetwork net_ = test::load_decoder_folder(kPhi4);
  const std::unique_ptr<Backend> backend_ = make_cpu_backend();
  json g_, long_, short_;
  std::vector<int> ids_;
};

TEST_F(Phi4Switch, SixteenTokensTakeTheShortFactorsSeventeenTheLong) {
  Worst below, above;
  KvCache a, b;
  compare_rows(run(std::vector<int>(ids_.begin(), ids_.begin() + 16), a), short_, 0, net_.spec(),
               below);
  compare_rows(run(ids_, b), long_, 0, net_.spec(), above);
  EXPECT_LE(below.attention, 1e-4f);
  EXPECT_LE(below.logit, 1e-4f);
  EXPECT_LE(above.attention, 1e-4f);
  EXPECT_LE(above.logit, 1e-4f);
  // 17 tokens, one past the switch: the first 16 query rows differ from the
  // 16-token pass (the long factors rotate them), by far more than float error.
  KvCache c, d;
  const DecoderOutputs at16 = run(std::vector<int>(ids_.begin(), ids_.begin() + 16), c);
  const DecoderOutputs at17 = run(std::vector<int>(ids_.begin(), ids_.begin() + 17), d);
  EXPECT_GT(test::max_abs_diff(at17.attention[1][0].block(0, 0, 16, 16), at16.attention[1][0]),
            1e-2f);
  std::cout << "phi4-mini-tiny: max |diff| vs float64: 16 tokens (short) attention "
            << below.attention << ", logits " << below.logit << "; 20 tokens (long) attention "
            << above.attention << ", logits " << above.logit << "\n";
}

// A generation through the KV cache across the switch: a 12-token prompt, then
// one token at a time. Up to 16 tokens each step's rows are the 16-token pass's
// (short factors); from 17 on the 20-token pass's (long factors, the cached
// keys turned at the switch), as HF's generate gives by recomputing its cache
// when the length first passes original_max_position_embeddings.
TEST_F(Phi4Switch, CachedGenerationAcrossTheSwitchEqualsTheWholeSequence) {
  Worst before, after;
  KvCache cache;
  {
    const DecoderOutputs first = run(std::vector<int>(ids_.begin(), ids_.begin() + 12), cache);
    compare_rows(first, short_, 0, net_.spec(), before);
  }
  for (int i = 12; i < 20; ++i) {
    const DecoderOutputs step = run({ids_[i]}, cache);
    ASSERT_EQ(cache.length(), i + 1);
    if (i < 16)
      compare_rows(step, short_, i, net_.spec(), before);
    else
      compare_rows(step, long_, i, net_.spec(), after);
  }
  EXPECT_LE(before.attention, 1e-4f);
  EXPECT_LE(before.logit, 1e-4f);
  EXPECT_LE(after.attention, 1e-4f);
  EXPECT_LE(after.logit, 1e-4f);
  // Several tokens at once across it (14 cached, 4 more: 18) and a prompt past
  // it from the start.
  Worst chunk;
  KvCache c2, c3;
  run(std::vector<int>(ids_.begin(), ids_.begin() + 14), c2);
  compare_rows(run(std::vector<int>(ids_.begin() + 14, ids_.begin() + 18), c2), long_, 14,
               net_.spec(), chunk);
  run(std::vector<int>(ids_.begin(), ids_.begin() + 18), c3);
  compare_rows(run({ids_[18]}, c3), long_, 18, net_.spec(), chunk);
  EXPECT_LE(chunk.attention, 1e-4f);
  EXPECT_LE(chunk.logit, 1e-4f);
  std::cout << "phi4-mini-tiny cached generation vs float64: steps to 16 attention "
            << before.attention << ", logits " << before.logit << "; steps 17-20 attention "
            << after.attention << ", logits " << after.logit << "\n";
}

// A copy of phi3-tiny whose model.safetensors header names the fused matrices'
// row blocks with Llama's separate names (the data bytes untouched), under
// Mistral's config: the same network.
class Phi3Copy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnscope_phi3_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  json config() const {
    std::ifstream in(kPhi3 / "config.json");
    return json::parse(in);
  }
  // Writes model.safetensors with the header `edit` returns.
  template <class Edit>
  void write_weights(Edit edit) const {
    std::ifstream in(kPhi3 / "model.safetensors", std::ios::binary);
    std::uint64_t n = 0;
    in.read(reinterpret_cast<char*>(&n), 8);
    std::string header(n, '\0');
    in.read(header.data(), static_cast<std::streamsize>(n));
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string out_header = edit(json::parse(header)).dump();
    out_header.append((8 - out_header.size() % 8) % 8, ' ');
    const std::uint64_t m = out_header.size();
    std::ofstream out(dir_ / "model.safetensors", std::ios::binary);
    out.write(reinterpret_cast<const char*>(&m), 8);
    out << out_header << data;
  }
  fs::path dir_;
};

TEST_F(Phi3Copy, FusedRowViewsEqualLlamaSeparateMatrices) {
  const json c = config();
  const int d = c["hidden_size"], ff = c["intermediate_size"];
  const int dh = d / c["num_attention_heads"].get<int>();
  const int q_out = c["num_attention_heads"].get<int>() * dh,
            kv_out = c["num_key_value_heads"].get<int>() * dh;
  write_weights([&](json h) {
    json out = json::object();
    auto split = [&](const json& fused, const std::vector<std::pair<std::string, int>>& parts) {
      std::uint64_t at = fused["data_offsets"][0].get<std::uint64_t>();
      for (const auto& [name, rows] : parts) {
        const std::uint64_t bytes = static_cast<std::uint64_t>(rows) * d * 2;  // BF16
        out[name] = {
            {"dtype", fused["dtype"]}, {"shape", {rows, d}}, {"data_offsets", {at, at + bytes}}};
        at += bytes;
      }
    };
    for (auto& [key, entry] : h.items()) {
      const std::string name = key;
      const auto fused_at = [&](const std::string& what) { return name.find(what); };
      if (fused_at("qkv_proj") != std::string::npos) {
        const std::string p = name.substr(0, fused_at("qkv_proj"));
        split(entry, {{p + "q_proj.weight", q_out},
                      {p + "k_proj.weight", kv_out},
                      {p + "v_proj.weight", kv_out}});
      } else if (fused_at("gate_up_proj") != std::string::npos) {
        const std::string p = name.substr(0, fused_at("gate_up_proj"));
        split(entry, {{p + "gate_proj.weight", ff}, {p + "up_proj.weight", ff}});
      } else {
        out[name] = entry;
      }
    }
    return out;
  });
  json m = c;
  m["model_type"] = "mistral";  // Llama's layers, the sliding window on every layer
  std::ofstream(dir_ / "config.json") << m.dump();
  const auto backend = make_cpu_backend();
  std::vector<int> ids;
  for (int i = 0; i < 15; ++i) ids.push_back((i * 4099 + 7) % 32064);
  KvCache a, b;
  const DecoderNetwork separate = test::load_decoder_folder(dir_);
  ASSERT_EQ(separate.spec().tensor_names, TensorNames::kLlama);
  const DecoderOutputs want = separate.forward(ids, a, *backend);
  const DecoderOutputs got = test::load_decoder_folder(kPhi3).forward(ids, b, *backend);
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h)
      EXPECT_EQ(test::max_abs_diff(got.attention[l][h], want.attention[l][h]), 0.0f);
  EXPECT_EQ(test::max_abs_diff(got.logits, want.logits), 0.0f);
}

TEST_F(Phi3Copy, MissingOrMisshapenFusedTensorsAreNamed) {
  std::ofstream(dir_ / "config.json") << config().dump();
  write_weights([](json h) {
    h.erase("model.layers.1.mlp.gate_up_proj.weight");
    return h;
  });
  try {
    test::load_decoder_folder(dir_);
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.1.mlp.gate_up_proj.weight"),
              std::string::npos)
        << e.what();
  }
  json c = config();
  c["num_key_value_heads"] = 2;  // qkv_proj was written for 4 KV heads: 96 rows, not 64
  std::ofstream(dir_ / "config.json") << c.dump();
  write_weights([](json h) { return h; });
  try {
    test::load_decoder_folder(dir_);
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(
        std::string(e.what()).find("qkv_proj.weight' has shape [96 x 32], expected [64 x 32]"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace attnscope
