#include "core/model/bert/bert_network.h"

#include <algorithm>
#include <chrono>

#include "core/model/hf/hf_families.h"
#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

TransformerShape shape_of(const BertConfig& c) {
  return {c.d_model, c.heads, c.d_ff, c.gelu, /*causal=*/false};
}

// nn.Linear stores [out x in]: BERT's [d x d] query/key/value are stacked into one [3d x d] weight
// so the three projections are one matmul (x·Wᵀ gives Q | K | V side by side, as GPT-2's c_attn).
LinearWeights fuse_qkv(const LinearWeights& q, const LinearWeights& k, const LinearWeights& v) {
  const Matrix wq = host_matrix(q.weight), wk = host_matrix(k.weight), wv = host_matrix(v.weight);
  Matrix w(wq.rows() + wk.rows() + wv.rows(), wq.cols());
  w << wq, wk, wv;
  const Matrix bq = host_matrix(q.bias), bk = host_matrix(k.bias), bv = host_matrix(v.bias);
  Matrix b(1, bq.cols() + bk.cols() + bv.cols());
  b << bq, bk, bv;
  return {host_tensor(std::move(w)), host_tensor(std::move(b)), true};
}

}  // namespace

BertNetwork BertNetwork::load(const std::filesystem::path& folder, const ProgressFn& progress) {
  const std::filesystem::path path = folder / "config.json";
  return load(folder, encoder_spec_of(read_json_file(path), path), progress);
}

BertNetwork BertNetwork::load(const std::filesystem::path& folder, const EncoderSpec& spec,
                              const ProgressFn& progress) {
  const BertConfig& c = spec.config;
  const EncoderTensorNames& n = spec.names;
  const Checkpoint file = Checkpoint::open(folder);  // model.safetensors, or shards
  // Heads (cls.*, lm_head.*, vocab_*), the pooler and position_ids buffers are never asked for.
  // Checkpoints converted from TensorFlow name LayerNorm's parameters gamma/beta.
  const HfWeightReader r(file, n.prefixes);
  const int d = c.d_model;
  auto ln = [&](const std::string& name) {
    return LayerNormWeights{r.get({name + ".weight", name + ".gamma"}, 1, d),
                            r.get({name + ".bias", name + ".beta"}, 1, d), c.ln_eps};
  };
  auto linear = [&](const std::string& name, int in, int out) {  // [out x in], x·Wᵀ
    return LinearWeights{r.get(name + ".weight", out, in), r.get(name + ".bias", 1, out), true};
  };
  BertWeights w;
  w.word = r.get(n.word, c.vocab, d);
  w.position = r.get(n.position, c.positions, d);
  if (c.type_vocab > 0) w.type = r.get(n.token_type, c.type_vocab, d);
  w.ln_embeddings = ln(n.embeddings_norm);
  for (int i = 0; i < c.layers; ++i) {
    if (progress) progress(static_cast<double>(i) / c.layers, "loading layer " + std::to_string(i));
    const std::string p = n.layer + std::to_string(i) + ".";
    TransformerLayerWeights l;
    // Separate statements: the missing-tensor message names the first one missing, in order.
    const LinearWeights q = linear(p + n.query, d, d);
    const LinearWeights k = linear(p + n.key, d, d);
    const LinearWeights v = linear(p + n.value, d, d);
    l.qkv = fuse_qkv(q, k, v);
    l.attention_out = linear(p + n.attention_out, d, d);
    l.ln_attention = ln(p + n.attention_norm);
    l.mlp_up = linear(p + n.mlp_up, d, c.d_ff);
    l.mlp_down = linear(p + n.mlp_down, c.d_ff, d);
    l.ln_mlp = ln(p + n.mlp_norm);
    w.layers.push_back(std::move(l));
  }
  if (progress) progress(1.0, "loaded");
  return BertNetwork(c, std::move(w));
}

BertNetwork::BertNetwork(BertConfig config, BertWeights host_weights)
    : config_(config), host_(std::make_shared<const BertWeights>(std::move(host_weights))) {
  const int dh = config_.d_model / config_.heads;
  for (const TransformerLayerWeights& l : host_->layers) {
    // nn.Linear's [out x in] weight: W_O in [in x out] form is its transpose, so head h's rows of
    // W_O are the weight's columns [h·dh, (h+1)·dh).
    const Eigen::MatrixXd w = host_matrix(l.attention_out.weight).cast<double>();
    std::vector<Eigen::MatrixXd> grams;
    for (int h = 0; h < config_.heads; ++h) {
      const auto cols = w.middleCols(h * dh, dh);
      grams.push_back(cols.transpose() * cols);
    }
    value_grams_.push_back(std::move(grams));
  }
}

AttentionTrace BertNetwork::forward_ids(const std::vector<int>& ids, Backend& backend,
                                        BertOutputs* outputs,
                                        const std::vector<int>* token_types) const {
  const auto t0 = std::chrono::steady_clock::now();
  const int n = static_cast<int>(ids.size());
  const int d = config_.d_model;
  const std::string who = config_.kind == "bert" ? "BERT" : config_.kind;  // in messages
  check_token_ids(ids, config_.max_tokens(), config_.vocab, who);
  if (token_types) {
    if (static_cast<int>(token_types->size()) != n)
      throw UsageError(who + ": " + std::to_string(token_types->size()) + " token types for " +
                       std::to_string(n) + " tokens");
    for (int t : *token_types)
      if (t < 0 || t >= std::max(config_.type_vocab, 1))
        throw UsageError(who + ": token type " + std::to_string(t) + " is outside 0.." +
                         std::to_string(std::max(config_.type_vocab, 1) - 1));
  }
  AttentionTrace trace = empty_trace(config_.kind, config_.layers, config_.heads, backend);
  if (n == 0) return trace;

  const std::shared_ptr<const BertWeights> w = device_.get(backend, [&](Backend& b) {
    BertWeights dw;
    dw.ln_embeddings = to_backend(b, host_->ln_embeddings);
    dw.layers.reserve(host_->layers.size());
    for (const auto& l : host_->layers) dw.layers.push_back(to_backend(b, l));
    return dw;  // the embedding tables stay on the host: the lookup happens there
  });

  // x[i] = word[id_i] + position[p_i] + type[type_i]   [n x d], then LayerNorm on the backend.
  // p_i = i (BERT), or RoBERTa's padding_idx + (non-padding tokens up to i), padding_idx for a
  // padding token (create_position_ids_from_input_ids).
  const int padding_idx = config_.position_padding_idx;
  Matrix e(n, d);
  int non_padding = 0;
  for (int i = 0; i < n; ++i) {
    const Eigen::Map<const RowVector> word(
        host_->word.data + static_cast<std::ptrdiff_t>(ids[i]) * d, d);
    int p = i;
    if (padding_idx >= 0) p = ids[i] == padding_idx ? padding_idx : padding_idx + ++non_padding;
    const Eigen::Map<const RowVector> pos(host_->position.data + static_cast<std::ptrdiff_t>(p) * d,
                                          d);
    e.row(i) = word + pos;
    if (config_.type_vocab > 0) {
      const int type = token_types ? (*token_types)[i] : 0;
      e.row(i) +=
          Eigen::Map<const RowVector>(host_->type.data + static_cast<std::ptrdiff_t>(type) * d, d);
    }
  }
  const Tensor embedded = backend.upload(e);
  Tensor x = backend.alloc(n, d);
  backend.layer_norm(embedded, w->ln_embeddings.gamma, w->ln_embeddings.beta, w->ln_embeddings.eps,
                     x);

  const TransformerShape shape = shape_of(config_);
  TransformerWorkspace ws(backend, shape, n);
  // Formula steps: all of them for short inputs, only q, k, v for longer ones (while they fit).
  const bool full_steps = n <= kStepsMaxTokens;
  const bool vector_steps =
      keep_vector_steps(n, config_.layers, config_.heads, config_.d_model / config_.heads);
  const int dh = d / config_.heads;
  trace.value_norms.assign(config_.layers, std::vector<RowVector>(config_.heads));
  for (int l = 0; l < config_.layers; ++l) {
    transformer_layer_forward(backend, shape, w->layers[l], x, ws, &trace.attention[l],
                              full_steps || vector_steps ? &trace.steps : nullptr, full_steps);
    // ‖v_j·W_O,h‖ for every key j and head h: V [n x d] (value bias included) is still in ws.qkv.
    const Eigen::MatrixXd v = backend.download(ws.qkv.cols_view(2 * d, d)).cast<double>();
    for (int h = 0; h < config_.heads; ++h) {
      const auto vh = v.middleCols(h * dh, dh);  // [n x dh]
      const Eigen::VectorXd squared =
          (vh * value_grams_[l][h]).cwiseProduct(vh).rowwise().sum();  // v·G·vᵀ per key
      trace.value_norms[l][h] = squared.cwiseMax(0.0).cwiseSqrt().cast<float>().transpose();
    }
  }
  if (outputs) outputs->last_hidden = backend.download(x);

  trace.compute_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return trace;
}

}  // namespace attnscope
