#pragma once
// The architectures attnscope reads from GGUF files (general.architecture), each mapping
// llama.cpp's metadata keys ("llama.block_count", "llama.rope.freq_base", …) onto the DecoderSpec
// the Hugging Face family of the same model would give, so a GGUF and its Hugging Face folder run
// the same network. An architecture is one file under archs/ plus one line in gguf_archs.cpp.
// The tensor names are llama.cpp's (src/llama-arch.cpp: token_embd, blk.N.attn_q, …), read by
// gguf_weights.cpp from what the spec says the layers hold.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/model/decoder/decoder_network.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/gguf/gguf_file.h"
#include "core/model/model.h"

namespace attnscope {

// The metadata of one architecture: arch-prefixed keys ("qwen2." + "block_count") read with the
// file's typed getters, and the checks every architecture shares. Errors name the file.
class GgufMetadata {
 public:
  explicit GgufMetadata(const GgufFile& file);
  const GgufFile& file() const { return file_; }
  const std::string& arch() const { return arch_; }
  std::string key(const std::string& name) const { return arch_ + "." + name; }
  bool has(const std::string& name) const { return file_.find(key(name)) != nullptr; }
  // An arch-prefixed count in [1, limit] (absent: `fallback`, or an error when fallback < 0).
  int count(const std::string& name, std::int64_t fallback, std::int64_t limit) const;
  double real(const std::string& name, double fallback) const;
  [[noreturn]] void fail(const std::string& what) const;

 private:
  const GgufFile& file_;
  std::string arch_;
};

// What every architecture shares: sizes, RMSNorm eps, RoPE (freq_base, dimension_count,
// rope.scaling linear), 1/√head_dim, the tied output (no output.weight), BOS/EOS/EOT ids.
// `kind` is the Hugging Face model_type.
DecoderSpec gguf_common_spec(const GgufMetadata& m, const std::string& kind);

// The rows of a vector tensor (rope_freqs, rope_factors_long, …) as floats, checked to hold `n`
// finite values; empty when the tensor is absent.
std::vector<float> gguf_float_vector(const GgufFile& file, const std::string& name, int n);

struct GgufArchitecture {
  std::string name;  // general.architecture
  DecoderSpec (*spec)(const GgufMetadata& m);
  // llama.cpp's "normal" RoPE rotates pairs (2i, 2i+1): the converter permuted the rows of each
  // q and k head for it; attnscope rotates Hugging Face's pairs (i, i + d/2) and undoes that.
  bool permuted_qk = false;
};

const std::vector<GgufArchitecture>& gguf_architectures();
const GgufArchitecture* find_gguf_architecture(const std::string& name);
std::string gguf_architecture_names();  // "llama, qwen2, …"

// ---- the architectures (one file each under archs/) ---------------------------------------------
DecoderSpec gguf_llama_spec(const GgufMetadata& m);
DecoderSpec gguf_qwen2_spec(const GgufMetadata& m);
DecoderSpec gguf_qwen3_spec(const GgufMetadata& m);
DecoderSpec gguf_gemma2_spec(const GgufMetadata& m);
DecoderSpec gguf_gemma3_spec(const GgufMetadata& m);
DecoderSpec gguf_phi3_spec(const GgufMetadata& m);
DecoderSpec gguf_gpt2_spec(const GgufMetadata& m);
// What gemma2 and gemma3 share (gemma2_gguf.cpp).
void gguf_gemma_common(const GgufMetadata& m, DecoderSpec& s);

// ---- the weights and the network (gguf_weights.cpp) --------------------------------------------

// The tensors `spec` needs, as views of the file's mapping (llama's q and k un-permuted into a
// copy when `permuted_qk`). `types_used`: the types of the tensors read ("F32", "Q4_K", …).
// Throws ModelError naming the file, tensor and what is wrong (missing, shape, type, NaN).
std::shared_ptr<const DecoderFileWeights> read_gguf_weights(
    const std::shared_ptr<const GgufFile>& file, const DecoderSpec& spec, bool permuted_qk,
    const ProgressFn& progress, std::vector<std::string>* types_used);

// A GGUF file's network (no tokenizer), its name (general.name, else the file's stem) and source.
struct GgufNetwork {
  DecoderNetwork network;
  std::string name;
  ModelSource source;
  std::shared_ptr<const GgufFile> file;
};
GgufNetwork load_gguf_network(const std::filesystem::path& path, const ProgressFn& progress = {});

}  // namespace attnscope
