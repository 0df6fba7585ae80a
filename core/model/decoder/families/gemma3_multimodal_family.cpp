// Gemma 3 as Google ships 4B and larger (model_type "gemma3", Gemma3ForConditionalGeneration): a
// SigLIP vision tower and a projector beside Gemma 3's text model. attnscope shows the text model
// and never reads vision_tower.* or multi_modal_projector.* (the folder listing and the load
// message say so). config.json nests a Gemma3TextConfig under "text_config" (sparse as released:
// gemma3_spec fills Gemma3TextConfig's defaults); the tensors sit under "language_model.model."
// as released, or "model.language_model." as transformers 5 saves them (modeling_gemma3.py's
// _checkpoint_conversion_mapping maps the first to the second, "language_model.lm_head" to
// "lm_head"). After configuration_gemma3.py (Gemma3Config) and modeling_gemma3.py.
#include "core/model/decoder/decoder_spec.h"
#include "core/util/error.h"

namespace attnscope {

DecoderSpec gemma3_multimodal_spec(const nlohmann::json& config,
                                   const std::filesystem::path& where) {
  // Gemma3Config: a missing text_config is Gemma3TextConfig() with every default.
  nlohmann::json text = nlohmann::json::object();
  if (const auto t = config.find("text_config"); t != config.end() && !t->is_null()) {
    if (!t->is_object())
      throw ModelError(where.string() + ": 'text_config' must be an object, found " + t->dump());
    text = *t;
  }
  DecoderSpec s = gemma3_spec(text, where);
  s.kind = "gemma3";
  // Gemma3ForConditionalGeneration.forward applies no final_logit_softcapping (Gemma3ForCausalLM
  // does); the released configs leave it null anyway.
  s.final_softcap = 0.0f;
  // GenerationConfig.from_model_config: the top level's token ids, then text_config's for those
  // the top level leaves unset (null or absent). Released: eos_token_id [1, 106] at the top.
  if (const std::vector<int> bos = config_token_ids(config, "bos_token_id", where); !bos.empty())
    s.bos_id = bos.front();
  if (std::vector<int> eos = config_token_ids(config, "eos_token_id", where); !eos.empty())
    s.eos_ids = std::move(eos);
  s.note = "Gemma 3's text model only; the vision tower is not loaded";
  s.tensor_layouts = {{"language_model.model.", "language_model.lm_head.weight"},
                      {"model.language_model.", "lm_head.weight"}};
  return s;
}

}  // namespace attnscope
