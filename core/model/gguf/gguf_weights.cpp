// A GGUF model's tensors as the network's weights: llama.cpp's names (src/llama-arch.cpp) onto
// DecoderFileWeights, every matrix a view of the mapping in its file type (quantised ones stay
// quantised: the backends dequantise block by block), checked for shape, type and finite values.
// llama's q and k rows, which the converter permuted for llama.cpp's interleaved RoPE, are put
// back in Hugging Face's order in a copy of those two matrices (still quantised).
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <new>

#include "core/backend/finite_check.h"
#include "core/backend/quant.h"
#include "core/model/gguf/gguf_archs.h"
#include "core/model/transformer/transformer_blocks.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  // ggml's dims are innermost first: {cols, rows} is shown as [rows x cols].
  std::string s = "[";
  for (std::size_t i = dims.size(); i-- > 0;) s += std::to_string(dims[i]) + (i ? " x " : "");
  return s + "]";
}

// The row of the first NaN or infinity of a [rows x cols] matrix, or -1 (quant.h's check: values
// on their exponent bits, blocks by their f16 scales).
std::int64_t first_non_finite_row(const void* data, DType t, int rows, int cols) {
  const std::size_t bad = first_non_finite_value(
      data, t, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  return bad == kAllFinite ? -1 : static_cast<std::int64_t>(bad / static_cast<std::size_t>(cols));
}

class GgufTensorReader {
 public:
  explicit GgufTensorReader(std::shared_ptr<const GgufFile> file) : file_(std::move(file)) {}

  bool has(const std::string& name) const { return file_->tensor(name) != nullptr; }

  // A [rows x cols] matrix (ggml dims {cols, rows}) in its file type.
  WeightView matrix(const std::string& name, int rows, int cols) {
    const GgufTensor& t = require(name);
    if (t.dims.size() != 2 || t.dims[0] != static_cast<std::uint64_t>(cols) ||
        t.dims[1] != static_cast<std::uint64_t>(rows))
      fail(name, "has shape " + dims_text(t.dims) + ", expected [" + std::to_string(rows) + " x " +
                     std::to_string(cols) + "] from the metadata");
    WeightView w;
    w.data = t.data;
    w.dtype = dtype_of(t);
    w.rows = rows;
    w.cols = cols;
    w.owner = file_->owner();
    check_finite(name, w);
    mapped.insert(w.data);
    return w;
  }
  // A vector of `n` values widened to a [1 x n] host tensor (norm weights, biases).
  Tensor vector(const std::string& name, int n) {
    const GgufTensor& t = require(name);
    if (t.elements() != static_cast<std::uint64_t>(n) || t.dims.size() > 2 ||
        (t.dims.size() == 2 && t.dims[1] != 1))
      fail(name, "has shape " + dims_text(t.dims) + ", expected [" + std::to_string(n) +
                     "] from the metadata");
    const DType dtype = dtype_of(t);
    WeightView w{t.data, dtype, 1, n, file_->owner()};
    check_finite(name, w);
    Matrix m(1, n);
    for (int c = 0; c < n; ++c) m(0, c) = w.at(0, c);
    return host_tensor(std::move(m));
  }
  Tensor bias(const std::string& name, int n, bool wanted) {
    return wanted ? vector(name, n) : Tensor{};
  }
  void note_type(DType t) { types.insert(dtype_name(t)); }

  std::set<const void*> mapped;
  std::set<std::string> types;  // the types of the tensors read

 private:
  const GgufTensor& require(const std::string& name) const {
    const GgufTensor* t = file_->tensor(name);
    if (!t)
      throw ModelError(file_->path().string() + ": required tensor '" + name +
                       "' is missing (is general.architecture right?)");
    return *t;
  }
  DType dtype_of(const GgufTensor& t) {
    const std::optional<DType> d = dtype_of_ggml_type(t.ggml_type);
    if (!d)
      fail(t.name, std::string("has type ") + ggml_type_name(t.ggml_type) +
                       ", which attnscope does not read (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, "
                       "Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS)");
    note_type(*d);
    return *d;
  }
  void check_finite(const std::string& name, const WeightView& w) const {
    const std::int64_t bad = first_non_finite_row(w.data, w.dtype, w.rows, w.cols);
    if (bad >= 0)
      fail(name, "contains NaN or infinite values (the first in row " + std::to_string(bad) + ")");
  }
  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    throw ModelError(file_->path().string() + ": tensor '" + name + "' " + what);
  }
  std::shared_ptr<const GgufFile> file_;
};

std::size_t row_bytes(const WeightView& w) {
  return dtype_row_bytes(w.dtype, w.cols);
}

// Rows [first, first + count) of a [rows x cols] matrix: a view into the same memory.
WeightView row_view(const WeightView& w, int first, int count) {
  WeightView v = w;
  v.data =
      static_cast<const unsigned char*>(w.data) + static_cast<std::size_t>(first) * row_bytes(w);
  v.rows = count;
  return v;
}

// The rows of q or k (heads of dh rows each) in Hugging Face's order: convert_hf_to_gguf.py's
// permute turned HF row (h, j, i) — head h, half j of 2, i < dh/2 — into row (h, i, j), pairing
// dimensions i and i + dh/2 next to each other for llama.cpp's interleaved RoPE. A copy on the
// heap (whole rows: quantised blocks move as they are), 64-byte aligned like the mapping's data.
WeightView unpermuted(const WeightView& w, int heads, int dh) {
  const std::size_t rb = row_bytes(w), bytes = rb * static_cast<std::size_t>(w.rows);
  std::shared_ptr<unsigned char> copy(
      static_cast<unsigned char*>(::operator new[](bytes, std::align_val_t(64))),
      [](unsigned char* p) { ::operator delete[](p, std::align_val_t(64)); });
  const auto* src = static_cast<const unsigned char*>(w.data);
  const int half = dh / 2;
  for (int h = 0; h < heads; ++h)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < half; ++i) {
        const std::size_t hf = static_cast<std::size_t>(h * dh + j * half + i);
        const std::size_t gg = static_cast<std::size_t>(h * dh + 2 * i + j);
        std::memcpy(copy.get() + hf * rb, src + gg * rb, rb);
      }
  // The file's pages of the permuted matrix are not read again: back to the kernel (a private
  // read-only mapping: they would be read from the file again if touched).
  static const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(w.data);
  const std::uintptr_t first = (begin + page - 1) / page * page,
                       last = (begin + bytes) / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  WeightView v = w;
  v.data = copy.get();
  v.owner = copy;
  return v;
}

// The same order for a bias [1 x heads·dh].
Tensor unpermuted(const Tensor& bias, int heads, int dh) {
  if (bias.cols == 0) return bias;
  const Matrix b = host_matrix(bias);
  Matrix out(1, b.cols());
  const int half = dh / 2;
  for (int h = 0; h < heads; ++h)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < half; ++i) out(0, h * dh + j * half + i) = b(0, h * dh + 2 * i + j);
  return host_tensor(std::move(out));
}

}  // namespace

std::shared_ptr<const DecoderFileWeights> read_gguf_weights(
    const std::shared_ptr<const GgufFile>& file, const DecoderSpec& s, bool permuted_qk,
    const ProgressFn& progress, std::vector<std::string>* types_used) {
  GgufTensorReader r(file);
  auto w = std::make_shared<DecoderFileWeights>();
  const int d = s.hidden, q_out = s.heads * s.head_dim, kv_out = s.kv_heads * s.head_dim;
  const bool layer_norm = s.norm == NormKind::kLayer;
  w->linear_out_by_in = true;  // every GGUF matrix is [out x in] (ggml dims {in, out})
  w->embed = r.matrix("token_embd.weight", s.vocab, d);
  if (s.positions == PositionKind::kLearned)
    w->positions = r.matrix("position_embd.weight", s.max_positions, d);
  w->lm_head = s.tied_embeddings ? w->embed : r.matrix("output.weight", s.vocab, d);
  w->final_norm = r.vector("output_norm.weight", d);
  if (layer_norm) w->final_norm_bias = r.vector("output_norm.bias", d);
  for (int i = 0; i < s.layers; ++i) {
    if (progress) progress(static_cast<double>(i) / s.layers, "reading layer " + std::to_string(i));
    const std::string p = "blk." + std::to_string(i) + ".";
    DecoderLayerFileWeights l;
    l.input_norm = r.vector(p + "attn_norm.weight", d);
    if (layer_norm) l.input_norm_bias = r.vector(p + "attn_norm.bias", d);
    if (s.post_norms) {  // Gemma: post_attention_norm, ffn_norm (before the MLP), post_ffw_norm
      l.post_attention_norm = r.vector(p + "post_attention_norm.weight", d);
      l.pre_mlp_norm = r.vector(p + "ffn_norm.weight", d);
      l.post_mlp_norm = r.vector(p + "post_ffw_norm.weight", d);
    } else {  // ffn_norm is the norm before the MLP (HF's post_attention_layernorm)
      l.post_attention_norm = r.vector(p + "ffn_norm.weight", d);
      if (layer_norm) l.post_attention_norm_bias = r.vector(p + "ffn_norm.bias", d);
    }
    if (s.qk_norm) {
      l.q_norm = r.vector(p + "attn_q_norm.weight", s.head_dim);
      l.k_norm = r.vector(p + "attn_k_norm.weight", s.head_dim);
    }
    if (s.tensor_names == TensorNames::kGpt2) {
      l.qkv = r.matrix(p + "attn_qkv.weight", q_out + 2 * kv_out, d);
      l.qkv_bias = r.bias(p + "attn_qkv.bias", q_out + 2 * kv_out, s.qkv_bias);
    } else if (s.tensor_names == TensorNames::kPhi3 && r.has(p + "attn_qkv.weight")) {
      const WeightView qkv = r.matrix(p + "attn_qkv.weight", q_out + 2 * kv_out, d);
      l.q = row_view(qkv, 0, q_out);
      l.k = row_view(qkv, q_out, kv_out);
      l.v = row_view(qkv, q_out + kv_out, kv_out);
    } else {
      l.q = r.matrix(p + "attn_q.weight", q_out, d);
      l.k = r.matrix(p + "attn_k.weight", kv_out, d);
      l.v = r.matrix(p + "attn_v.weight", kv_out, d);
      l.q_bias = r.bias(p + "attn_q.bias", q_out, s.qkv_bias);
      l.k_bias = r.bias(p + "attn_k.bias", kv_out, s.qkv_bias);
      l.v_bias = r.bias(p + "attn_v.bias", kv_out, s.qkv_bias);
      if (permuted_qk) {
        l.q = unpermuted(l.q, s.heads, s.head_dim);
        l.k = unpermuted(l.k, s.kv_heads, s.head_dim);
        l.q_bias = unpermuted(l.q_bias, s.heads, s.head_dim);
        l.k_bias = unpermuted(l.k_bias, s.kv_heads, s.head_dim);
      }
    }
    l.o = r.matrix(p + "attn_output.weight", d, q_out);
    l.o_bias = r.bias(p + "attn_output.bias", d, s.o_bias);
    if (s.tensor_names == TensorNames::kPhi3 && !r.has(p + "ffn_gate.weight")) {
      const WeightView gate_up = r.matrix(p + "ffn_up.weight", 2 * s.ff, d);
      l.gate = row_view(gate_up, 0, s.ff);
      l.up = row_view(gate_up, s.ff, s.ff);
    } else {
      if (s.gated_mlp) l.gate = r.matrix(p + "ffn_gate.weight", s.ff, d);
      l.up = r.matrix(p + "ffn_up.weight", s.ff, d);
      l.gate_bias = r.bias(p + "ffn_gate.bias", s.ff, s.mlp_bias && s.gated_mlp);
      l.up_bias = r.bias(p + "ffn_up.bias", s.ff, s.mlp_bias);
    }
    l.down = r.matrix(p + "ffn_down.weight", d, s.ff);
    l.down_bias = r.bias(p + "ffn_down.bias", d, s.mlp_bias);
    w->layers.push_back(std::move(l));
  }
  w->dtype = w->embed.dtype;
  w->mapped = std::move(r.mapped);
  if (types_used) types_used->assign(r.types.begin(), r.types.end());
  if (progress) progress(1.0, "weights mapped");
  return w;
}

}  // namespace attnscope

namespace attnscope {

GgufNetwork load_gguf_network(const std::filesystem::path& path, const ProgressFn& progress) {
  if (progress) progress(0.0, "reading " + path.string());
  std::shared_ptr<const GgufFile> file = GgufFile::open(path);
  const GgufMetadata m(*file);
  const GgufArchitecture* arch = find_gguf_architecture(m.arch());
  if (!arch)
    m.fail("architecture '" + m.arch() + "' is not supported (attnscope reads GGUF " +
           gguf_architecture_names() + ")");
  DecoderSpec spec = arch->spec(m);
  if (progress) progress(0.0, "loading " + m.arch() + " model from " + path.string());
  std::vector<std::string> types;
  std::shared_ptr<const DecoderFileWeights> weights =
      read_gguf_weights(file, spec, arch->permuted_qk, progress, &types);
  ModelSource source;
  source.format = "gguf";
  try {  // general.file_type of another type than an integer: the types used instead
    if (file->find("general.file_type"))
      source.file_type = llama_file_type_name(file->get_int("general.file_type"));
  } catch (const ModelError&) {
  }
  if (source.file_type.empty())
    for (const std::string& t : types)
      source.file_type += (source.file_type.empty() ? "" : "+") + t;
  std::string name = file->get_string("general.name", "");
  if (name.empty()) name = path.stem().string();
  return GgufNetwork{DecoderNetwork::from_weights(std::move(spec), std::move(weights)),
                     std::move(name), std::move(source), std::move(file)};
}

}  // namespace attnscope
