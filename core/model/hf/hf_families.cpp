#include "core/model/hf/hf_families.h"

#include "core/model/bert/bert_model.h"
#include "core/model/decoder/decoder_model.h"
#include "core/model/seq2seq/seq2seq_model.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// An encoder family: its config.json mapping, then the one encoder network.
template <EncoderSpec (*Spec)(const nlohmann::json&, const std::filesystem::path&)>
std::shared_ptr<const Model> encoder(const std::filesystem::path& folder,
                                     const nlohmann::json& config, const ProgressFn& progress) {
  return load_bert_model(folder, Spec(config, folder / "config.json"), progress);
}
// A decoder family: its config.json mapping, then the one decoder network.
template <DecoderSpec (*Spec)(const nlohmann::json&, const std::filesystem::path&)>
std::shared_ptr<const Model> decoder(const std::filesystem::path& folder,
                                     const nlohmann::json& config, const ProgressFn& progress) {
  return load_decoder_model(folder, Spec(config, folder / "config.json"), progress);
}

// An encoder–decoder family: its config.json mapping, then the one encoder–decoder network.
template <Seq2SeqSpec (*Spec)(const nlohmann::json&, const std::filesystem::path&)>
std::shared_ptr<const Model> seq2seq(const std::filesystem::path& folder,
                                     const nlohmann::json& config, const ProgressFn& progress) {
  return load_seq2seq_model(folder, Spec(config, folder / "config.json"), progress);
}

}  // namespace

const std::vector<HfFamily>& hf_families() {
  static const std::vector<HfFamily> families = {
      // GPT-2's wpe and BERT's position_embeddings: one learned vector per position.
      {"gpt2", "GPT2", decoder<gpt2_spec>, gpt2_spec, PositionScheme::kLearned},
      {"bert", "Bert", encoder<bert_encoder_spec>, nullptr, PositionScheme::kLearned,
       bert_encoder_spec},
      // The other decoders' DecoderSpec carries a RopeSpec: the decoder network rotates q and k.
      {"llama", "Llama", decoder<llama_spec>, llama_spec, PositionScheme::kRotary},
      {"mistral", "Mistral", decoder<mistral_spec>, mistral_spec, PositionScheme::kRotary},
      {"qwen2", "Qwen2", decoder<qwen2_spec>, qwen2_spec, PositionScheme::kRotary},
      {"qwen3", "Qwen3", decoder<qwen3_spec>, qwen3_spec, PositionScheme::kRotary},
      {"gemma2", "Gemma2", decoder<gemma2_spec>, gemma2_spec, PositionScheme::kRotary},
      {"gemma3_text", "Gemma3ForCausalLM", decoder<gemma3_spec>, gemma3_spec,
       PositionScheme::kRotary},
      // Gemma 3 4B and larger as released: the text model of Gemma3ForConditionalGeneration.
      {"gemma3", "Gemma3ForConditionalGeneration", decoder<gemma3_multimodal_spec>,
       gemma3_multimodal_spec, PositionScheme::kRotary},
      {"smollm3", "SmolLM3", decoder<smollm3_spec>, smollm3_spec, PositionScheme::kRotary},
      {"olmo2", "Olmo2", decoder<olmo2_spec>, olmo2_spec, PositionScheme::kRotary},
      {"gpt_neox", "GPTNeoX", decoder<gpt_neox_spec>, gpt_neox_spec, PositionScheme::kRotary},
      {"phi3", "Phi3", decoder<phi3_spec>, phi3_spec, PositionScheme::kRotary},
      // Encoders after BERT: RoBERTa's and XLM-R's positions start after padding_idx.
      {"roberta", "Roberta", encoder<roberta_encoder_spec>, nullptr, PositionScheme::kLearned,
       roberta_encoder_spec},
      {"xlm-roberta", "XLMRoberta", encoder<xlm_roberta_encoder_spec>, nullptr,
       PositionScheme::kLearned, xlm_roberta_encoder_spec},
      {"distilbert", "DistilBert", encoder<distilbert_encoder_spec>, nullptr,
       PositionScheme::kLearned, distilbert_encoder_spec},
      // Encoder–decoders (cross-attention): BART's learned positions, Marian's sinusoids, T5's
      // relative position bias.
      {"bart", "Bart", seq2seq<bart_spec>, nullptr, PositionScheme::kLearned, nullptr, bart_spec},
      {"marian", "Marian", seq2seq<marian_spec>, nullptr, PositionScheme::kUnknown, nullptr,
       marian_spec},
      {"t5", "T5", seq2seq<t5_spec>, nullptr, PositionScheme::kUnknown, nullptr, t5_spec},
  };
  return families;
}

std::string hf_family_names() {
  std::string names;
  for (const HfFamily& f : hf_families()) {
    if (!names.empty()) names += ", ";
    names += f.model_type;
  }
  return names;
}

const HfFamily* find_hf_family(const nlohmann::json& config) {
  const auto type = config.find("model_type");
  if (type != config.end() && type->is_string()) {
    for (const HfFamily& f : hf_families())
      if (f.model_type == type->get<std::string>()) return &f;
    return nullptr;
  }
  // Old configs may lack model_type; their architecture class names say the family.
  const auto archs = config.find("architectures");
  if (archs != config.end() && archs->is_array()) {
    for (const nlohmann::json& a : *archs) {
      if (!a.is_string()) continue;
      for (const HfFamily& f : hf_families())
        if (a.get<std::string>().rfind(f.architecture_prefix, 0) == 0) return &f;
    }
  }
  return nullptr;
}

PositionScheme position_scheme_of(const std::string& kind) {
  for (const HfFamily& f : hf_families())
    if (f.model_type == kind) return f.positions;
  return PositionScheme::kUnknown;
}

EncoderSpec encoder_spec_of(const nlohmann::json& config, const std::filesystem::path& where) {
  const HfFamily* family = find_hf_family(config);
  if (!family && !config.contains("model_type") && !config.contains("architectures"))
    return bert_encoder_spec(config, where);
  if (!family || !family->encoder_spec) {
    std::string known;
    for (const HfFamily& f : hf_families())
      if (f.encoder_spec) known += (known.empty() ? "" : ", ") + f.model_type;
    const auto type = config.find("model_type");
    throw ModelError(where.string() + ": expected an encoder model_type (" + known + "), found " +
                     (type == config.end() ? std::string("none") : type->dump()));
  }
  return family->encoder_spec(config, where);
}

DecoderSpec decoder_spec_of(const nlohmann::json& config, const std::filesystem::path& where) {
  const HfFamily* family = find_hf_family(config);
  if (!family || !family->decoder_spec) {
    std::string known;
    for (const HfFamily& f : hf_families())
      if (f.decoder_spec) known += (known.empty() ? "" : ", ") + f.model_type;
    const auto type = config.find("model_type");
    throw ModelError(where.string() + ": expected a decoder model_type (" + known + "), found " +
                     (type == config.end() ? std::string("none") : type->dump()));
  }
  return family->decoder_spec(config, where);
}

}  // namespace attnscope
