// Fuzz target: config.json -> the model description (family, listing note, the gpt2 (decoder) /
// bert loaders' dimensions, and every decoder family's DecoderSpec). The folder also holds the tiny
// fixture model's weights, so a config that parses goes on to the shape checks against real
// tensors.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "core/model/bert/bert_network.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;

namespace {
fs::path folder_for(const char* family) {
  const fs::path dir = attnscope::fuzz::scratch_dir() / family;
  fs::create_directories(dir);
  const fs::path weights = dir / "model.safetensors";
  std::error_code ec;
  if (!fs::exists(weights, ec))
    fs::create_symlink(
        fs::path(ATTNSCOPE_FIXTURES) /
            (std::string(family) == "gpt2" ? "gpt2-tiny-f32" : "bert-tiny-uncased-f32") /
            "model.safetensors",
        weights, ec);
  return dir;
}

// Bounds (issue 23): a real config.json is a few kB and a few levels deep. Larger or deeper
// inputs spend the fuzzer's time on the JSON library (unit tests check the readers' own limits
// with generated files), so they are skipped.
constexpr std::size_t kMaxConfigBytes = 256 << 10;
constexpr int kMaxConfigDepth = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnscope;
  static const fs::path gpt2 = folder_for("gpt2"), bert = folder_for("bert");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (size > kMaxConfigBytes || attnscope::fuzz::json_nesting_depth(text) > kMaxConfigDepth)
    return -1;
  for (const fs::path& folder : {gpt2, bert}) {
    fuzz::write_file(folder / "config.json", text);
    try {
      const nlohmann::json config = read_model_config(folder);
      (void)model_family(config);
      (void)model_type_name(config);
      (void)find_weights(folder);
    } catch (const ModelError&) {
    }
    (void)inspect_model_folder(folder);  // never throws
    if (folder == gpt2) {
      // Every family of the registry reads the same config.json into its DecoderSpec,
      // EncoderSpec or Seq2SeqSpec (once per input).
      try {
        const nlohmann::json config = nlohmann::json::parse(text);
        for (const HfFamily& family : hf_families()) {
          try {
            if (family.decoder_spec) (void)family.decoder_spec(config, folder / "config.json");
            if (family.encoder_spec) (void)family.encoder_spec(config, folder / "config.json");
            if (family.seq2seq_spec) (void)family.seq2seq_spec(config, folder / "config.json");
          } catch (const ModelError&) {
          }
        }
      } catch (const nlohmann::json::exception&) {
      }
    }
    try {
      if (folder == gpt2)
        (void)DecoderNetwork::load(folder,
                                   gpt2_spec(read_model_config(folder), folder / "config.json"));
      else
        (void)BertNetwork::load(folder);
    } catch (const ModelError&) {
    }
  }
  return 0;
}
