// The registration list of GGUF architectures and what they share: llama.cpp's metadata keys
// (src/llama-arch.cpp's LLM_KV names, read as src/llama-model.cpp's load_hparams reads them) onto a
// DecoderSpec.
#include "core/model/gguf/gguf_archs.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/util/error.h"

namespace attnscope {

const std::vector<GgufArchitecture>& gguf_architectures() {
  // One line per architecture (its spec in archs/<name>_gguf.cpp).
  static const std::vector<GgufArchitecture> all = {
      {"llama", gguf_llama_spec, /*permuted_qk=*/true},
      {"qwen2", gguf_qwen2_spec},
      {"qwen3", gguf_qwen3_spec},
      {"gemma2", gguf_gemma2_spec},
      {"gemma3", gguf_gemma3_spec},
      {"phi3", gguf_phi3_spec},
      {"gpt2", gguf_gpt2_spec},
  };
  return all;
}

const GgufArchitecture* find_gguf_architecture(const std::string& name) {
  for (const GgufArchitecture& a : gguf_architectures())
    if (a.name == name) return &a;
  return nullptr;
}

std::string gguf_architecture_names() {
  std::string names;
  for (const GgufArchitecture& a : gguf_architectures())
    names += (names.empty() ? "" : ", ") + a.name;
  return names;
}

GgufMetadata::GgufMetadata(const GgufFile& file)
    : file_(file), arch_(file.get_string("general.architecture")) {}

void GgufMetadata::fail(const std::string& what) const {
  throw ModelError(file_.path().string() + ": " + what);
}

int GgufMetadata::count(const std::string& name, std::int64_t fallback, std::int64_t limit) const {
  if (!has(name) && fallback < 0) fail("the metadata key '" + key(name) + "' is missing");
  const std::int64_t v = file_.get_int(key(name), fallback);
  if (v < 1 || v > limit)
    fail("'" + key(name) + "' is " + std::to_string(v) + ", expected 1 to " +
         std::to_string(limit));
  return static_cast<int>(v);
}

double GgufMetadata::real(const std::string& name, double fallback) const {
  if (!has(name) && std::isnan(fallback)) fail("the metadata key '" + key(name) + "' is missing");
  const double v = file_.get_float(key(name), fallback);
  if (!std::isfinite(v)) fail("'" + key(name) + "' is not a finite number");
  return v;
}

std::vector<float> gguf_float_vector(const GgufFile& file, const std::string& name, int n) {
  const GgufTensor* t = file.tensor(name);
  if (!t) return {};
  const std::string where = file.path().string() + ": tensor '" + name + "' ";
  if (t->elements() != static_cast<std::uint64_t>(n))
    throw ModelError(where + "has " + std::to_string(t->elements()) + " values, expected " +
                     std::to_string(n));
  const std::optional<DType> dtype = dtype_of_ggml_type(t->ggml_type);
  if (!dtype || dtype_is_quantized(*dtype))
    throw ModelError(where + "has type " + ggml_type_name(t->ggml_type) +
                     ", expected F32, F16 or BF16");
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] = load_as_float(t->data, *dtype, static_cast<std::size_t>(i));
    if (!std::isfinite(v[static_cast<std::size_t>(i)]))
      throw ModelError(where + "contains NaN or infinite values (the first at " +
                       std::to_string(i) + ")");
  }
  return v;
}

DecoderSpec gguf_common_spec(const GgufMetadata& m, const std::string& kind) {
  const GgufFile& f = m.file();
  DecoderSpec s;
  s.kind = kind;
  // Bounds far beyond any released model, so a hostile count fails here, not in an allocation.
  s.layers = m.count("block_count", -1, 4096);
  s.hidden = m.count("embedding_length", -1, 1 << 17);
  s.ff = m.count("feed_forward_length", -1, 1 << 20);
  s.heads = m.count("attention.head_count", -1, 4096);
  s.kv_heads = m.count("attention.head_count_kv", s.heads, 4096);
  if (s.heads % s.kv_heads != 0)
    m.fail("the head count (" + std::to_string(s.heads) +
           ") is not a multiple of the KV head count (" + std::to_string(s.kv_heads) + ")");
  // key_length when given (Gemma, Qwen3), else hidden / heads as llama.cpp's n_embd_head_k.
  const std::int64_t per_head = s.hidden % s.heads == 0 ? s.hidden / s.heads : -1;
  s.head_dim = m.count("attention.key_length", per_head, 1 << 16);
  if (m.count("attention.value_length", s.head_dim, 1 << 16) != s.head_dim)
    m.fail("'" + m.key("attention.value_length") + "' differs from the key length " +
           std::to_string(s.head_dim) + "; attnscope's attention has one head size");
  s.max_positions = m.count("context_length", -1, 1 << 24);
  const GgufTensor* embed = f.tensor("token_embd.weight");
  if (!embed) m.fail("required tensor 'token_embd.weight' is missing");
  if (embed->dims.size() != 2 || embed->dims[0] != static_cast<std::uint64_t>(s.hidden) ||
      embed->dims[1] < 1 || embed->dims[1] > static_cast<std::uint64_t>(1 << 24))
    m.fail("tensor 'token_embd.weight' is not [vocab x " + std::to_string(s.hidden) + "]");
  s.vocab = static_cast<int>(embed->dims[1]);
  s.norm_eps = static_cast<float>(
      m.has("attention.layer_norm_rms_epsilon")
          ? m.real("attention.layer_norm_rms_epsilon", std::numeric_limits<double>::quiet_NaN())
          : 1e-5);
  s.attention_scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  // RoPE: freq_base over rope.dimension_count dimensions of each head, with llama.cpp's
  // rope.scaling.type "linear" (freq_scale = 1 / factor) or none; llama 3's scaling comes as the
  // rope_freqs tensor (archs/llama_gguf.cpp), Phi-3's LongRoPE as rope_factors_long/short.
  const int rotary = m.count("rope.dimension_count", s.head_dim, s.head_dim);
  const double theta = m.real("rope.freq_base", 10000.0);
  std::string type = f.get_string(m.key("rope.scaling.type"), "none");
  double factor = m.real("rope.scaling.factor", 0.0);
  if (m.has("rope.scale_linear")) {  // the key before rope.scaling.*
    factor = m.real("rope.scale_linear", 1.0);
    type = "linear";
  }
  nlohmann::json scaling;
  if (type == "linear" && factor != 0.0 && factor != 1.0) {
    if (!(factor > 0)) m.fail("'" + m.key("rope.scaling.factor") + "' must be > 0");
    scaling = {{"type", "linear"}, {"factor", factor}};
  } else if (type != "none" && type != "linear" && kind != "phi3") {
    m.fail("rope scaling '" + type +
           "' is not supported (attnscope reads GGUF rope scaling none and linear, and llama 3's "
           "rope_freqs)");
  }
  s.rope = rope_spec(rotary, theta, scaling, f.path());
  s.rope_local = s.rope;
  s.layer.assign(static_cast<std::size_t>(s.layers), DecoderLayerSpec{});
  s.tied_embeddings = f.tensor("output.weight") == nullptr;
  s.bos_id = static_cast<int>(f.get_int("tokenizer.ggml.bos_token_id", -1));
  for (const char* k : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                        "tokenizer.ggml.eom_token_id"}) {
    const std::int64_t id = f.get_int(k, -1);
    if (id >= 0 && id < s.vocab) s.eos_ids.push_back(static_cast<int>(id));
  }
  if (s.bos_id >= s.vocab) s.bos_id = -1;
  return s;
}

}  // namespace attnscope
