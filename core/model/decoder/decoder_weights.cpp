// Reading a decoder's tensors (Hugging Face's LlamaForCausalLM naming, which every family here
// shares) as views of the memory-mapped safetensors, with the shape and dtype checks and messages.
#include <sys/mman.h>
#include <unistd.h>

#include <set>

#include "core/model/decoder/decoder_network.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? " x " : "") + std::to_string(shape[i]);
  return s + "]";
}

class DecoderTensorReader {
 public:
  explicit DecoderTensorReader(const Checkpoint& c) : c_(c) {}

  // A [rows x cols] matrix in its file dtype.
  WeightView matrix(const std::string& name, int rows, int cols) {
    const RawTensor t = require(name);
    if (t.mapped) mapped.insert(t.data);
    if (t.shape.size() != 2 || t.shape[0] != rows || t.shape[1] != cols)
      fail(name, "has shape " + shape_text(t.shape) + ", expected [" + std::to_string(rows) +
                     " x " + std::to_string(cols) + "] from config.json");
    WeightView w;
    w.data = t.data;
    w.dtype = dtype_of(name, t.dtype);
    w.rows = rows;
    w.cols = cols;
    w.owner = t.owner;
    return w;
  }
  // A vector of `n` values widened to a [1 x n] host tensor (norm weights, biases).
  Tensor vector(const std::string& name, int n) const {
    const RawTensor t = require(name);
    if (t.shape.size() != 1 || t.shape[0] != n)
      fail(name, "has shape " + shape_text(t.shape) + ", expected [" + std::to_string(n) +
                     "] from config.json");
    dtype_of(name, t.dtype);
    Matrix m = c_.matrix(name);
    if (!m.allFinite()) fail(name, "contains NaN or inf");
    return host_tensor(std::move(m));
  }
  // An optional bias: empty when `wanted` is false; required when it is.
  Tensor bias(const std::string& name, int n, bool wanted) const {
    return wanted ? vector(name, n) : Tensor{};
  }
  std::set<const void*> mapped;  // the matrices that lie in a file mapping

 private:
  RawTensor require(const std::string& name) const {
    if (!c_.has(name))
      throw ModelError(c_.file_of(name).string() + ": required tensor '" + name +
                       "' is missing (is this the right architecture?)");
    return c_.raw(name);
  }
  DType dtype_of(const std::string& name, const std::string& dtype) const {
    if (dtype == "F32") return DType::kF32;
    if (dtype == "F16") return DType::kF16;
    if (dtype == "BF16") return DType::kBF16;
    fail(name, "has dtype " + dtype + ", expected F32, F16 or BF16");
  }
  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    throw ModelError(c_.file_of(name).string() + ": tensor '" + name + "' " + what);
  }
  const Checkpoint& c_;
};

}  // namespace

std::shared_ptr<const DecoderFileWeights> read_decoder_weights(const Checkpoint& checkpoint,
                                                               const DecoderSpec& s,
                                                               const ProgressFn& progress) {
  DecoderTensorReader r(checkpoint);
  auto w = std::make_shared<DecoderFileWeights>();
  const int q_out = s.heads * s.head_dim, kv_out = s.kv_heads * s.head_dim;
  w->embed = r.matrix("model.embed_tokens.weight", s.vocab, s.hidden);
  w->dtype = w->embed.dtype;
  w->lm_head = s.tied_embeddings ? w->embed : r.matrix("lm_head.weight", s.vocab, s.hidden);
  w->final_norm = r.vector("model.norm.weight", s.hidden);
  for (int i = 0; i < s.layers; ++i) {
    if (progress) progress(static_cast<double>(i) / s.layers, "reading layer " + std::to_string(i));
    const std::string p = "model.layers." + std::to_string(i) + ".";
    DecoderLayerFileWeights l;
    l.input_norm = r.vector(p + "input_layernorm.weight", s.hidden);
    l.post_attention_norm = r.vector(p + "post_attention_layernorm.weight", s.hidden);
    if (s.sandwich_norms) {
      l.pre_mlp_norm = r.vector(p + "pre_feedforward_layernorm.weight", s.hidden);
      l.post_mlp_norm = r.vector(p + "post_feedforward_layernorm.weight", s.hidden);
    }
    if (s.qk_norm) {
      l.q_norm = r.vector(p + "self_attn.q_norm.weight", s.head_dim);
      l.k_norm = r.vector(p + "self_attn.k_norm.weight", s.head_dim);
    }
    l.q = r.matrix(p + "self_attn.q_proj.weight", q_out, s.hidden);
    l.k = r.matrix(p + "self_attn.k_proj.weight", kv_out, s.hidden);
    l.v = r.matrix(p + "self_attn.v_proj.weight", kv_out, s.hidden);
    l.o = r.matrix(p + "self_attn.o_proj.weight", s.hidden, q_out);
    l.gate = r.matrix(p + "mlp.gate_proj.weight", s.ff, s.hidden);
    l.up = r.matrix(p + "mlp.up_proj.weight", s.ff, s.hidden);
    l.down = r.matrix(p + "mlp.down_proj.weight", s.hidden, s.ff);
    l.q_bias = r.bias(p + "self_attn.q_proj.bias", q_out, s.qkv_bias);
    l.k_bias = r.bias(p + "self_attn.k_proj.bias", kv_out, s.qkv_bias);
    l.v_bias = r.bias(p + "self_attn.v_proj.bias", kv_out, s.qkv_bias);
    l.o_bias = r.bias(p + "self_attn.o_proj.bias", s.hidden, s.o_bias);
    l.gate_bias = r.bias(p + "mlp.gate_proj.bias", s.ff, s.mlp_bias);
    l.up_bias = r.bias(p + "mlp.up_proj.bias", s.ff, s.mlp_bias);
    l.down_bias = r.bias(p + "mlp.down_proj.bias", s.hidden, s.mlp_bias);
    w->layers.push_back(std::move(l));
  }
  w->mapped = std::move(r.mapped);
  if (progress) progress(1.0, "weights mapped");
  return w;
}

void release_file_pages(const DecoderFileWeights& file, const WeightView& w) {
  if (!file.mapped.count(w.data)) return;  // an aligned copy on the heap: keep it
  // The whole pages inside the tensor go back to the kernel (a private read-only mapping: they are
  // read from the file again if ever touched). Pages shared with a neighbouring tensor stay.
  static const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(w.data);
  const std::uintptr_t end =
      begin + static_cast<std::uintptr_t>(w.rows) * w.cols * dtype_bytes(w.dtype);
  const std::uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace attnscope
