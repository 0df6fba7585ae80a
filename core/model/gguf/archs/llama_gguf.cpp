// llama (Llama 2/3/3.1/3.2, TinyLlama, SmolLM, and Mistral, whose GGUFs are llama too): Hugging
// Face's LlamaForCausalLM. Optional biases as the file holds them (llama.cpp's
// TENSOR_NOT_REQUIRED bq/bo/ffn_*_b); llama 3's rope_scaling arrives as the rope_freqs tensor,
// each frequency divided by its factor (ggml_rope_ext's freq_factors). The q and k rows the
// converter permuted are put back by gguf_weights.cpp (permuted_qk in gguf_archs.cpp).
#include "core/model/gguf/gguf_archs.h"

namespace attnscope {

DecoderSpec gguf_llama_spec(const GgufMetadata& m) {
  const GgufFile& f = m.file();
  DecoderSpec s = gguf_common_spec(m, "llama");
  s.qkv_bias = f.tensor("blk.0.attn_q.bias") != nullptr;
  s.o_bias = f.tensor("blk.0.attn_output.bias") != nullptr;
  s.mlp_bias = f.tensor("blk.0.ffn_up.bias") != nullptr;
  // convert_hf_to_gguf.py's permute interleaves whole heads: only full rotary undoes into HF's.
  if (s.rope.rotary_dims() != s.head_dim)
    m.fail("a llama model rotating " + std::to_string(s.rope.rotary_dims()) + " of " +
           std::to_string(s.head_dim) + " dimensions per head is not supported");
  const std::vector<float> factors =
      gguf_float_vector(f, "rope_freqs.weight", s.rope.rotary_dims() / 2);
  for (std::size_t i = 0; i < factors.size(); ++i) {
    if (!(factors[i] > 0)) m.fail("tensor 'rope_freqs.weight' holds a factor <= 0");
    s.rope.inv_freq[i] = static_cast<float>(static_cast<double>(s.rope.inv_freq[i]) / factors[i]);
  }
  s.rope_local = s.rope;
  return s;
}

}  // namespace attnscope
