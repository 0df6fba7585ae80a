// Gemma 3 as Google ships 4B and larger (model_type "gemma3", Gemma3ForConditionalGeneration):
// the config Google released, whose text_config names five keys and leaves the rest to
// Gemma3TextConfig's defaults; the text model found under either tensor layout; the vision tower
// ignored and the listing saying so. The fixture's golden, KV cache, CLI, OpenGL, probe and
// intervention tests come from its row in tests/common/decoder_fixture_table.h.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/util/error.h"
#include "tests/common/golden.h"
#include "tests/common/safetensors_file.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fixture(const std::string& name) {
  return fs::path(ATTNSCOPE_FIXTURES) / name;
}

// google/gemma-3-4b-it's config.json as released (transformers 4.50): text_config holds only the
// sizes that differ from Gemma3TextConfig's defaults.
json gemma3_4b_it_config() {
  return json::parse(R"({
    "architectures": ["Gemma3ForConditionalGeneration"],
    "boi_token_index": 255999,
    "eoi_token_index": 256000,
    "eos_token_id": [1, 106],
    "image_token_index": 262144,
    "initializer_range": 0.02,
    "mm_tokens_per_image": 256,
    "model_type": "gemma3",
    "text_config": {
      "hidden_size": 2560,
      "intermediate_size": 10240,
      "model_type": "gemma3_text",
      "num_hidden_layers": 34,
      "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
      "sliding_window": 1024
    },
    "torch_dtype": "bfloat16",
    "transformers_version": "4.50.0.dev0",
    "vision_config": {
      "hidden_size": 1152,
      "image_size": 896,
      "intermediate_size": 4304,
      "model_type": "siglip_vision_model",
      "num_attention_heads": 16,
      "num_hidden_layers": 27,
      "patch_size": 14,
      "vision_use_head": false
    }
  })");
}

// The DecoderSpec of gemma-3-4b's text model, whichever way its config reached us.
void expect_gemma3_4b_text_model(const DecoderSpec& s) {
  EXPECT_EQ(s.layers, 34);
  EXPECT_EQ(s.hidden, 2560);
  EXPECT_EQ(s.ff, 10240);
  EXPECT_EQ(s.heads, 8);
  EXPECT_EQ(s.kv_heads, 4);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.vocab, 262208);
  EXPECT_EQ(s.max_positions, 131072);
  EXPECT_FLOAT_EQ(s.norm_eps, 1e-6f);
  EXPECT_EQ(s.activation, MlpActivation::kGeluTanh);
  EXPECT_FLOAT_EQ(s.attention_scale, 1.0f / 16);  // query_pre_attn_scalar 256
  EXPECT_TRUE(s.qk_norm);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(s.final_softcap, 0.0f);
  ASSERT_EQ(s.layer.size(), 34u);
  for (int i = 0; i < 34; ++i) {
    const bool global = (i + 1) % 6 == 0;  // sliding_window_pattern 6: layers 5, 11, …, 29
    EXPECT_EQ(s.layer[i].window, global ? 0 : 1024) << i;
    EXPECT_EQ(s.layer[i].local_rope, !global) << i;
  }
  // Global layers: rope_theta 1e6 with linear factor 8; sliding ones: 1e4, unscaled.
  ASSERT_EQ(s.rope.inv_freq.size(), 128u);
  ASSERT_EQ(s.rope_local.inv_freq.size(), 128u);
  EXPECT_NEAR(s.rope.inv_freq[0], 1.0 / 8, 1e-9);
  EXPECT_NEAR(s.rope.inv_freq[1], std::pow(1e6, -2.0 / 256) / 8, 1e-7);
  EXPECT_NEAR(s.rope.inv_freq[127], std::pow(1e6, -254.0 / 256) / 8, 1e-12);
  EXPECT_NEAR(s.rope_local.inv_freq[0], 1.0, 1e-9);
  EXPECT_NEAR(s.rope_local.inv_freq[1], std::pow(1e4, -2.0 / 256), 1e-7);
}

TEST(Gemma3Multimodal, ReleasedSparseConfigTakesGemma3TextConfigDefaults) {
  const json config = gemma3_4b_it_config();
  const HfFamily* family = find_hf_family(config);
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->model_type, "gemma3");
  EXPECT_EQ(position_scheme_of("gemma3"), PositionScheme::kRotary);
  const DecoderSpec s = decoder_spec_of(config, "config.json");
  EXPECT_EQ(s.kind, "gemma3");
  expect_gemma3_4b_text_model(s);
  // bos from text_config's default, eos from the top level (GenerationConfig.from_model_config).
  EXPECT_EQ(s.bos_id, 2);
  EXPECT_EQ(s.eos_ids, (std::vector<int>{1, 106}));
  ASSERT_EQ(s.tensor_layouts.size(), 2u);
  EXPECT_EQ(s.tensor_layouts[0].model, "language_model.model.");
  EXPECT_EQ(s.tensor_layouts[1].model, "model.language_model.");
}

// An old config without model_type is found by its architecture; the same sparse keys as a
// gemma3_text config take the same defaults.
TEST(Gemma3Multimodal, ArchitectureAndSparseGemma3TextConfig) {
  json config = gemma3_4b_it_config();
  config.erase("model_type");
  const HfFamily* family = find_hf_family(config);
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->model_type, "gemma3");

  const json text = gemma3_4b_it_config()["text_config"];
  const DecoderSpec s = decoder_spec_of(text, "config.json");
  EXPECT_EQ(s.kind, "gemma3_text");
  expect_gemma3_4b_text_model(s);
  EXPECT_EQ(s.bos_id, 2);
  EXPECT_EQ(s.eos_ids, (std::vector<int>{1}));
  ASSERT_EQ(s.tensor_layouts.size(), 1u);
  EXPECT_EQ(s.tensor_layouts[0].model, "model.");
}

TEST(Gemma3Multimodal, TokenIdsTopLevelFirstThenTextConfig) {
  json config = gemma3_4b_it_config();
  config.erase("eos_token_id");
  config["text_config"]["eos_token_id"] = 106;
  config["text_config"]["bos_token_id"] = 7;
  DecoderSpec s = decoder_spec_of(config, "config.json");
  EXPECT_EQ(s.bos_id, 7);
  EXPECT_EQ(s.eos_ids, (std::vector<int>{106}));
  config["bos_token_id"] = 2;
  config["eos_token_id"] = nullptr;  // unset: the text config's
  s = decoder_spec_of(config, "config.json");
  EXPECT_EQ(s.bos_id, 2);
  EXPECT_EQ(s.eos_ids, (std::vector<int>{106}));
  // No text_config at all: Gemma3TextConfig() (Gemma3Config's rule), 26 layers.
  config.erase("text_config");
  EXPECT_EQ(decoder_spec_of(config, "config.json").layers, 26);
  config["text_config"] = "gemma3_text";
  EXPECT_THROW(decoder_spec_of(config, "config.json"), ModelError);
}

// transformers 5 saves one rope per layer type in rope_parameters instead of rope_theta,
// rope_scaling and rope_local_base_freq: the same rotations.
TEST(Gemma3Multimodal, Transformers5RopeParametersPerLayerType) {
  json config = gemma3_4b_it_config();
  json& text = config["text_config"];
  text.erase("rope_scaling");
  text["rope_parameters"] = {
      {"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1000000.0}}},
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
  expect_gemma3_4b_text_model(decoder_spec_of(config, "config.json"));
}

// A copy of the fixture with its text model's tensors under `text_prefix` (the released
// "language_model.model.", or transformers 5's "model.language_model."), every byte of data kept;
// with `lm_head` named, an untied output matrix of that name (the embedding's values again) and
// tie_word_embeddings false in text_config.
fs::path gemma3_mm_copy(const std::string& text_prefix, const std::string& lm_head = "") {
  const fs::path from = fixture("gemma3-mm-tiny");
  static int copies = 0;
  const fs::path dir =
      fs::temp_directory_path() /
      ("attnscope_gemma3_mm_" + std::to_string(::getpid()) + "_" + std::to_string(copies++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* file : {"tokenizer.json", "tokenizer_config.json"})
    fs::create_symlink(from / file, dir / file);
  json config = read_model_config(from);
  if (!lm_head.empty()) config["text_config"]["tie_word_embeddings"] = false;
  std::ofstream(dir / "config.json") << config.dump(2);
  test::SafetensorsFile file = test::read_safetensors_file(from / "model.safetensors");
  std::string& data = file.data;
  json renamed = json::object();
  const std::string released = "language_model.model.";
  const json& tensors = file.header;
  for (const auto& [name, t] : tensors.items()) {
    const bool text = name.rfind(released, 0) == 0;
    renamed[text ? text_prefix + name.substr(released.size()) : name] = t;
  }
  if (!lm_head.empty()) {
    json embed = tensors.at(released + "embed_tokens.weight");
    const std::size_t begin = embed["data_offsets"][0], end = embed["data_offsets"][1];
    embed["data_offsets"] = {data.size(), data.size() + (end - begin)};
    data += data.substr(begin, end - begin);
    renamed[lm_head] = embed;
  }
  test::write_safetensors_file(dir / "model.safetensors", renamed, data);
  return dir;
}

// transformers 5's layout, and untied output matrices under each layout's name
// (language_model.lm_head.weight as released, lm_head.weight from transformers 5), give the
// fixture's very attention and predictions.
TEST(Gemma3Multimodal, BothTensorLayoutsOpenTheSameTextModel) {
  if (!fs::exists(fixture("gemma3-mm-tiny") / "tokenizer.json"))
    GTEST_SKIP() << "no tokenizer files (scripts/fetch_test_data.sh)";
  const auto backend = make_cpu_backend();
  const std::string text = "The bank of the river was muddy after the rain.";
  const auto released = open_model(fixture("gemma3-mm-tiny").string());
  EXPECT_EQ(released->info().kind, "gemma3");
  EXPECT_EQ(released->info().layers, 6);
  EXPECT_EQ(released->info().heads, 8);
  EXPECT_EQ(released->info().kv_heads, 4);
  const AttentionTrace want = released->run(text, *backend);
  EXPECT_NE(want.note.find("vision tower is not loaded"), std::string::npos) << want.note;
  ASSERT_EQ(want.predictions.size(), 10u);
  const std::vector<std::pair<std::string, std::string>> layouts = {
      {"model.language_model.", ""},
      {"model.language_model.", "lm_head.weight"},
      {"language_model.model.", "language_model.lm_head.weight"}};
  for (const auto& [prefix, lm_head] : layouts) {
    SCOPED_TRACE(prefix + " " + lm_head);
    const fs::path dir = gemma3_mm_copy(prefix, lm_head);
    const AttentionTrace got = open_model(dir.string())->run(text, *backend);
    ASSERT_EQ(got.tokens.size(), want.tokens.size());
    for (int l = 0; l < want.layers(); ++l)
      for (int h = 0; h < want.heads(); ++h)
        EXPECT_EQ(test::max_abs_diff(got.attention[l][h], want.attention[l][h]), 0.0)
            << l << "." << h;
    ASSERT_EQ(got.predictions.size(), want.predictions.size());
    for (std::size_t i = 0; i < want.predictions.size(); ++i) {
      EXPECT_EQ(got.predictions[i].id, want.predictions[i].id) << i;
      EXPECT_EQ(got.predictions[i].probability, want.predictions[i].probability) << i;
    }
    fs::remove_all(dir);
  }
}

// A checkpoint with neither layout names the released layout's tensor it lacks.
TEST(Gemma3Multimodal, MissingTextModelIsNamed) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnscope_gemma3_mm_none_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(fixture("gemma3-mm-tiny"), dir, fs::copy_options::recursive);
  // A model.safetensors whose only tensor is a vision one.
  test::write_safetensors_file(
      dir / "model.safetensors",
      json::parse(R"({"vision_tower.vision_model.post_layernorm.weight":{"dtype":"F32",)"
                  R"("shape":[2],"data_offsets":[0,8]}})"),
      std::string(8, '\0'));
  try {
    open_model(dir.string());
    ADD_FAILURE() << "opened a checkpoint without a text model";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("language_model.model.embed_tokens.weight"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// The listing (`attnscope models`, the GUI's model list) and the load message say the vision
// tower is not loaded (and every trace's note, shown beside it in the window); a text-only
// model's listing says nothing.
TEST(Gemma3Multimodal, ListingSaysTheVisionTowerIsIgnored) {
  const FolderInspection mm = inspect_model_folder(fixture("gemma3-mm-tiny"));
  EXPECT_EQ(mm.kind, "gemma3");
  EXPECT_NE(mm.note.find("vision tower is not loaded"), std::string::npos) << mm.note;
  const FolderInspection text = inspect_model_folder(fixture("gemma3-tiny"));
  EXPECT_EQ(text.kind, "gemma3_text");
  EXPECT_EQ(text.note, "");
  std::vector<std::string> steps;
  open_model(fixture("gemma3-mm-tiny").string(),
             [&](double, const std::string& what) { steps.push_back(what); });
  bool said = false;
  for (const std::string& s : steps)
    said |= s.find("vision tower is not loaded") != std::string::npos;
  EXPECT_TRUE(said) << "the load progress should say the vision tower is not loaded";
}

}  // namespace
}  // namespace attnscope
