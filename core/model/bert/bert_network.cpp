#include "core/model/bert/bert_network.h"

#include <chrono>

#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

BertConfig read_config(const std::filesystem::path& path) {
  const nlohmann::json j = read_json_file(path);
  BertConfig c;
  c.layers = config_int(j, "num_hidden_layers", -1, path);
  c.heads = config_int(j, "num_attention_heads", -1, path);
  c.d_model = config_int(j, "hidden_size", -1, path);
  c.d_ff = config_int(j, "intermediate_size", 4 * c.d_model, path);
  c.positions = config_int(j, "max_position_embeddings", 512, path);
  c.type_vocab = config_int(j, "type_vocab_size", 2, path);
  c.vocab = config_int(j, "vocab_size", 30522, path);
  c.ln_eps = config_float(j, "layer_norm_eps", 1e-12f, path);
  const std::string act = config_string(j, "hidden_act", "gelu", path);
  if (act == "gelu")
    c.gelu = Gelu::kErf;
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
    c.gelu = Gelu::kTanh;
  else
    throw ModelError(path.string() + ": hidden_act '" + act + "' is not supported");
  const std::string pos = config_string(j, "position_embedding_type", "absolute", path);
  if (pos != "absolute")
    throw ModelError(path.string() + ": position_embedding_type '" + pos + "' is not supported");
  if (c.d_model % c.heads != 0)
    throw ModelError(path.string() + ": hidden_size (" + std::to_string(c.d_model) +
                     ") is not a multiple of num_attention_heads (" + std::to_string(c.heads) +
                     ")");
  return c;
}

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
  const BertConfig c = read_config(folder / "config.json");
  const Checkpoint file = Checkpoint::open(folder);  // model.safetensors, or shards
  // BertForMaskedLM / BertForPreTraining save "bert.…"; cls.*, pooler and position_ids buffers are
  // never asked for. Checkpoints converted from TensorFlow name LayerNorm's parameters gamma/beta.
  const HfWeightReader r(file, {"bert."});
  const int d = c.d_model;
  auto ln = [&](const std::string& name) {
    return LayerNormWeights{r.get({name + ".weight", name + ".gamma"}, 1, d),
                            r.get({name + ".bias", name + ".beta"}, 1, d), c.ln_eps};
  };
  auto linear = [&](const std::string& name, int in, int out) {  // [out x in], x·Wᵀ
    return LinearWeights{r.get(name + ".weight", out, in), r.get(name + ".bias", 1, out), true};
  };
  BertWeights w;
  w.word = r.get("embeddings.word_embeddings.weight", c.vocab, d);
  w.position = r.get("embeddings.position_embeddings.weight", c.positions, d);
  w.type = r.get("embeddings.token_type_embeddings.weight", c.type_vocab, d);
  w.ln_embeddings = ln("embeddings.LayerNorm");
  for (int i = 0; i < c.layers; ++i) {
    if (progress) progress(static_cast<double>(i) / c.layers, "loading layer " + std::to_string(i));
    const std::string p = "encoder.layer." + std::to_string(i);
    TransformerLayerWeights l;
    // Separate statements: the missing-tensor message names the first one missing, in order.
    const LinearWeights q = linear(p + ".attention.self.query", d, d);
    const LinearWeights k = linear(p + ".attention.self.key", d, d);
    const LinearWeights v = linear(p + ".attention.self.value", d, d);
    l.qkv = fuse_qkv(q, k, v);
    l.attention_out = linear(p + ".attention.output.dense", d, d);
    l.ln_attention = ln(p + ".attention.output.LayerNorm");
    l.mlp_up = linear(p + ".intermediate.dense", d, c.d_ff);
    l.mlp_down = linear(p + ".output.dense", c.d_ff, d);
    l.ln_mlp = ln(p + ".output.LayerNorm");
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
  check_token_ids(ids, config_.positions, config_.vocab, "BERT");
  if (token_types) {
    if (static_cast<int>(token_types->size()) != n)
      throw UsageError("BERT: " + std::to_string(token_types->size()) + " token types for " +
                       std::to_string(n) + " tokens");
    for (int t : *token_types)
      if (t < 0 || t >= config_.type_vocab)
        throw UsageError("BERT: token type " + std::to_string(t) + " is outside 0.." +
                         std::to_string(config_.type_vocab - 1));
  }
  AttentionTrace trace = empty_trace("bert", config_.layers, config_.heads, backend);
  if (n == 0) return trace;

  const std::shared_ptr<const BertWeights> w = device_.get(backend, [&](Backend& b) {
    BertWeights dw;
    dw.ln_embeddings = to_backend(b, host_->ln_embeddings);
    dw.layers.reserve(host_->layers.size());
    for (const auto& l : host_->layers) dw.layers.push_back(to_backend(b, l));
    return dw;  // the embedding tables stay on the host: the lookup happens there
  });

  // x[i] = word[id_i] + position[i] + type[type_i]   [n x d], then LayerNorm on the backend.
  Matrix e(n, d);
  for (int i = 0; i < n; ++i) {
    const Eigen::Map<const RowVector> word(
        host_->word.data + static_cast<std::ptrdiff_t>(ids[i]) * d, d);
    const Eigen::Map<const RowVector> pos(host_->position.data + static_cast<std::ptrdiff_t>(i) * d,
                                          d);
    const int type = token_types ? (*token_types)[i] : 0;
    const Eigen::Map<const RowVector> type_row(
        host_->type.data + static_cast<std::ptrdiff_t>(type) * d, d);
    e.row(i) = word + pos + type_row;
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
