// Reading a decoder's tensors as views of the memory-mapped safetensors, with the shape and dtype
// checks and messages: Hugging Face's LlamaForCausalLM naming, which the modern families share
// (Phi-3's with its fused qkv_proj and gate_up_proj), GPT-2's or GPT-NeoX's (TensorNames in
// decoder_spec.h).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>

#include "core/backend/finite_check.h"
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
    const std::size_t bad = first_non_finite_value(t.data, w.dtype, std::size_t(rows) * cols);
    if (bad != kAllFinite)
      fail(name, "contains NaN or infinite values (the first at row " + std::to_string(bad / cols) +
                     ", column " + std::to_string(bad % cols) + ")");
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

// The first of the spec's tensor layouts whose embedding the checkpoint holds (the first when none
// does: its missing tensor is then the one named).
const DecoderSpec::TensorLayout& tensor_layout(const Checkpoint& c, const DecoderSpec& s) {
  for (const DecoderSpec::TensorLayout& l : s.tensor_layouts)
    if (c.has(l.model + "embed_tokens.weight")) return l;
  return s.tensor_layouts.front();
}

// Rows [first, first + count) of an nn.Linear [out x in] matrix: a view into the same memory.
WeightView row_view(const WeightView& w, int first, int count) {
  WeightView v = w;
  v.data = static_cast<const unsigned char*>(w.data) +
           static_cast<std::size_t>(first) * dtype_row_bytes(w.dtype, w.cols);
  v.rows = count;
  return v;
}

void read_llama_named(const Checkpoint& c, DecoderTensorReader& r, const DecoderSpec& s,
                      DecoderFileWeights& w, const ProgressFn& progress) {
  if (s.tensor_names == TensorNames::kPhi3 && (!s.gated_mlp || s.qkv_bias || s.mlp_bias))
    throw ModelError(c.folder().string() +
                     ": Phi-3's tensors hold a gated MLP and no biases, not what the config asks");
  const int q_out = s.heads * s.head_dim, kv_out = s.kv_heads * s.head_dim;
  const DecoderSpec::TensorLayout& names = tensor_layout(c, s);
  const std::string& m = names.model;
  w.embed = r.matrix(m + "embed_tokens.weight", s.vocab, s.hidden);
  w.lm_head = s.tied_embeddings ? w.embed : r.matrix(names.lm_head, s.vocab, s.hidden);
  w.final_norm = r.vector(m + "norm.weight", s.hidden);
  if (s.norm == NormKind::kLayer) w.final_norm_bias = r.vector(m + "norm.bias", s.hidden);
  for (int i = 0; i < s.layers; ++i) {
    if (progress) progress(static_cast<double>(i) / s.layers, "reading layer " + std::to_string(i));
    const std::string p = m + "layers." + std::to_string(i) + ".";
    DecoderLayerFileWeights l;
    // Llama: input_layernorm, post_attention_layernorm (before the MLP). Gemma: both, then
    // pre_ and post_feedforward_layernorm. OLMo 2: post_attention_layernorm (on the attention's
    // output) and post_feedforward_layernorm only.
    if (s.pre_norms) l.input_norm = r.vector(p + "input_layernorm.weight", s.hidden);
    l.post_attention_norm = r.vector(p + "post_attention_layernorm.weight", s.hidden);
    if (s.post_norms) {
      if (s.pre_norms) l.pre_mlp_norm = r.vector(p + "pre_feedforward_layernorm.weight", s.hidden);
      l.post_mlp_norm = r.vector(p + "post_feedforward_layernorm.weight", s.hidden);
    }
    if (s.norm == NormKind::kLayer) {
      l.input_norm_bias = r.vector(p + "input_layernorm.bias", s.hidden);
      l.post_attention_norm_bias = r.vector(p + "post_attention_layernorm.bias", s.hidden);
    }
    if (s.qk_norm) {
      l.q_norm = r.vector(p + "self_attn.q_norm.weight", s.qk_norm_per_head ? s.head_dim : q_out);
      l.k_norm = r.vector(p + "self_attn.k_norm.weight", s.qk_norm_per_head ? s.head_dim : kv_out);
    }
    if (s.tensor_names == TensorNames::kPhi3) {
      // Phi-3: qkv_proj [q_out + 2·kv_out x hidden] rows q | k | v, gate_up_proj [2·ff x hidden]
      // rows gate | up (Phi3Attention's slices, Phi3MLP's chunk): row views, nothing copied.
      const WeightView qkv =
          r.matrix(p + "self_attn.qkv_proj.weight", q_out + 2 * kv_out, s.hidden);
      l.q = row_view(qkv, 0, q_out);
      l.k = row_view(qkv, q_out, kv_out);
      l.v = row_view(qkv, q_out + kv_out, kv_out);
      const WeightView gate_up = r.matrix(p + "mlp.gate_up_proj.weight", 2 * s.ff, s.hidden);
      l.gate = row_view(gate_up, 0, s.ff);
      l.up = row_view(gate_up, s.ff, s.ff);
    } else {
      l.q = r.matrix(p + "self_attn.q_proj.weight", q_out, s.hidden);
      l.k = r.matrix(p + "self_attn.k_proj.weight", kv_out, s.hidden);
      l.v = r.matrix(p + "self_attn.v_proj.weight", kv_out, s.hidden);
      if (s.gated_mlp) l.gate = r.matrix(p + "mlp.gate_proj.weight", s.ff, s.hidden);
      l.up = r.matrix(p + "mlp.up_proj.weight", s.ff, s.hidden);
    }
    l.o = r.matrix(p + "self_attn.o_proj.weight", s.hidden, q_out);
    l.down = r.matrix(p + "mlp.down_proj.weight", s.hidden, s.ff);
    l.q_bias = r.bias(p + "self_attn.q_proj.bias", q_out, s.qkv_bias);
    l.k_bias = r.bias(p + "self_attn.k_proj.bias", kv_out, s.qkv_bias);
    l.v_bias = r.bias(p + "self_attn.v_proj.bias", kv_out, s.qkv_bias);
    l.o_bias = r.bias(p + "self_attn.o_proj.bias", s.hidden, s.o_bias);
    l.gate_bias = r.bias(p + "mlp.gate_proj.bias", s.ff, s.mlp_bias && s.gated_mlp);
    l.up_bias = r.bias(p + "mlp.up_proj.bias", s.ff, s.mlp_bias);
    l.down_bias = r.bias(p + "mlp.down_proj.bias", s.hidden, s.mlp_bias);
    w.layers.push_back(std::move(l));
  }
}

// GPT2LMHeadModel saves "transformer.h.0…" (and lm_head.weight, the tied wte again); GPT2Model
// saves "h.0…". The causal-mask buffers attn.bias / attn.masked_bias are never asked for. Conv1D
// stores [in x out]; c_attn is q, k and v side by side.
void read_gpt2_named(const Checkpoint& c, DecoderTensorReader& r, const DecoderSpec& s,
                     DecoderFileWeights& w, const ProgressFn& progress) {
  if (s.gated_mlp || s.norm != NormKind::kLayer || s.post_norms || s.qk_norm)
    throw ModelError(c.folder().string() +
                     ": GPT-2's tensors hold a plain MLP and LayerNorms, not what the config asks");
  const std::string t = c.has("transformer.wte.weight") ? "transformer." : "";
  const int d = s.hidden, q_out = s.heads * s.head_dim, kv_out = s.kv_heads * s.head_dim;
  const int qkv_out = q_out + 2 * kv_out;
  w.linear_out_by_in = false;
  w.embed = r.matrix(t + "wte.weight", s.vocab, d);
  if (s.positions == PositionKind::kLearned)
    w.positions = r.matrix(t + "wpe.weight", s.max_positions, d);
  w.lm_head = s.tied_embeddings ? w.embed : r.matrix("lm_head.weight", s.vocab, d);
  w.final_norm = r.vector(t + "ln_f.weight", d);
  w.final_norm_bias = r.vector(t + "ln_f.bias", d);
  for (int i = 0; i < s.layers; ++i) {
    if (progress) progress(static_cast<double>(i) / s.layers, "reading layer " + std::to_string(i));
    const std::string p = t + "h." + std::to_string(i) + ".";
    DecoderLayerFileWeights l;
    l.input_norm = r.vector(p + "ln_1.weight", d);
    l.input_norm_bias = r.vector(p + "ln_1.bias", d);
    l.post_attention_norm = r.vector(p + "ln_2.weight", d);
    l.post_attention_norm_bias = r.vector(p + "ln_2.bias", d);
    l.qkv = r.matrix(p + "attn.c_attn.weight", d, qkv_out);
    l.qkv_bias = r.bias(p + "attn.c_attn.bias", qkv_out, s.qkv_bias);
    l.o = r.matrix(p + "attn.c_proj.weight", q_out, d);
    l.o_bias = r.bias(p + "attn.c_proj.bias", d, s.o_bias);
    l.up = r.matrix(p + "mlp.c_fc.weight", d, s.ff);
    l.up_bias = r.bias(p + "mlp.c_fc.bias", s.ff, s.mlp_bias);
    l.down = r.matrix(p + "mlp.c_proj.weight", s.ff, d);
    l.down_bias = r.bias(p + "mlp.c_proj.bias", d, s.mlp_bias);
    w.layers.push_back(std::move(l));
  }
}

// GPTNeoXForCausalLM saves "gpt_neox.layers.0…" and embed_out.weight; GPTNeoXModel saves
// "layers.0…". query_key_value is nn.Linear [3·hidden x hidden] whose output rows run per head
// (q, k, v of head 0, then of head 1 …: FusedQkvLayout::kPerHead); the buffers old checkpoints
// carry (attention.bias, attention.masked_bias, attention.rotary_emb.inv_freq) are never asked for.
void read_gpt_neox_named(const Checkpoint& c, DecoderTensorReader& r, const DecoderSpec& s,
                         DecoderFileWeights& w, const ProgressFn& progress) {
  if (s.gated_mlp || s.norm != NormKind::kLayer || s.post_norms || s.qk_norm ||
      s.kv_heads != s.heads)
    throw ModelError(c.folder().string() +
                     ": GPT-NeoX's tensors hold a plain MLP, LayerNorms and multi-head attention, "
                     "not what the config asks");
  const std::string t = c.has("gpt_neox.embed_in.weight") ? "gpt_neox." : "";
  const int d = s.hidden, q_out = s.heads * s.head_dim;
  w.embed = r.matrix(t + "embed_in.weight", s.vocab, d);
  w.lm_head = s.tied_embeddings ? w.embed : r.matrix("embed_out.weight", s.vocab, d);
  w.final_norm = r.vector(t + "final_layer_norm.weight", d);
  w.final_norm_bias = r.vector(t + "final_layer_norm.bias", d);
  for (int i = 0; i < s.layers; ++i) {
    if (progress) progress(static_cast<double>(i) / s.layers, "reading layer " + std::to_string(i));
    const std::string p = t + "layers." + std::to_string(i) + ".";
    DecoderLayerFileWeights l;
    l.input_norm = r.vector(p + "input_layernorm.weight", d);
    l.input_norm_bias = r.vector(p + "input_layernorm.bias", d);
    l.post_attention_norm = r.vector(p + "post_attention_layernorm.weight", d);
    l.post_attention_norm_bias = r.vector(p + "post_attention_layernorm.bias", d);
    l.qkv = r.matrix(p + "attention.query_key_value.weight", 3 * q_out, d);
    l.qkv_bias = r.bias(p + "attention.query_key_value.bias", 3 * q_out, s.qkv_bias);
    l.o = r.matrix(p + "attention.dense.weight", d, q_out);
    l.o_bias = r.bias(p + "attention.dense.bias", d, s.o_bias);
    l.up = r.matrix(p + "mlp.dense_h_to_4h.weight", s.ff, d);
    l.up_bias = r.bias(p + "mlp.dense_h_to_4h.bias", s.ff, s.mlp_bias);
    l.down = r.matrix(p + "mlp.dense_4h_to_h.weight", d, s.ff);
    l.down_bias = r.bias(p + "mlp.dense_4h_to_h.bias", d, s.mlp_bias);
    w.layers.push_back(std::move(l));
  }
}

}  // namespace

std::shared_ptr<const DecoderFileWeights> read_decoder_weights(const Checkpoint& checkpoint,
                                                               const DecoderSpec& s,
                                                               const ProgressFn& progress) {
  DecoderTensorReader r(checkpoint);
  auto w = std::make_shared<DecoderFileWeights>();
  if (s.positions == PositionKind::kLearned && s.tensor_names != TensorNames::kGpt2)
    throw ModelError(checkpoint.folder().string() + ": a " + s.kind +
                     " model with learned positions: only GPT-2's tensor names carry them");
  if (s.tensor_names == TensorNames::kGpt2)
    read_gpt2_named(checkpoint, r, s, *w, progress);
  else if (s.tensor_names == TensorNames::kGptNeox)
    read_gpt_neox_named(checkpoint, r, s, *w, progress);
  else
    read_llama_named(checkpoint, r, s, *w, progress);
  w->dtype = w->embed.dtype;
  w->mapped = std::move(r.mapped);
  if (progress) progress(1.0, "weights mapped");
  return w;
}

void release_file_pages(const DecoderFileWeights& file, const WeightView& w) {
  if (!file.mapped.count(w.data)) return;  // an aligned copy on the heap: keep it
  // Quantised weights stay in the mapping: the CPU backend's GEMM dequantises them from there
  // on every product (packed_gemm.h), so their pages must stay.
  if (dtype_is_quantized(w.dtype)) return;
  // The whole pages inside the tensor go back to the kernel (a private read-only mapping: they are
  // read from the file again if ever touched). Pages shared with a neighbouring tensor stay.
  static const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(w.data);
  const std::uintptr_t end =
      begin + static_cast<std::uintptr_t>(w.rows) * dtype_row_bytes(w.dtype, w.cols);
  const std::uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace attnscope
