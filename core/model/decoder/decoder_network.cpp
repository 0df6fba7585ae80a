#include "core/model/decoder/decoder_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>

#include "core/util/error.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

// HF multiplies Gemma's embeddings by a tensor of the weights' dtype: √hidden rounded to it (a
// 16-bit one; llama.cpp scales a GGUF's quantised embedding by the float √hidden).
float embedding_scale(const DecoderSpec& s, DType dtype) {
  if (!s.scale_embedding_in_weight_dtype || dtype == DType::kF32 || dtype_is_quantized(dtype))
    return s.embedding_scale;
  return dtype == DType::kBF16 ? bf16_to_float(float_to_bf16(s.embedding_scale))
                               : f16_to_float(float_to_f16(s.embedding_scale));
}

// RMSNorm or LayerNorm; `out` may be `in` (in place) for RMSNorm only (check_runnable).
void run_norm(const DecoderSpec& s, Backend& backend, const Tensor& in, const Tensor& weight,
              const Tensor& bias, Tensor& out) {
  if (s.norm == NormKind::kLayer)
    backend.layer_norm(in, weight, bias, s.norm_eps, out);
  else
    backend.rms_norm(in, weight, s.norm_eps, s.norm_offset, out);
}

// Knocked-out edges of layer `layer`: each affected (head, query) row recomputed on the host
// without its removed keys, into `context` (and `weights` when kept). q [n x heads·dh], keys and
// values [m x kv·dh] as the scores multiply them.
void knock_out_edges(const DecoderSpec& s, int layer, const AttentionMask& mask,
                     const std::vector<EdgeKnockout>& knockouts, const Matrix& q,
                     const Matrix& keys, const Matrix& values, Matrix& context,
                     std::vector<Matrix>* weights) {
  std::map<std::pair<int, int>, std::vector<int>> removed;  // (head, query) -> keys
  for (const EdgeKnockout& k : knockouts) {
    if (k.layer != layer) continue;
    for (int h = 0; h < s.heads; ++h)
      if (k.head < 0 || k.head == h) removed[{h, k.query}].push_back(k.key);
  }
  const int dh = s.head_dim, m = static_cast<int>(keys.rows());
  for (const auto& entry : removed) {
    const int h = entry.first.first, i = entry.first.second, g = h / s.group();
    const std::vector<int>& gone = entry.second;
    std::vector<double> score(static_cast<std::size_t>(m),
                              -std::numeric_limits<double>::infinity());
    double top = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < m; ++j) {
      if (mask.masked(i, j) || std::find(gone.begin(), gone.end(), j) != gone.end()) continue;
      double v = 0.0;
      for (int d = 0; d < dh; ++d)
        v += static_cast<double>(q(i, h * dh + d)) * static_cast<double>(keys(j, g * dh + d));
      v *= s.attention_scale;
      if (s.attention_softcap > 0) v = std::tanh(v / s.attention_softcap) * s.attention_softcap;
      score[static_cast<std::size_t>(j)] = v;
      top = std::max(top, v);
    }
    if (top == -std::numeric_limits<double>::infinity())
      throw UsageError("--knockout leaves query " + std::to_string(i) + " of layer " +
                       std::to_string(layer) + " head " + std::to_string(h) +
                       " without a key to attend to");
    double sum = 0.0;
    for (double& v : score) sum += v = std::exp(v - top);  // exp(-inf) = 0
    RowVector row(m);
    for (int j = 0; j < m; ++j)
      row[j] = static_cast<float>(score[static_cast<std::size_t>(j)] / sum);
    for (int d = 0; d < dh; ++d) {
      double acc = 0.0;
      for (int j = 0; j < m; ++j)
        acc +=
            score[static_cast<std::size_t>(j)] / sum * static_cast<double>(values(j, g * dh + d));
      context(i, h * dh + d) = static_cast<float>(acc);
    }
    if (weights && h < static_cast<int>(weights->size()) && (*weights)[h].rows() > i)
      (*weights)[h].row(i) = row;
  }
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
  if (s.norm == NormKind::kLayer && (s.post_norms || !s.pre_norms))
    throw ModelError(what + ": LayerNorm only as pre-norms is supported");
  if (!s.pre_norms && !s.post_norms) throw ModelError(what + " without any norm in its layers");
  if (s.parallel_residual && (s.post_norms || !s.pre_norms))
    throw ModelError(what + ": parallel attention and MLP only with pre-norms is supported");
  for (const RopeSpec* r : {&s.rope, &s.rope_local})
    if (s.positions == PositionKind::kRope &&
        (r->rotary_dims() <= 0 || r->rotary_dims() > s.head_dim || r->rotary_dims() % 2 != 0))
      throw ModelError(what + ": " + std::to_string(r->rotary_dims()) +
                       " rotary dimensions do not fit head_dim " + std::to_string(s.head_dim));
  if (s.fused_qkv_layout == FusedQkvLayout::kPerHead && s.kv_heads != s.heads)
    throw ModelError(what + ": a per-head fused q|k|v needs as many KV heads as heads");
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
      device_(std::make_shared<PerBackendWeights<DecoderWeights>>()),
      grams_(std::make_shared<ValueGrams>()) {}

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
  // LongRoPE: the whole sequence's length picks the frequencies (HF's dynamic_rope_update, by
  // max(position_ids) + 1), and every position of it is rotated with them. When a generation first
  // outgrows original_max_positions, the cached tokens, run on the short ones, are run again on
  // the long ones (every layer's keys and values change, not only the rotation), as HF's
  // Phi3ForCausalLM.prepare_inputs_for_generation drops its cache there and runs the whole
  // sequence: each step then equals one forward pass over everything so far.
  const int rope_length = std::max(m, cache.rope_length_);
  if (past > 0 && n > 0 &&
      (&s.rope.inv_freq_for(cache.rope_length_) != &s.rope.inv_freq_for(rope_length) ||
       &s.rope_local.inv_freq_for(cache.rope_length_) != &s.rope_local.inv_freq_for(rope_length))) {
    if ((request.interventions && !request.interventions->empty()) || request.start_layer > 0)
      throw UsageError("interventions run on a prompt, not on a continued generation");
    const std::vector<int> cached = cache.ids_;
    cache.length_ = 0;
    cache.ids_.clear();
    cache.rope_length_ = rope_length;
    DecoderRequest rerun;
    rerun.keep_attention = false;
    forward(cached, cache, backend, rerun);
  }
  DecoderOutputs out;
  if (request.keep_attention) out.attention.assign(s.layers, std::vector<Matrix>(s.heads));
  if (n == 0) return out;
  const std::shared_ptr<const DecoderWeights> w = weights_for(backend);
  grow(cache, backend, m);

  const int dh = s.head_dim, q_cols = s.heads * dh, kv_cols = s.kv_heads * dh;
  const Interventions* iv =
      request.interventions && !request.interventions->empty() ? request.interventions : nullptr;
  const int start = request.start_layer;
  if ((iv || start > 0) && past > 0)
    throw UsageError("interventions run on a prompt, not on a continued generation");
  if (start < 0 || start > s.layers || (start > 0 && !request.start_residual))
    throw UsageError("a resumed forward pass needs the residual stream entering its first layer");
  if (iv && iv->ablate_mode == AblationMode::kMean && !iv->ablate.empty() &&
      (!request.mean_context || static_cast<int>(request.mean_context->size()) != s.layers))
    throw UsageError("mean ablation needs the clean run's mean of every head's output");
  auto norm = [&](const Tensor& in, const Tensor& weight, const Tensor& bias, Tensor& out) {
    run_norm(s, backend, in, weight, bias, out);
  };
  // RoPE of x [rows x heads·dh] at positions pos0…: each head's first 2·|inv_freq| dimensions
  // (all of them, or partial rotary's part, the rest passing), those then times `factor`
  // (LongRoPE's attention factor on cos and sin).
  auto rotate = [&](Tensor& x, int heads, const std::vector<float>& inv_freq, int pos0,
                    float factor) {
    const int rotary = static_cast<int>(inv_freq.size()) * 2;
    if (rotary == dh) {
      backend.rope(x, heads, dh, inv_freq, pos0);
      if (factor != 1.0f) backend.scale(x, factor);
      return;
    }
    for (int h = 0; h < heads; ++h) {
      Tensor head = x.cols_view(h * dh, rotary);
      backend.rope(head, 1, rotary, inv_freq, pos0);
      if (factor != 1.0f) backend.scale(head, factor);
    }
  };
  Tensor x;  // the residual stream
  Tensor normed = backend.alloc(n, s.hidden), projected = backend.alloc(n, s.hidden);
  if (start > 0) {
    const Matrix& r = *request.start_residual;
    if (r.rows() != n || r.cols() != s.hidden)
      throw UsageError("the residual stream to resume from has the wrong shape");
    x = backend.upload(r);
  } else {
    x = backend.alloc(n, s.hidden);
    backend.embedding(file_->embed, ids, x);
    const float emb_scale = embedding_scale(s, file_->dtype);
    if (emb_scale != 1.0f) backend.scale(x, emb_scale);
    if (s.positions == PositionKind::kLearned) {  // x += wpe[past … past + n - 1]
      std::vector<int> positions(n);
      std::iota(positions.begin(), positions.end(), past);
      backend.embedding(file_->positions, positions, projected);
      backend.add(x, projected);
    }
  }
  if (request.keep_residuals) out.residuals.resize(static_cast<std::size_t>(s.layers) + 1);
  if (request.keep_context) out.context.resize(static_cast<std::size_t>(s.layers));
  if (request.keep_attention_output)
    out.attention_output.resize(static_cast<std::size_t>(s.layers));
  if (request.keep_value_norms) out.value_norms.resize(static_cast<std::size_t>(s.layers));
  Tensor q = backend.alloc(n, q_cols), context = backend.alloc(n, q_cols);
  const bool fused_qkv = !w->layers.empty() && w->layers[0].qkv;
  Tensor qkv = fused_qkv ? backend.alloc(n, q_cols + 2 * kv_cols) : Tensor{};
  Tensor gate = s.gated_mlp ? backend.alloc(n, s.ff) : Tensor{}, up = backend.alloc(n, s.ff);
  const bool keep_weights = request.keep_attention || request.keep_steps;
  std::vector<Matrix> scratch_weights;

  for (int l = start; l < s.layers; ++l) {
    if (request.keep_residuals) out.residuals[static_cast<std::size_t>(l)] = backend.download(x);
    const DecoderLayerWeights& L = w->layers[l];
    const DecoderLayerSpec& layer = s.layer[l];
    const RopeSpec& rope = layer.local_rope ? s.rope_local : s.rope;
    const std::vector<float>& inv_freq = rope.inv_freq_for(rope_length);
    // Attention block. The new keys and values go straight into the cache rows of their positions.
    if (s.pre_norms)
      norm(x, L.input_norm, L.input_norm_bias, normed);
    else
      backend.copy(x, normed);
    Tensor k_new = cache.k_[l].rows_view(past, n), v_new = cache.v_[l].rows_view(past, n);
    if (fused_qkv) {  // one projection [n x q·dh | kv·dh | kv·dh], split
      backend.linear(normed, *L.qkv, L.qkv_bias, qkv);
      if (s.fused_qkv_layout == FusedQkvLayout::kPerHead) {  // [heads][q | k | v][dh] (GPT-NeoX)
        for (int h = 0; h < s.heads; ++h) {
          Tensor qh = q.cols_view(h * dh, dh), kh = k_new.cols_view(h * dh, dh),
                 vh = v_new.cols_view(h * dh, dh);
          backend.copy(qkv.cols_view(3 * h * dh, dh), qh);
          backend.copy(qkv.cols_view((3 * h + 1) * dh, dh), kh);
          backend.copy(qkv.cols_view((3 * h + 2) * dh, dh), vh);
        }
      } else {
        backend.copy(qkv.cols_view(0, q_cols), q);
        backend.copy(qkv.cols_view(q_cols, kv_cols), k_new);
        backend.copy(qkv.cols_view(q_cols + kv_cols, kv_cols), v_new);
      }
    } else {
      backend.linear(normed, *L.q, L.q_bias, q);      // [n x heads·dh]
      backend.linear(normed, *L.k, L.k_bias, k_new);  // [n x kv·dh]
      backend.linear(normed, *L.v, L.v_bias, v_new);  // [n x kv·dh]
    }
    if (s.qk_norm) {  // per head: the weight is [1 x dh]; whole projection: [1 x heads·dh]
      backend.rms_norm(q, L.q_norm, s.norm_eps, s.norm_offset, q);
      backend.rms_norm(k_new, L.k_norm, s.norm_eps, s.norm_offset, k_new);
    }
    if (s.positions == PositionKind::kRope && layer.rope) {
      rotate(q, s.heads, inv_freq, past, rope.attention_factor);
      rotate(k_new, s.kv_heads, inv_freq, past, rope.attention_factor);
    }
    AttentionMask mask;
    mask.causal = true;
    mask.window = layer.window;
    mask.query_offset = past;
    const Tensor keys = cache.k_[l].rows_view(0, m), values = cache.v_[l].rows_view(0, m);
    std::vector<Matrix>* weights = request.keep_attention ? &out.attention[l] : &scratch_weights;
    backend.attention_heads(q, keys, values, s.heads, s.kv_heads, dh, s.attention_scale,
                            s.attention_softcap, mask, context, keep_weights ? weights : nullptr);
    const bool knocks = iv && std::any_of(iv->knockout.begin(), iv->knockout.end(),
                                          [&](const EdgeKnockout& k) { return k.layer == l; });
    const bool ablates = iv && std::any_of(iv->ablate.begin(), iv->ablate.end(),
                                           [&](const HeadRef& h) { return h.layer == l; });
    if (knocks || ablates || request.keep_context) {
      Matrix ctx = backend.download(context);
      if (knocks)
        knock_out_edges(s, l, mask, iv->knockout, backend.download(q), backend.download(keys),
                        backend.download(values), ctx, keep_weights ? weights : nullptr);
      if (ablates) {
        for (int h = 0; h < s.heads; ++h) {
          if (!iv->ablates(l, h)) continue;
          if (iv->ablate_mode == AblationMode::kMean)
            ctx.middleCols(h * dh, dh).rowwise() =
                (*request.mean_context)[static_cast<std::size_t>(l)].segment(h * dh, dh);
          else
            ctx.middleCols(h * dh, dh).setZero();
        }
      }
      if (knocks || ablates) backend.copy(backend.upload(ctx), context);
      if (request.keep_context) out.context[static_cast<std::size_t>(l)] = std::move(ctx);
    }
    if (request.keep_value_norms) {
      const Matrix vals = backend.download(values);
      const std::vector<Matrix>& grams = value_grams(l);
      std::vector<RowVector>& norms = out.value_norms[static_cast<std::size_t>(l)];
      norms.resize(static_cast<std::size_t>(s.heads));
      for (int h = 0; h < s.heads; ++h) {
        const auto v = vals.middleCols((h / s.group()) * dh, dh);
        const Matrix vg = v * grams[static_cast<std::size_t>(h)];
        norms[static_cast<std::size_t>(h)] =
            vg.cwiseProduct(v).rowwise().sum().cwiseMax(0.0f).cwiseSqrt().transpose();
      }
    }
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
    if (request.keep_attention_output)
      out.attention_output[static_cast<std::size_t>(l)] = backend.download(projected);
    if (s.post_norms) norm(projected, L.post_attention_norm, L.post_attention_norm_bias, projected);
    // MLP block: down(act(gate(h)) · up(h)), or down(act(up(h))). Its input is normed from x after
    // the attention joined it, or (parallel_residual) from the layer's input x itself.
    if (s.parallel_residual) norm(x, L.post_attention_norm, L.post_attention_norm_bias, normed);
    backend.add(x, projected);
    if (s.parallel_residual) {
      // normed holds the MLP's input already
    } else if (!s.pre_norms) {
      backend.copy(x, normed);
    } else if (s.post_norms) {
      norm(x, L.pre_mlp_norm, L.pre_mlp_norm_bias, normed);
    } else {
      norm(x, L.post_attention_norm, L.post_attention_norm_bias, normed);
    }
    backend.linear(normed, *L.up, L.up_bias, up);
    if (s.gated_mlp) {
      backend.linear(normed, *L.gate, L.gate_bias, gate);
      backend.gated_activation(gate, up, backend_activation(s.activation), gate);
      backend.linear(gate, *L.down, L.down_bias, projected);
    } else {
      backend.gelu(up, backend_gelu(s.activation));
      backend.linear(up, *L.down, L.down_bias, projected);
    }
    if (s.post_norms) norm(projected, L.post_mlp_norm, L.post_mlp_norm_bias, projected);
    backend.add(x, projected);
  }
  cache.length_ = m;
  cache.ids_.insert(cache.ids_.end(), ids.begin(), ids.end());
  cache.rope_length_ = rope_length;
  if (request.keep_residuals)
    out.residuals[static_cast<std::size_t>(s.layers)] = backend.download(x);

  // The LM head only for the rows asked for: the vocabulary is the largest matrix of the model.
  const int rows = request.all_logits ? n : 1;
  const int first_row = request.all_logits                                  ? 0
                        : request.logits_row >= 0 && request.logits_row < n ? request.logits_row
                                                                            : n - 1;
  Tensor final_normed = backend.alloc(rows, s.hidden);
  norm(x.rows_view(first_row, rows), w->final_norm, w->final_norm_bias, final_normed);
  if (request.keep_final_hidden) out.final_hidden = backend.download(final_normed);
  Tensor logits = backend.alloc(rows, s.vocab);
  backend.linear(final_normed, *w->lm_head, Tensor{}, logits);
  if (s.final_softcap > 0) backend.softcap(logits, s.final_softcap);
  out.logits = backend.download(logits);
  return out;
}

struct DecoderNetwork::ValueGrams {
  std::mutex mutex;
  std::vector<std::vector<Matrix>> layers;  // [layer][head], made on first use
};

const std::vector<Matrix>& DecoderNetwork::value_grams(int layer) const {
  const DecoderSpec& s = *spec_;
  std::lock_guard<std::mutex> lock(grams_->mutex);
  if (grams_->layers.empty()) grams_->layers.resize(static_cast<std::size_t>(s.layers));
  std::vector<Matrix>& grams = grams_->layers[static_cast<std::size_t>(layer)];
  if (grams.empty()) {
    // W_O as the file holds it: nn.Linear [hidden x heads·dh] (y = x·Wᵀ), Conv1D [heads·dh x
    // hidden]. W_O,h = the head's dh rows of the [in x out] form.
    const Eigen::MatrixXd w =
        widen(file_->layers[static_cast<std::size_t>(layer)].o).cast<double>();
    const int dh = s.head_dim;
    for (int h = 0; h < s.heads; ++h) {
      const Eigen::MatrixXd wh = file_->linear_out_by_in
                                     ? Eigen::MatrixXd(w.middleCols(h * dh, dh).transpose())
                                     : Eigen::MatrixXd(w.middleRows(h * dh, dh));
      grams.push_back((wh * wh.transpose()).cast<float>());
    }
  }
  return grams;
}

Matrix DecoderNetwork::unembed(const Matrix& residual_rows, Backend& backend) const {
  const DecoderSpec& s = *spec_;
  const std::shared_ptr<const DecoderWeights> w = weights_for(backend);
  const int rows = static_cast<int>(residual_rows.rows());
  if (rows == 0) return Matrix(0, s.vocab);
  Tensor x = backend.upload(residual_rows), normed = backend.alloc(rows, s.hidden);
  run_norm(s, backend, x, w->final_norm, w->final_norm_bias, normed);
  Tensor logits = backend.alloc(rows, s.vocab);
  backend.linear(normed, *w->lm_head, Tensor{}, logits);
  if (s.final_softcap > 0) backend.softcap(logits, s.final_softcap);
  return backend.download(logits);
}

Matrix DecoderNetwork::head_outputs(int layer, const RowVector& context_row,
                                    Backend& backend) const {
  const DecoderSpec& s = *spec_;
  const std::shared_ptr<const DecoderWeights> w = weights_for(backend);
  const int dh = s.head_dim;
  Matrix blocks = Matrix::Zero(s.heads, s.heads * dh);
  for (int h = 0; h < s.heads; ++h)
    blocks.row(h).segment(h * dh, dh) = context_row.segment(h * dh, dh);
  Tensor in = backend.upload(blocks), y = backend.alloc(s.heads, s.hidden);
  backend.linear(in, *w->layers[static_cast<std::size_t>(layer)].o, Tensor{}, y);
  return backend.download(y);
}

DecoderNetwork::HostNorm DecoderNetwork::final_norm(Backend& backend) const {
  const std::shared_ptr<const DecoderWeights> w = weights_for(backend);
  HostNorm n;
  n.weight = backend.download(w->final_norm).row(0);
  if (w->final_norm_bias.cols > 0) n.bias = backend.download(w->final_norm_bias).row(0);
  return n;
}

DecoderNetwork::HostNorm DecoderNetwork::post_attention_norm(int layer, Backend& backend) const {
  const std::shared_ptr<const DecoderWeights> w = weights_for(backend);
  const DecoderLayerWeights& L = w->layers[static_cast<std::size_t>(layer)];
  HostNorm n;
  if (L.post_attention_norm.cols > 0) n.weight = backend.download(L.post_attention_norm).row(0);
  if (L.post_attention_norm_bias.cols > 0)
    n.bias = backend.download(L.post_attention_norm_bias).row(0);
  return n;
}

RowVector DecoderNetwork::unembedding_row(int id) const {
  const WeightView& u = file_->lm_head;
  RowVector row(u.cols);
  for (int c = 0; c < u.cols; ++c) row[c] = u.at(id, c);
  return row;
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
