// phi3 (Phi-3, Phi-3.5-mini, Phi-4-mini): one attn_qkv (rows q | k | v) and one ffn_up holding
// gate | up (llama.cpp's LLM_FFN_SWIGLU splits it in halves, as Phi3MLP chunks gate_up_proj);
// rotary over rope.dimension_count dimensions; LongRoPE from the rope_factors_short/long tensors
// with rope.scaling.attn_factor (else Hugging Face's √(1 + ln s / ln original)), the long
// frequencies for a sequence longer than rope.scaling.original_context_length as Hugging Face
// chooses them. llama.cpp ignores Phi-3's sliding window (its "Phi SWA is currently disabled"), and
// so does this reading.
#include "core/model/gguf/gguf_archs.h"

namespace attnscope {

DecoderSpec gguf_phi3_spec(const GgufMetadata& m) {
  const GgufFile& f = m.file();
  DecoderSpec s = gguf_common_spec(m, "phi3");
  s.tensor_names = TensorNames::kPhi3;
  const int rotary = s.rope.rotary_dims();
  const std::vector<float> longf = gguf_float_vector(f, "rope_factors_long.weight", rotary / 2);
  const std::vector<float> shortf = gguf_float_vector(f, "rope_factors_short.weight", rotary / 2);
  if (longf.empty() != shortf.empty())
    m.fail("LongRoPE needs both rope_factors_long and rope_factors_short");
  if (longf.empty()) {
    const std::string type = f.get_string(m.key("rope.scaling.type"), "none");
    if (type != "none" && type != "linear")
      m.fail("rope scaling '" + type + "' without rope_factors_long/short is not supported");
    return s;
  }
  nlohmann::json scaling = {{"type", "longrope"}, {"long_factor", longf}, {"short_factor", shortf}};
  if (m.has("rope.scaling.attn_factor"))
    scaling["attention_factor"] = m.real("rope.scaling.attn_factor", 1.0);
  const int original = m.count("rope.scaling.original_context_length", -1, 1 << 24);
  s.rope = longrope_spec(rotary, m.real("rope.freq_base", 10000.0), scaling, s.max_positions,
                         original, f.path());
  s.rope_local = s.rope;
  return s;
}

}  // namespace attnscope
