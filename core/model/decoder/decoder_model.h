#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "core/model/decoder/decoder_spec.h"
#include "core/model/model.h"
#include "core/text/tokenizer.h"

namespace attnscope {

// A decoder model from a Hugging Face folder (config.json mapped to `spec` by its family,
// safetensors in one file or shards, tokenizer.json). Throws ModelError naming the file and
// problem. `name` is the model's name in traces; empty: the folder's name.
std::shared_ptr<const Model> load_decoder_model(const std::filesystem::path& folder,
                                                DecoderSpec spec, const ProgressFn& progress,
                                                const std::string& name = "");

class DecoderNetwork;
// A decoder model on a network and tokenizer read elsewhere (a GGUF file: core/model/gguf), with
// `source` in its info and traces.
std::shared_ptr<const Model> make_decoder_model(std::string name, DecoderNetwork network,
                                                std::shared_ptr<const Tokenizer> tokenizer,
                                                ModelSource source);

}  // namespace attnscope
