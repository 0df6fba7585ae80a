#include "core/model/seq2seq/seq2seq_network.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/model/hf/checkpoint.h"
#include "core/util/error.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? " x " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Tensors by name with the checks and messages of the other networks: a missing tensor, a shape
// other than config.json implies, a dtype other than F32/F16/BF16, NaN or infinity in a vector.
// Names are tried with each prefix in turn ("model." for BartForConditionalGeneration, "" for
// BartModel and T5).
class Reader {
 public:
  Reader(const Checkpoint& c, std::vector<std::string> prefixes)
      : c_(c), prefixes_(std::move(prefixes)) {}

  bool has(const std::string& name) const { return !resolve(name).empty(); }

  // The first of `names` present, as a [rows x cols] view in the file's dtype.
  WeightView matrix(const std::vector<std::string>& names, int rows, int cols) const {
    const std::string name = require(names);
    const RawTensor t = c_.raw(name);
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
  WeightView matrix(const std::string& name, int rows, int cols) const {
    return matrix(std::vector<std::string>{name}, rows, cols);
  }
  // A vector of n values ([n], or [1 x n]) widened to a [1 x n] host tensor.
  Tensor vector(const std::string& name, int n) const {
    const std::string found = require({name});
    const RawTensor t = c_.raw(found);
    const bool ok = (t.shape.size() == 1 && t.shape[0] == n) ||
                    (t.shape.size() == 2 && t.shape[0] == 1 && t.shape[1] == n);
    if (!ok)
      fail(found, "has shape " + shape_text(t.shape) + ", expected [" + std::to_string(n) +
                      "] from config.json");
    dtype_of(found, t.dtype);
    Matrix m = c_.matrix(found);
    m.resize(1, n);
    if (!m.allFinite()) fail(found, "contains NaN or infinite values");
    return host_tensor(std::move(m));
  }
  // A small matrix widened to float on the host (T5's relative_attention_bias).
  Matrix host(const std::string& name, int rows, int cols) const {
    const WeightView w = matrix(name, rows, cols);
    Matrix m = widen(w);
    if (!m.allFinite()) fail(resolve(name), "contains NaN or infinite values");
    return m;
  }

 private:
  std::string resolve(const std::string& name) const {
    for (const std::string& p : prefixes_)
      if (c_.has(p + name)) return p + name;
    return {};
  }
  std::string require(const std::vector<std::string>& names) const {
    for (const std::string& n : names) {
      const std::string found = resolve(n);
      if (!found.empty()) return found;
    }
    throw ModelError(c_.file_of(prefixes_.front() + names.front()).string() +
                     ": required tensor '" + prefixes_.front() + names.front() +
                     "' is missing (is this the right architecture?)");
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
  std::vector<std::string> prefixes_;
};

// BART's and Marian's names (BartForConditionalGeneration / MarianMTModel:
// "model." + …).
void read_bart_named(const Reader& r, const Seq2SeqSpec& s, Seq2SeqFileWeights& w) {
  const int d = s.d_model;
  auto norm = [&](const std::string& name, Tensor& weight, Tensor& bias) {
    weight = r.vector(name + ".weight", d);
    bias = r.vector(name + ".bias", d);
  };
  auto attention = [&](const std::string& p, int inner) {
    Seq2SeqAttentionFile a;
    a.q = r.matrix(p + "q_proj.weight", inner, d);
    a.k = r.matrix(p + "k_proj.weight", inner, d);
    a.v = r.matrix(p + "v_proj.weight", inner, d);
    a.o = r.matrix(p + "out_proj.weight", d, inner);
    a.q_bias = r.vector(p + "q_proj.bias", inner);
    a.k_bias = r.vector(p + "k_proj.bias", inner);
    a.v_bias = r.vector(p + "v_proj.bias", inner);
    a.o_bias = r.vector(p + "out_proj.bias", d);
    return a;
  };
  auto mlp = [&](const std::string& p, int ff, Seq2SeqLayerFile& l) {
    l.up = r.matrix(p + "fc1.weight", ff, d);
    l.up_bias = r.vector(p + "fc1.bias", ff);
    l.down = r.matrix(p + "fc2.weight", d, ff);
    l.down_bias = r.vector(p + "fc2.bias", d);
    norm(p + "final_layer_norm", l.mlp_norm, l.mlp_norm_bias);
  };
  if (s.separate_embeddings) {
    w.encoder_embed = r.matrix("encoder.embed_tokens.weight", s.vocab, d);
    w.decoder_embed = r.matrix("decoder.embed_tokens.weight", s.decoder_vocab, d);
  } else {
    w.encoder_embed =
        r.matrix({"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"},
                 s.vocab, d);
    w.decoder_embed = w.encoder_embed;
  }
  if (s.positions == Seq2SeqPositions::kLearned) {
    w.encoder_positions = r.matrix("encoder.embed_positions.weight", s.position_rows, d);
    w.decoder_positions = r.matrix("decoder.embed_positions.weight", s.position_rows, d);
  }
  if (s.embedding_norm) {
    norm("encoder.layernorm_embedding", w.encoder_embed_norm, w.encoder_embed_norm_bias);
    norm("decoder.layernorm_embedding", w.decoder_embed_norm, w.decoder_embed_norm_bias);
  }
  if (s.final_norms) {
    norm("encoder.layer_norm", w.encoder_final_norm, w.encoder_final_norm_bias);
    norm("decoder.layer_norm", w.decoder_final_norm, w.decoder_final_norm_bias);
  }
  for (int i = 0; i < s.encoder.layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i) + ".";
    Seq2SeqLayerFile l;
    l.self = attention(p + "self_attn.", s.inner());
    norm(p + "self_attn_layer_norm", l.self_norm, l.self_norm_bias);
    mlp(p, s.encoder.ff, l);
    w.encoder.push_back(std::move(l));
  }
  for (int i = 0; i < s.decoder.layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i) + ".";
    Seq2SeqLayerFile l;
    l.self = attention(p + "self_attn.", s.decoder_inner());
    norm(p + "self_attn_layer_norm", l.self_norm, l.self_norm_bias);
    l.cross = attention(p + "encoder_attn.", s.decoder_inner());
    norm(p + "encoder_attn_layer_norm", l.cross_norm, l.cross_norm_bias);
    mlp(p, s.decoder.ff, l);
    w.decoder.push_back(std::move(l));
  }
}

// T5's names (T5ForConditionalGeneration: shared, encoder.block.N.layer.M …).
void read_t5_named(const Reader& r, const Seq2SeqSpec& s, Seq2SeqFileWeights& w) {
  const int d = s.d_model;
  auto attention = [&](const std::string& p, int inner) {
    Seq2SeqAttentionFile a;
    a.q = r.matrix(p + "q.weight", inner, d);
    a.k = r.matrix(p + "k.weight", inner, d);
    a.v = r.matrix(p + "v.weight", inner, d);
    a.o = r.matrix(p + "o.weight", d, inner);
    return a;
  };
  auto mlp = [&](const std::string& p, int ff, Seq2SeqLayerFile& l) {
    if (s.gated_mlp) {
      l.gate = r.matrix(p + "DenseReluDense.wi_0.weight", ff, d);
      l.up = r.matrix(p + "DenseReluDense.wi_1.weight", ff, d);
    } else {
      l.up = r.matrix(p + "DenseReluDense.wi.weight", ff, d);
    }
    l.down = r.matrix(p + "DenseReluDense.wo.weight", d, ff);
    l.mlp_norm = r.vector(p + "layer_norm.weight", d);
  };
  w.encoder_embed = r.matrix(
      {"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"}, s.vocab, d);
  w.decoder_embed = w.encoder_embed;
  w.encoder_final_norm = r.vector("encoder.final_layer_norm.weight", d);
  w.decoder_final_norm = r.vector("decoder.final_layer_norm.weight", d);
  // Only block 0 holds relative_attention_bias (has_relative_attention_bias); every layer uses it.
  w.encoder_relative_bias =
      r.host("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
             s.relative_buckets, s.encoder.heads);
  w.decoder_relative_bias =
      r.host("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
             s.relative_buckets, s.decoder.heads);
  for (int i = 0; i < s.encoder.layers; ++i) {
    const std::string p = "encoder.block." + std::to_string(i) + ".layer.";
    Seq2SeqLayerFile l;
    l.self = attention(p + "0.SelfAttention.", s.inner());
    l.self_norm = r.vector(p + "0.layer_norm.weight", d);
    mlp(p + "1.", s.encoder.ff, l);
    w.encoder.push_back(std::move(l));
  }
  for (int i = 0; i < s.decoder.layers; ++i) {
    const std::string p = "decoder.block." + std::to_string(i) + ".layer.";
    Seq2SeqLayerFile l;
    l.self = attention(p + "0.SelfAttention.", s.decoder_inner());
    l.self_norm = r.vector(p + "0.layer_norm.weight", d);
    l.cross = attention(p + "1.EncDecAttention.", s.decoder_inner());
    l.cross_norm = r.vector(p + "1.layer_norm.weight", d);
    mlp(p + "2.", s.decoder.ff, l);
    w.decoder.push_back(std::move(l));
  }
}

// MarianSinusoidalPositionalEmbedding._init_weight: row p, column j < d/2 (d even; ⌈d/2⌉ for odd d)
// is sin(p / 10000^(2⌊j'/2⌋/d)) of the even columns j' = 2j, the rest cos of the odd ones j' = 2j +
// 1, computed in float64 and stored as float. Rows first … first + rows - 1 only, made when a pass
// needs them (a table of max_position_embeddings rows is never built).
Matrix sinusoids(int first, int rows, int d) {
  Matrix m(rows, d);
  const int sentinel = d % 2 == 0 ? d / 2 : d / 2 + 1;
  for (int r = 0; r < rows; ++r) {
    const double p = first + r;
    for (int j = 0; j < d; ++j) {
      const double angle =
          p / std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / static_cast<double>(d));
      // Even columns j feed the sin half at j / 2, odd ones the cos half at sentinel + j / 2.
      if (j % 2 == 0)
        m(r, j / 2) = static_cast<float>(std::sin(angle));
      else
        m(r, sentinel + j / 2) = static_cast<float>(std::cos(angle));
    }
  }
  return m;
}

}  // namespace

std::shared_ptr<const Seq2SeqFileWeights> read_seq2seq_weights(const fs::path& folder,
                                                               const Seq2SeqSpec& s) {
  const auto checkpoint = std::make_shared<const Checkpoint>(Checkpoint::open(folder));
  auto w = std::make_shared<Seq2SeqFileWeights>();
  const bool bart = s.tensor_names == Seq2SeqTensorNames::kBart;
  const Reader r(*checkpoint,
                 bart ? std::vector<std::string>{"model.", ""} : std::vector<std::string>{""});
  if (bart)
    read_bart_named(r, s, *w);
  else
    read_t5_named(r, s, *w);
  // The head's own names sit at the top level (lm_head.weight, final_logits_bias).
  const Reader top(*checkpoint, {""});
  w->lm_head =
      s.tied_lm_head ? w->decoder_embed : top.matrix("lm_head.weight", s.decoder_vocab, s.d_model);
  // A buffer every released checkpoint saves; zeros (as Hugging Face initialises it) when absent.
  if (s.final_logits_bias && top.has("final_logits_bias"))
    w->final_logits_bias = top.vector("final_logits_bias", s.decoder_vocab);
  // The views keep their shard mappings alive through their owners; nothing else is needed.
  return w;
}

int t5_relative_bucket(int relative_position, bool bidirectional, int num_buckets,
                       int max_distance) {
  int bucket = 0;
  if (bidirectional) {
    num_buckets /= 2;
    if (relative_position > 0) bucket += num_buckets;
    relative_position = std::abs(relative_position);
  } else {
    relative_position = -std::min(relative_position, 0);
  }
  const int max_exact = num_buckets / 2;
  if (relative_position < max_exact) return bucket + relative_position;
  // Float32 throughout, as torch computes it on the float tensor; .to(long) truncates.
  const float ratio = static_cast<float>(relative_position) / static_cast<float>(max_exact);
  const float scale = static_cast<float>(
      std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
  const float large = std::log(ratio) / scale * static_cast<float>(num_buckets - max_exact);
  const int if_large = std::min(max_exact + static_cast<int>(large), num_buckets - 1);
  return bucket + if_large;
}

// ---- the weights on a backend ------------------------------------------------------------------

struct Seq2SeqAttentionWeights {
  std::shared_ptr<const PreparedWeight> q, k, v, o;
  Tensor q_bias, k_bias, v_bias, o_bias;
};
struct Seq2SeqLayerWeights {
  Seq2SeqAttentionWeights self, cross;
  Tensor self_norm, self_norm_bias, cross_norm, cross_norm_bias, mlp_norm, mlp_norm_bias;
  std::shared_ptr<const PreparedWeight> up, gate, down;
  Tensor up_bias, down_bias;
};
struct Seq2SeqDeviceWeights {
  std::vector<Seq2SeqLayerWeights> encoder, decoder;
  Tensor encoder_embed_norm, encoder_embed_norm_bias, decoder_embed_norm, decoder_embed_norm_bias;
  Tensor encoder_final_norm, encoder_final_norm_bias, decoder_final_norm, decoder_final_norm_bias;
  Tensor final_logits_bias;
  std::shared_ptr<const PreparedWeight> lm_head;
};

Seq2SeqNetwork Seq2SeqNetwork::load(const fs::path& folder, Seq2SeqSpec spec,
                                    const ProgressFn& progress) {
  check_seq2seq_spec(spec, folder / "config.json");
  if (progress) progress(0.0, "reading the weights");
  auto file = read_seq2seq_weights(folder, spec);
  if (progress) progress(1.0, "weights mapped");
  return Seq2SeqNetwork(std::make_shared<const Seq2SeqSpec>(std::move(spec)), std::move(file));
}

Seq2SeqNetwork::Seq2SeqNetwork(std::shared_ptr<const Seq2SeqSpec> spec,
                               std::shared_ptr<const Seq2SeqFileWeights> file)
    : spec_(std::move(spec)),
      file_(std::move(file)),
      device_(std::make_shared<PerBackendWeights<Seq2SeqDeviceWeights>>()) {}

std::shared_ptr<const Seq2SeqDeviceWeights> Seq2SeqNetwork::weights_for(Backend& backend) const {
  return device_->get(backend, [&](Backend& b) {
    const Seq2SeqFileWeights& f = *file_;
    auto prepare = [&](const WeightView& view) {
      std::shared_ptr<const PreparedWeight> p;
      if (view.data)
        p = b.prepare_weight(view,
                             /*transpose_w=*/true);  // nn.Linear [out x in]
      return p;
    };
    auto small = [&](const Tensor& t) { return t.cols > 0 ? to_backend(b, t) : Tensor{}; };
    auto attention = [&](const Seq2SeqAttentionFile& a) {
      Seq2SeqAttentionWeights w;
      w.q = prepare(a.q);
      w.k = prepare(a.k);
      w.v = prepare(a.v);
      w.o = prepare(a.o);
      w.q_bias = small(a.q_bias);
      w.k_bias = small(a.k_bias);
      w.v_bias = small(a.v_bias);
      w.o_bias = small(a.o_bias);
      return w;
    };
    auto layer = [&](const Seq2SeqLayerFile& l) {
      Seq2SeqLayerWeights w;
      w.self = attention(l.self);
      w.cross = attention(l.cross);
      w.self_norm = small(l.self_norm);
      w.self_norm_bias = small(l.self_norm_bias);
      w.cross_norm = small(l.cross_norm);
      w.cross_norm_bias = small(l.cross_norm_bias);
      w.mlp_norm = small(l.mlp_norm);
      w.mlp_norm_bias = small(l.mlp_norm_bias);
      w.up = prepare(l.up);
      w.gate = prepare(l.gate);
      w.down = prepare(l.down);
      w.up_bias = small(l.up_bias);
      w.down_bias = small(l.down_bias);
      return w;
    };
    Seq2SeqDeviceWeights w;
    for (const Seq2SeqLayerFile& l : f.encoder) w.encoder.push_back(layer(l));
    for (const Seq2SeqLayerFile& l : f.decoder) w.decoder.push_back(layer(l));
    w.encoder_embed_norm = small(f.encoder_embed_norm);
    w.encoder_embed_norm_bias = small(f.encoder_embed_norm_bias);
    w.decoder_embed_norm = small(f.decoder_embed_norm);
    w.decoder_embed_norm_bias = small(f.decoder_embed_norm_bias);
    w.encoder_final_norm = small(f.encoder_final_norm);
    w.encoder_final_norm_bias = small(f.encoder_final_norm_bias);
    w.decoder_final_norm = small(f.decoder_final_norm);
    w.decoder_final_norm_bias = small(f.decoder_final_norm_bias);
    w.final_logits_bias = small(f.final_logits_bias);
    w.lm_head = prepare(f.lm_head);
    return w;
  });
}

namespace {

// The pieces of one forward pass that every sublayer shares.
struct Pass {
  const Seq2SeqSpec& s;
  Backend& b;

  // LayerNorm (weight and bias) or RMSNorm (weight only); `out` differs from `in`.
  void norm(const Tensor& in, const Tensor& weight, const Tensor& bias, Tensor& out) const {
    if (s.norm == Seq2SeqNorm::kLayer)
      b.layer_norm(in, weight, bias, s.norm_eps, out);
    else
      b.rms_norm(in, weight, s.norm_eps, 0.0f, out);
  }

  // One sublayer around the residual stream x: pre-norm x += f(norm(x)), or post-norm x = norm(x +
  // f(x)). `f(in, out)` writes [n x d] into out.
  template <class F>
  void sublayer(Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& normed,
                Tensor& projected, F&& f) const {
    if (s.pre_norm) {
      norm(x, weight, bias, normed);
      f(normed, projected);
      b.add(x, projected);
    } else {
      f(x, projected);
      b.add(x, projected);
      norm(x, weight, bias, normed);
      b.copy(normed, x);
    }
  }

  // Every head of q [n x heads·dh] over k, v [m x heads·dh] into context; with `bias` (one [n x m]
  // tensor per head: T5's position bias) the scores are scale · q·kᵀ + bias, through the ops every
  // backend has (the bias copied into the scores, the product added with beta = 1).
  void attend(const Tensor& q, const Tensor& k, const Tensor& v, int heads, int dh, float scale,
              const std::vector<Tensor>* bias, const AttentionMask& mask, Tensor& context,
              std::vector<Matrix>* weights) const {
    if (!bias) {
      b.attention_heads(q, k, v, heads, heads, dh, scale, 0.0f, mask, context, weights);
      return;
    }
    Tensor scores = b.alloc(q.rows, k.rows);
    if (weights) weights->resize(static_cast<std::size_t>(heads));
    for (int h = 0; h < heads; ++h) {
      b.copy((*bias)[static_cast<std::size_t>(h)], scores);
      b.matmul(q.cols_view(h * dh, dh), k.cols_view(h * dh, dh),
               /*transpose_b=*/true, scores, scale, 1.0f);
      if (mask.any()) b.mask_fill(scores, mask);
      b.softmax_rows(scores);
      if (weights) (*weights)[static_cast<std::size_t>(h)] = b.download(scores);
      Tensor out = context.cols_view(h * dh, dh);
      b.matmul(scores, v.cols_view(h * dh, dh), false, out, 1.0f, 0.0f);
    }
  }

  // act in place on [n x ff]. Relu has no backend op: it runs on the host (download, max(0, x),
  // upload), the only host step of the pass (T5 v1.0's MLP).
  void activate(Tensor& x) const {
    switch (s.activation) {
      case Seq2SeqActivation::kGeluErf:
        b.gelu(x, Gelu::kErf);
        return;
      case Seq2SeqActivation::kGeluTanh:
        b.gelu(x, Gelu::kTanh);
        return;
      case Seq2SeqActivation::kSilu: {  // silu(x) · 1
        Tensor ones = b.upload(Matrix::Ones(x.rows, x.cols));
        b.gated_activation(x, ones, Activation::kSiLU, x);
        return;
      }
      case Seq2SeqActivation::kRelu: {
        Tensor relu = b.upload(b.download(x).cwiseMax(0.0f));
        b.copy(relu, x);
        return;
      }
    }
  }

  // fc2(act(fc1(x))), or T5's gated wo(act(wi_0(x)) · wi_1(x)); up and gate are [n x ff] scratch.
  void mlp(const Seq2SeqLayerWeights& L, const Tensor& in, Tensor& out, Tensor& up,
           Tensor& gate) const {
    b.linear(in, *L.up, L.up_bias, up);
    if (s.gated_mlp) {
      b.linear(in, *L.gate, Tensor{}, gate);
      if (s.activation == Seq2SeqActivation::kRelu) {
        activate(gate);
        Matrix g = b.download(gate), u = b.download(up);
        Tensor product = b.upload(g.cwiseProduct(u));
        b.copy(product, gate);
      } else {
        const Activation act = s.activation == Seq2SeqActivation::kSilu ? Activation::kSiLU
                               : s.activation == Seq2SeqActivation::kGeluTanh
                                   ? Activation::kGeluTanh
                                   : Activation::kGeluErf;
        b.gated_activation(gate, up, act, gate);
      }
      b.linear(gate, *L.down, L.down_bias, out);
    } else {
      activate(up);
      b.linear(up, *L.down, L.down_bias, out);
    }
  }

  // Embeddings of `ids` at positions pos0 … into x [n x d]: scaled token rows, plus the learned or
  // sinusoidal positions, then the embedding LayerNorm (BART).
  void embed(const WeightView& table, const WeightView& positions, const std::vector<int>& ids,
             int pos0, const Tensor& norm_weight, const Tensor& norm_bias, Tensor& x,
             Tensor& scratch) const {
    const int n = static_cast<int>(ids.size());
    b.embedding(table, ids, x);
    if (s.embedding_scale != 1.0f) b.scale(x, s.embedding_scale);
    if (s.positions == Seq2SeqPositions::kLearned) {
      std::vector<int> rows(static_cast<std::size_t>(n));
      std::iota(rows.begin(), rows.end(), pos0 + s.position_offset);
      b.embedding(positions, rows, scratch);
      b.add(x, scratch);
    } else if (s.positions == Seq2SeqPositions::kSinusoidal) {
      Tensor pos = b.upload(sinusoids(pos0, n, s.d_model));
      b.add(x, pos);
    }
    if (s.embedding_norm) {
      norm(x, norm_weight, norm_bias, scratch);
      b.copy(scratch, x);
    }
  }

  // T5's position bias of queries at q0 … q0 + n - 1 over keys 0 … m - 1, one [n x m] tensor per
  // head: table[bucket(key - query), head].
  std::vector<Tensor> relative_bias(const Matrix& table, int heads, int q0, int n, int m,
                                    bool bidirectional) const {
    std::vector<int> bucket(static_cast<std::size_t>(n) * m);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j)
        bucket[static_cast<std::size_t>(i) * m + j] = t5_relative_bucket(
            j - (q0 + i), bidirectional, s.relative_buckets, s.relative_max_distance);
    std::vector<Tensor> out;
    for (int h = 0; h < heads; ++h) {
      Matrix bias(n, m);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
          bias(i, j) = table(bucket[static_cast<std::size_t>(i) * m + j], h);
      out.push_back(b.upload(bias));
    }
    return out;
  }
};

}  // namespace

Seq2SeqEncoderOutputs Seq2SeqNetwork::encode(const std::vector<int>& ids, Seq2SeqState& state,
                                             Backend& backend, bool keep_attention,
                                             bool keep_hidden) const {
  const Seq2SeqSpec& s = *spec_;
  const int n = static_cast<int>(ids.size()), d = s.d_model, inner = s.inner();
  for (int id : ids)
    if (id < 0 || id >= s.vocab)
      throw UsageError("token id " + std::to_string(id) + " is outside the vocabulary (size " +
                       std::to_string(s.vocab) + ")");
  if (n > s.max_source_tokens)
    throw UsageError(s.kind + " reads at most " + std::to_string(s.max_source_tokens) +
                     " source tokens, got " + std::to_string(n));
  if (n == 0) throw UsageError(s.kind + ": the source has no tokens");
  const std::shared_ptr<const Seq2SeqDeviceWeights> w = weights_for(backend);
  const Pass pass{s, backend};
  Seq2SeqEncoderOutputs out;
  if (keep_attention) out.attention.assign(s.encoder.layers, {});

  Tensor x = backend.alloc(n, d), normed = backend.alloc(n, d), projected = backend.alloc(n, d);
  pass.embed(file_->encoder_embed, file_->encoder_positions, ids, 0, w->encoder_embed_norm,
             w->encoder_embed_norm_bias, x, normed);
  std::vector<Tensor> bias;
  if (s.positions == Seq2SeqPositions::kRelative)
    bias = pass.relative_bias(file_->encoder_relative_bias, s.encoder.heads, 0, n, n, true);
  Tensor q = backend.alloc(n, inner), k = backend.alloc(n, inner), v = backend.alloc(n, inner),
         context = backend.alloc(n, inner);
  Tensor up = backend.alloc(n, s.encoder.ff),
         gate = s.gated_mlp ? backend.alloc(n, s.encoder.ff) : Tensor{};
  const AttentionMask none;
  for (int l = 0; l < s.encoder.layers; ++l) {
    const Seq2SeqLayerWeights& L = w->encoder[static_cast<std::size_t>(l)];
    pass.sublayer(x, L.self_norm, L.self_norm_bias, normed, projected,
                  [&](const Tensor& in, Tensor& o) {
                    backend.linear(in, *L.self.q, L.self.q_bias, q);
                    backend.linear(in, *L.self.k, L.self.k_bias, k);
                    backend.linear(in, *L.self.v, L.self.v_bias, v);
                    pass.attend(q, k, v, s.encoder.heads, s.head_dim, s.attention_scale,
                                bias.empty() ? nullptr : &bias, none, context,
                                keep_attention ? &out.attention[l] : nullptr);
                    backend.linear(context, *L.self.o, L.self.o_bias, o);
                  });
    pass.sublayer(x, L.mlp_norm, L.mlp_norm_bias, normed, projected,
                  [&](const Tensor& in, Tensor& o) { pass.mlp(L, in, o, up, gate); });
  }
  if (s.final_norms) {
    pass.norm(x, w->encoder_final_norm, w->encoder_final_norm_bias, normed);
    backend.copy(normed, x);
  }
  if (keep_hidden) out.hidden = backend.download(x);

  // What decoding needs from the source: every decoder layer's cross-attention keys and values.
  const int dinner = s.decoder_inner();
  state = Seq2SeqState{};
  state.backend_ = &backend;
  state.sources_ = n;
  for (int l = 0; l < s.decoder.layers; ++l) {
    const Seq2SeqLayerWeights& L = w->decoder[static_cast<std::size_t>(l)];
    Tensor ck = backend.alloc(n, dinner), cv = backend.alloc(n, dinner);
    backend.linear(x, *L.cross.k, L.cross.k_bias, ck);
    backend.linear(x, *L.cross.v, L.cross.v_bias, cv);
    state.cross_k_.push_back(std::move(ck));
    state.cross_v_.push_back(std::move(cv));
  }
  return out;
}

Seq2SeqDecoderOutputs Seq2SeqNetwork::decode(const std::vector<int>& ids, Seq2SeqState& state,
                                             Backend& backend, bool keep_attention, bool all_logits,
                                             bool keep_hidden) const {
  const Seq2SeqSpec& s = *spec_;
  if (state.backend_ != &backend)
    throw UsageError("decoding runs on the backend its source was encoded on");
  const int n = static_cast<int>(ids.size()), past = state.length_, m = past + n;
  const int d = s.d_model, inner = s.decoder_inner();
  for (int id : ids)
    if (id < 0 || id >= s.decoder_vocab)
      throw UsageError("token id " + std::to_string(id) +
                       " is outside the decoder's vocabulary (size " +
                       std::to_string(s.decoder_vocab) + ")");
  if (m > s.max_target_tokens)
    throw UsageError(s.kind + " decodes at most " + std::to_string(s.max_target_tokens) +
                     " target tokens, got " + std::to_string(m));
  Seq2SeqDecoderOutputs out;
  if (keep_attention) {
    out.attention.assign(s.decoder.layers, {});
    out.cross_attention.assign(s.decoder.layers, {});
  }
  if (n == 0) return out;
  const std::shared_ptr<const Seq2SeqDeviceWeights> w = weights_for(backend);
  const Pass pass{s, backend};

  // Grow the self-attention cache (doubling, at most max_target_tokens rows).
  if (m > state.capacity_) {
    const int capacity = std::min(std::max({m, 2 * state.capacity_, 16}), s.max_target_tokens);
    state.self_k_.resize(static_cast<std::size_t>(s.decoder.layers));
    state.self_v_.resize(static_cast<std::size_t>(s.decoder.layers));
    for (int l = 0; l < s.decoder.layers; ++l) {
      for (std::vector<Tensor>* kv : {&state.self_k_, &state.self_v_}) {
        Tensor bigger = backend.alloc(capacity, inner);
        if (past > 0) {
          Tensor dst = bigger.rows_view(0, past);
          backend.copy((*kv)[static_cast<std::size_t>(l)].rows_view(0, past), dst);
        }
        (*kv)[static_cast<std::size_t>(l)] = std::move(bigger);
      }
    }
    state.capacity_ = capacity;
  }

  Tensor x = backend.alloc(n, d), normed = backend.alloc(n, d), projected = backend.alloc(n, d);
  pass.embed(file_->decoder_embed, file_->decoder_positions, ids, past, w->decoder_embed_norm,
             w->decoder_embed_norm_bias, x, normed);
  std::vector<Tensor> bias;
  if (s.positions == Seq2SeqPositions::kRelative)
    bias = pass.relative_bias(file_->decoder_relative_bias, s.decoder.heads, past, n, m, false);
  Tensor q = backend.alloc(n, inner), context = backend.alloc(n, inner);
  Tensor up = backend.alloc(n, s.decoder.ff),
         gate = s.gated_mlp ? backend.alloc(n, s.decoder.ff) : Tensor{};
  AttentionMask causal;
  causal.causal = true;
  causal.query_offset = past;
  const AttentionMask none;
  for (int l = 0; l < s.decoder.layers; ++l) {
    const auto li = static_cast<std::size_t>(l);
    const Seq2SeqLayerWeights& L = w->decoder[li];
    pass.sublayer(
        x, L.self_norm, L.self_norm_bias, normed, projected, [&](const Tensor& in, Tensor& o) {
          Tensor k_new = state.self_k_[li].rows_view(past, n),
                 v_new = state.self_v_[li].rows_view(past, n);
          backend.linear(in, *L.self.q, L.self.q_bias, q);
          backend.linear(in, *L.self.k, L.self.k_bias, k_new);
          backend.linear(in, *L.self.v, L.self.v_bias, v_new);
          pass.attend(q, state.self_k_[li].rows_view(0, m), state.self_v_[li].rows_view(0, m),
                      s.decoder.heads, s.decoder_head_dim, s.decoder_attention_scale,
                      bias.empty() ? nullptr : &bias, causal, context,
                      keep_attention ? &out.attention[li] : nullptr);
          backend.linear(context, *L.self.o, L.self.o_bias, o);
        });
    pass.sublayer(x, L.cross_norm, L.cross_norm_bias, normed, projected,
                  [&](const Tensor& in, Tensor& o) {
                    backend.linear(in, *L.cross.q, L.cross.q_bias, q);
                    // No position bias in cross-attention (T5's EncDecAttention has none).
                    pass.attend(q, state.cross_k_[li], state.cross_v_[li], s.decoder.heads,
                                s.decoder_head_dim, s.decoder_attention_scale, nullptr, none,
                                context, keep_attention ? &out.cross_attention[li] : nullptr);
                    backend.linear(context, *L.cross.o, L.cross.o_bias, o);
                  });
    pass.sublayer(x, L.mlp_norm, L.mlp_norm_bias, normed, projected,
                  [&](const Tensor& in, Tensor& o) { pass.mlp(L, in, o, up, gate); });
  }
  state.length_ = m;

  // The LM head only for the rows asked for (the vocabulary is the largest matrix).
  const int rows = all_logits ? n : 1, first = all_logits ? 0 : n - 1;
  Tensor y = backend.alloc(rows, d);
  if (s.final_norms)
    pass.norm(x.rows_view(first, rows), w->decoder_final_norm, w->decoder_final_norm_bias, y);
  else
    backend.copy(x.rows_view(first, rows), y);
  if (keep_hidden) out.hidden = backend.download(y);
  if (s.lm_head_scale != 1.0f) backend.scale(y, s.lm_head_scale);
  Tensor logits = backend.alloc(rows, s.decoder_vocab);
  backend.linear(y, *w->lm_head, w->final_logits_bias, logits);
  out.logits = backend.download(logits);
  return out;
}

}  // namespace attnscope
