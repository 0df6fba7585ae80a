// gemma3 (Gemma 3's text model, Hugging Face's gemma3_text): Gemma 2's layers with RMSNorm of q
// and k (stored 1 + w like every Gemma norm) instead of the attention softcap; of each 6 layers
// the first 5 slide over attention.sliding_window keys and rotate with base 10000 unscaled, the
// 6th attends globally with rope.freq_base and rope.scaling (llama.cpp's gemma3 hparams:
// set_swa_pattern(6), rope_freq_base_train_swa 10000). No sliding window in the file: none.
#include "core/model/gguf/gguf_archs.h"

namespace attnscope {

DecoderSpec gguf_gemma3_spec(const GgufMetadata& m) {
  DecoderSpec s = gguf_common_spec(m, "gemma3_text");
  gguf_gemma_common(m, s);
  s.qk_norm = true;
  s.final_softcap = static_cast<float>(m.real("final_logit_softcapping", 0.0));
  const int window = m.has("attention.sliding_window")
                         ? static_cast<int>(m.file().get_int(m.key("attention.sliding_window")))
                         : 0;
  if (window < 0) m.fail("'" + m.key("attention.sliding_window") + "' is negative");
  s.rope_local = rope_spec(s.rope.rotary_dims(), 10000.0, nlohmann::json(), m.file().path());
  if (window > 0) {
    for (int i = 0; i < s.layers; ++i) {
      DecoderLayerSpec& l = s.layer[static_cast<std::size_t>(i)];
      l.window = i % 6 < 5 ? window : 0;
      l.local_rope = l.window > 0;
    }
  }
  return s;
}

}  // namespace attnscope
