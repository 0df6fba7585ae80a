#pragma once
// A decoder fixture folder loaded as a DecoderNetwork, its family found from config.json's
// model_type through the same registry the app uses (core/model/hf/hf_families.h).
#include <filesystem>

#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"

namespace attnscope::test {

inline DecoderSpec decoder_spec_of_folder(const std::filesystem::path& folder) {
  return decoder_spec_of(read_model_config(folder), folder / "config.json");
}

inline DecoderNetwork load_decoder_folder(const std::filesystem::path& folder) {
  return DecoderNetwork::load(folder, decoder_spec_of_folder(folder));
}

}  // namespace attnscope::test
