#include "core/model/decoder/decoder_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/util/error.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

// HF multiplies Gemma's embeddings by a tensor of the weights' dtype: √hidden rounded to it.
float embedding_scale(const DecoderSpec& s, DType dtype) {
  if (!s.scale_embedding_in_weight_dtype || dtype == DType::kF32) return s.embedding_scale;
  return dtype == DType::kBF16 ? bf16_to_float(float_to_bf16(s.embedding_scale))
                               : f16_to_float(float_to_f16(s.embedding_scale));
}

// The plain MLP's activation: the backend's gelu.
Gelu backend_gelu(MlpActivation a) {
  return a == MlpActivation::kGeluErf ? Gelu::kErf : Gelu::kTanh;
}

// Combinations no family uses are refused here rather than run untested.
void check_runnable(const DecoderSpec& s) {
  const std::string what = "a " + s.kind + " decoder";
  if (!s.gated_mlp && s.activation == MlpActivation::kSilu)
    throw ModelError(what + " with a plain (ungated) MLP needs a GELU activation, not silu");
  if (s.norm == NormKind::kLayer && s.sandwich_norms)
    throw ModelError(what + ": LayerNorm with sandwich norms is not supported");
  if (s.positions == PositionKind::kLearned && s.max_positions <= 0)
    throw ModelError(what + " with learned positions needs max positions > 0");
}

Activation backend_activation(MlpActivation a) {
  switch (a) {
    case MlpActivation::kSilu:
      return Activation::kSiLU;
    case MlpActivation::kGeluTanh:
      return Activation::kGeluTanh;
    case MlpActivation::kGeluErf:
      break;
  }
  return Activation::kGeluErf;
}

// The formula view's steps of one layer, on the host (inputs of at most kStepsMaxTokens tokens):
// the rotated q and k the scores multiply, the raw and scaled (soft-capped, masked) scores, the
// backend's weights and weights · v.
void append_steps(const DecoderSpec& s, const DecoderLayerSpec& layer, const Matrix& q,
                  const Matrix& k, const Matrix& v, const std::vector<Matrix>& weights, int past,
                  std::vector<HeadSteps>& steps) {
  const int dh = s.head_dim;
  AttentionMask mask;
  mask.causal = true;
  mask.window = layer.window;
  mask.query_offset = past;
  for (int h = 0; h < s.heads; ++h) {
    const int g = h / s.group();
    HeadSteps st;
    st.q = q.middleCols(h * dh, dh);
    st.k = k.middleCols(g * dh, dh);
    st.v = v.middleCols(g * dh, dh);
    st.scores = st.q * st.k.transpose();
    st.scaled = st.scores * s.attention_scale;
    if (s.attention_softcap > 0)
      st.scaled = (st.scaled.array() / s.attention_softcap).tanh() * s.attention_softcap;
    for (Eigen::Index i = 0; i < st.scaled.rows(); ++i)
      for (Eigen::Index j = 0; j < st.scaled.cols(); ++j)
        if (mask.masked(static_cast<int>(i), static_cast<int>(j)))
          st.scaled(i, j) = -std::numeric_limits<float>::infinity();
    st.weights = weights[h];
    st.output = st.weights * st.v;
    st.kv_head = g;
    st.scale = s.attention_scale;
    st.softcap = s.attention_softcap;
    steps.push_back(std::move(st));
  }
}

// Long inputs: only each head's q and its KV head's k and v, with the scale and softcap, so the
// formula view can compute one query's row (no n x n matrix kept).
void append_vector_steps(const DecoderSpec& s, const Matrix& q, const Matrix& k, const Matrix& v,
                         std::vector<HeadSteps>& steps) {
  const int dh = s.head_dim;
  for (int h = 0; h < s.heads; ++h) {
    const int g = h / s.group();
    HeadSteps st;
    st.q = q.middleCols(h * dh, dh);
    st.k = k.middleCols(g * dh, dh);
    st.v = v.middleCols(g * dh, dh);
    st.kv_head = g;
    st.scale = s.attention_scale;
    st.softcap = s.attention_softcap;
    steps.push_back(std::move(st));
  }
}

}  // namespace

DecoderNetwork DecoderNetwork::load(const fs::path& folder, DecoderSpec spec,
                                    const ProgressFn& progress) {
  check_runnable(spec);
  Checkpoint checkpoint = Checkpoint::open(folder);
  auto file = read_decoder_weights(checkpoint, spec, progress);
  return DecoderNetwork(std::make_shared<const DecoderSpec>(std::move(spec)), std::move(file),
                        std::make_shared<const Checkpoint>(std::move(checkpoint)));
}

DecoderNetwork DecoderNetwork::from_weights(DecoderSpec spec,
                                            std::shared_ptr<const DecoderFileWeights> weights) {
  check_runnable(spec);
  return DecoderNetwork(std::make_shared<const DecoderSpec>(std::move(spec)), std::move(weights),
                        nullptr);
}

DecoderNetwork::DecoderNetwork(std::shared_ptr<const DecoderSpec> spec,
                               std::shared_ptr<const DecoderFileWeights> file,
                               std::shared_ptr<const Checkpoint> checkpoint)
    : spec_(std::move(spec)),
      file_(std::move(file)),
      checkpoint_(std::move(checkpoint)),
      device_(std::make_shared<PerBackendWeights<DecoderWeights>>()) {}

std::shared_ptr<const DecoderWeights> DecoderNetwork::weights_for(Backend& backend) const {
  return device_->get(backend, [&](Backend& b) {
    const DecoderFileWeights& f = *file_;
    // nn.Linear [out x in]: x·Wᵀ; Conv1D [in x out]: x·W. Absent matrices (Llama has no qkv,
    // GPT-2 no q, k, v or gate) stay null.
    auto prepare_as = [&](const WeightView& view, bool transpose) {
      std::shared_ptr<const PreparedWeight> p;
      if (!view.data) return p;
      p = b.prepare_weight(view, transpose);
      release_file_pages(f, view);
      return p;
    };
    auto prepare = [&](const WeightView& view) { return prepare_as(view, f.linear_out_by_in); };
    auto small = [&](const Tensor& t) { return t.cols > 0 ? to_backend(b, t) : Tensor{}; };
    DecoderWeights w;
    for (const DecoderLayerFileWeights& l : f.layers) {
      DecoderLayerWeights d;
      d.input_norm = small(l.input_norm);
      d.post_attention_norm = small(l.post_attention_norm);
      d.pre_mlp_norm = small(l.pre_mlp_norm);
      d.post_mlp_norm = small(l.post_mlp_norm);
      d.input_norm_bias = small(l.input_norm_bias);
      d.post_attention_norm_bias = small(l.post_attention_norm_bias);
      d.pre_mlp_norm_bias = small(l.pre_mlp_norm_bias);
      d.post_mlp_norm_bias = small(l.post_mlp_norm_bias);
      d.q_norm = small(l.q_norm);
      d.k_norm = small(l.k_norm);
      d.q = prepare(l.q);
      d.k = prepare(l.k);
      d.v = prepare(l.v);
      d.qkv = prepare(l.qkv);
      d.o = prepare(l.o);
      d.gate = prepare(l.gate);
      d.up = prepare(l.up);
      d.down = prepare(l.down);
      d.q_bias = small(l.q_bias);
      d.k_bias = small(l.k_bias);
      d.v_bias = small(l.v_bias);
      d.qkv_bias = small(l.qkv_bias);
      d.o_bias = small(l.o_bias);
      d.gate_bias = small(l.gate_bias);
      d.up_bias = small(l.up_bias);
      d.down_bias = small(l.down_bias);
      w.layers.push_back(std::move(d));
    }
    w.final_norm = small(f.final_norm);
    w.final_norm_bias = small(f.final_norm_bias);
    w.lm_head = prepare_as(f.lm_head, /*transpose=*/true);  // [vocab x hidden]: x·Wᵀ
    return w;
  });
}

void DecoderNetwork::grow(KvCache& cache, Backend& backend, int needed) const {
  if (cache.backend_ && cache.backend_ != &backend)
    throw UsageError("this generation's KV cache lives on the " + cache.backend_->name() +
                     " backend; continue it there");
  cache.backend_ = &backend;
  if (needed <= cache.capacity_) return;
  const DecoderSpec& s = *spec_;
  const int kv_cols = s.kv_heads * s.head_dim;
  const int capacity = std::min(std::max({needed, 2 * cache.capacity_, 32}), s.max_positions);
  cache.k_.resize(s.layers);
  cache.v_.resize(s.layers);
  for (int l = 0; l < s.layers; ++l) {
    for (std::vector<Tensor>* kv : {&cache.k_, &cache.v_}) {
      Tensor bigger = backend.alloc(capacity, kv_cols);
      if (cache.length_ > 0) {
        Tensor dst = bigger.rows_view(0, cache.length_);
        backend.copy((*kv)[l].rows_view(0, cache.length_), dst);
      }
      (*kv)[l] = std::move(bigger);
    }
  }
  cache.capacity_ = capacity;
}

DecoderOutputs DecoderNetwork::forward(const std::vector<int>& ids, KvCache& cache,
                                       Backend& backend, const DecoderRequest& request) const {
  const DecoderSpec& s = *spec_;
  const int n = static_cast<int>(ids.size()), past = cache.length_, m = past + n;
  for (int id : ids)
    if (id < 0 || id >= s.vocab)
      throw UsageError("token id " + std::to_string(id) + " is outside the vocabulary (size " +
                       std::to_string(s.vocab) + ")");
  if (m > s.max_positions)
    throw UsageError(s.kind + " takes at most " + std::to_string(s.max_positions) +
                     " tokens (max_position_embeddings), got " + std::to_string(m));
  DecoderOutputs out;
  if (request.keep_attention) out.attention.assign(s.layers, std::vector<Matrix>(s.heads));
  if (n == 0) return out;
  const std::shared_ptr<const DecoderWeights> w = weights_for(backend);
  grow(cache, backend, m);

  const int dh = s.head_dim, q_cols = s.heads * dh, kv_cols = s.kv_heads * dh;
  // RMSNorm or LayerNorm; `out` may be `in` (in place) for RMSNorm only (check_runnable).
  auto norm = [&](const Tensor& in, const Tensor& weight, const Tensor& bias, Tensor& out) {
    if (s.norm == NormKind::kLayer)
      backend.layer_norm(in, weight, bias, s.norm_eps, out);
    else
      backend.rms_norm(in, weight, s.norm_eps, s.norm_offset, out);
  };
  Tensor x = backend.alloc(n, s.hidden);  // the residual stream
  backend.embedding(file_->embed, ids, x);
  const float emb_scale = embedding_scale(s, file_->dtype);
  if (emb_scale != 1.0f) backend.scale(x, emb_scale);
  Tensor normed = backend.alloc(n, s.hidden), projected = backend.alloc(n, s.hidden);
  if (s.positions == PositionKind::kLearned) {  // x += wpe[past … past + n - 1]
    std::vector<int> positions(n);
    std::iota(positions.begin(), positions.end(), past);
    backend.embedding(file_->positions, positions, projected);
    backend.add(x, projected);
  }
  Tensor q = backend.alloc(n, q_cols), context = backend.alloc(n, q_cols);
  const bool fused_qkv = !w->layers.empty() && w->layers[0].qkv;
  Tensor qkv = fused_qkv ? backend.alloc(n, q_cols + 2 * kv_cols) : Tensor{};
  Tensor gate = s.gated_mlp ? backend.alloc(n, s.ff) : Tensor{}, up = backend.alloc(n, s.ff);
  const bool keep_weights = request.keep_attention || request.keep_steps;
  std::vector<Matrix> scratch_weights;

  for (int l = 0; l < s.layers; ++l) {
    const DecoderLayerWeights& L = w->layers[l];
    const DecoderLayerSpec& layer = s.layer[l];
    const std::vector<float>& inv_freq = layer.local_rope ? s.rope_local.inv_freq : s.rope.inv_freq;
    // Attention block. The new keys and values go straight into the cache rows of their positions.
    norm(x, L.input_norm, L.input_norm_bias, normed);
    Tensor k_new = cache.k_[l].rows_view(past, n), v_new = cache.v_[l].rows_view(past, n);
    if (fused_qkv) {  // one projection [n x q·dh | kv·dh | kv·dh], split
      backend.linear(normed, *L.qkv, L.qkv_bias, qkv);
      backend.copy(qkv.cols_view(0, q_cols), q);
      backend.copy(qkv.cols_view(q_cols, kv_cols), k_new);
      backend.copy(qkv.cols_view(q_cols + kv_cols, kv_cols), v_new);
    } else {
      backend.linear(normed, *L.q, L.q_bias, q);      // [n x heads·dh]
      backend.linear(normed, *L.k, L.k_bias, k_new);  // [n x kv·dh]
      backend.linear(normed, *L.v, L.v_bias, v_new);  // [n x kv·dh]
    }
    if (s.qk_norm) {  // per head: the weight is [1 x dh]
      backend.rms_norm(q, L.q_norm, s.norm_eps, s.norm_offset, q);
      backend.rms_norm(k_new, L.k_norm, s.norm_eps, s.norm_offset, k_new);
    }
    if (s.positions == PositionKind::kRope) {
      backend.rope(q, s.heads, dh, inv_freq, past);
      backend.rope(k_new, s.kv_heads, dh, inv_freq, past);
    }
    AttentionMask mask;
    mask.causal = true;
    mask.window = layer.window;
    mask.query_offset = past;
    const Tensor keys = cache.k_[l].rows_view(0, m), values = cache.v_[l].rows_view(0, m);
    std::vector<Matrix>* weights = request.keep_attention ? &out.attention[l] : &scratch_weights;
    backend.attention_heads(q, keys, values, s.heads, s.kv_heads, dh, s.attention_scale,
                            s.attention_softcap, mask, context, keep_weights ? weights : nullptr);
    if (request.keep_steps)
      append_steps(s, layer, backend.download(q), backend.download(keys), backend.download(values),
                   *weights, past, out.steps);
    else if (request.keep_vector_steps)
      append_vector_steps(s, backend.download(q), backend.download(keys), backend.download(values),
                          out.steps);
    if (request.keep_attention_inputs) {
      AttentionInputs in;
      in.q = backend.download(q);
      in.k = backend.download(keys);
      in.heads = s.heads;
      in.kv_heads = s.kv_heads;
      in.head_dim = dh;
      in.scale = s.attention_scale;
      in.softcap = s.attention_softcap;
      in.mask = mask;
      out.attention_inputs.push_back(std::move(in));
    }
    backend.linear(context, *L.o, L.o_bias, projected);  // [n x hidden]
    if (s.sandwich_norms)
      norm(projected, L.post_attention_norm, L.post_attention_norm_bias, projected);
    backend.add(x, projected);
    // MLP block: down(act(gate(h)) · up(h)), or down(act(up(h))).
    if (s.sandwich_norms)
      norm(x, L.pre_mlp_norm, L.pre_mlp_norm_bias, normed);
    else
      norm(x, L.post_attention_norm, L.post_attention_norm_bias, normed);
    backend.linear(normed, *L.up, L.up_bias, up);
    if (s.gated_mlp) {
      backend.linear(normed, *L.gate, L.gate_bias, gate);
      backend.gated_activation(gate, up, backend_activation(s.activation), gate);
      backend.linear(gate, *L.down, L.down_bias, projected);
    } else {
      backend.gelu(up, backend_gelu(s.activation));
      backend.linear(up, *L.down, L.down_bias, projected);
    }
    if (s.sandwich_norms) norm(projected, L.post_mlp_norm, L.post_mlp_norm_bias, projected);
    backend.add(x, projected);
  }
  cache.length_ = m;

  // The LM head only for the rows asked for: the vocabulary is the largest matrix of the model.
  const int rows = request.all_logits ? n : 1;
  Tensor final_normed = backend.alloc(rows, s.hidden);
  norm(x.rows_view(n - rows, rows), w->final_norm, w->final_norm_bias, final_normed);
  if (request.keep_final_hidden) out.final_hidden = backend.download(final_normed);
  Tensor logits = backend.alloc(rows, s.vocab);
  backend.linear(final_normed, *w->lm_head, Tensor{}, logits);
  if (s.final_softcap > 0) backend.softcap(logits, s.final_softcap);
  out.logits = backend.download(logits);
  return out;
}

std::vector<Prediction> DecoderNetwork::top_predictions(const Matrix& logits, int row, int k) {
  const RowVector r = logits.row(row);
  const float mx = r.maxCoeff();
  const double sum = (r.array() - mx).exp().cast<double>().sum();
  std::vector<int> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  k = std::clamp(k, 0, static_cast<int>(r.size()));
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return r[a] > r[b] || (r[a] == r[b] && a < b); });
  std::vector<Prediction> out;
  for (int i = 0; i < k; ++i)
    out.push_back({order[i], "", static_cast<float>(std::exp(r[order[i]] - mx) / sum)});
  return out;
}

}  // namespace attnscope
