#pragma once
// The model families attnscope opens from Hugging Face folders, by config.json's model_type: one
// line each in hf_families.cpp. A decoder family (GPT-2 among them) is a DecoderSpec mapping
// (core/model/decoder/families/*.cpp), an encoder family (BERT, RoBERTa, XLM-R, DistilBERT) an
// EncoderSpec mapping (core/model/bert/families/*.cpp), an encoder–decoder (BART, Marian, T5) a
// Seq2SeqSpec mapping (core/model/seq2seq/families/*.cpp).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/bert/encoder_spec.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/model.h"
#include "core/model/seq2seq/seq2seq_spec.h"

namespace attnscope {

using HfLoader = std::shared_ptr<const Model> (*)(const std::filesystem::path& folder,
                                                  const nlohmann::json& config,
                                                  const ProgressFn& progress);

using DecoderSpecFn = DecoderSpec (*)(const nlohmann::json& config,
                                      const std::filesystem::path& where);
using EncoderSpecFn = EncoderSpec (*)(const nlohmann::json& config,
                                      const std::filesystem::path& where);
using Seq2SeqSpecFn = Seq2SeqSpec (*)(const nlohmann::json& config,
                                      const std::filesystem::path& where);

// How a family tells the attention where each token is.
enum class PositionScheme {
  kUnknown,  // not a family of this registry (a stored trace of another kind, the lesson model)
  kLearned,  // a learned vector per absolute position added to the input (GPT-2: wpe, BERT)
  kRotary,   // RoPE: q and k rotated by an angle that grows with the position (the decoders)
};

struct HfFamily {
  std::string model_type;           // config.json's model_type, also ModelInfo::kind
  std::string architecture_prefix;  // old configs without model_type: "GPT2LMHeadModel" -> gpt2
  HfLoader load;
  DecoderSpecFn decoder_spec = nullptr;  // a decoder family's config.json mapping (else null)
  PositionScheme positions = PositionScheme::kUnknown;
  EncoderSpecFn encoder_spec = nullptr;  // an encoder family's config.json mapping (else null)
  Seq2SeqSpecFn seq2seq_spec = nullptr;  // an encoder–decoder's config.json mapping (else null)
};

const std::vector<HfFamily>& hf_families();
// "gpt2, bert, llama, …": every family's model_type, for messages that list what opens.
std::string hf_family_names();
// The family of a config (model_type, else its architectures), or nullptr.
const HfFamily* find_hf_family(const nlohmann::json& config);
// The position scheme of the family whose model_type is `kind` (ModelInfo::kind); kUnknown when
// no family has it.
PositionScheme position_scheme_of(const std::string& kind);

// The EncoderSpec of an encoder family's config; BERT's for a config that names no family (neither
// model_type nor architectures); throws ModelError for another family's config.
EncoderSpec encoder_spec_of(const nlohmann::json& config, const std::filesystem::path& where);

// The DecoderSpec of a decoder family's config (`where` names config.json in errors); throws
// ModelError when the config is not one of the decoder families.
DecoderSpec decoder_spec_of(const nlohmann::json& config, const std::filesystem::path& where);

}  // namespace attnscope
