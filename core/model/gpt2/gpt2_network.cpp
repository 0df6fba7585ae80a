#include "core/model/gpt2/gpt2_network.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

Gpt2Config read_config(const std::filesystem::path& path) {
  const nlohmann::json j = read_json_file(path);
  Gpt2Config c;
  c.layers = config_int(j, "n_layer", -1, path);
  c.heads = config_int(j, "n_head", -1, path);
  c.d_model = config_int(j, "n_embd", -1, path);
  c.positions = config_int(j, "n_positions", config_int(j, "n_ctx", 1024, path), path);
  c.vocab = config_int(j, "vocab_size", 50257, path);
  c.d_ff = config_int(j, "n_inner", 4 * c.d_model, path);
  c.ln_eps = config_float(j, "layer_norm_epsilon", 1e-5f, path);
  const std::string act = config_string(j, "activation_function", "gelu_new", path);
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
    c.gelu = Gelu::kTanh;
  else if (act == "gelu")
    c.gelu = Gelu::kErf;
  else
    throw ModelError(path.string() + ": activation_function '" + act + "' is not supported");
  if (c.d_model % c.heads != 0)
    throw ModelError(path.string() + ": n_embd (" + std::to_string(c.d_model) +
                     ") is not a multiple of n_head (" + std::to_string(c.heads) + ")");
  return c;
}

TransformerShape shape_of(const Gpt2Config& c) {
  return {c.d_model, c.heads, c.d_ff, c.gelu, NormPlacement::kPre, /*causal=*/true};
}

}  // namespace

Gpt2Network Gpt2Network::load(const std::filesystem::path& folder, const ProgressFn& progress) {
  const Gpt2Config c = read_config(folder / "config.json");
  const Checkpoint file = Checkpoint::open(folder);  // model.safetensors, or shards
  // GPT2LMHeadModel saves "transformer.h.0…"; GPT2Model saves "h.0…". lm_head, attn.bias and
  // attn.masked_bias (causal-mask buffers) are simply never asked for.
  const HfWeightReader r(file, {"transformer."});
  const int d = c.d_model;
  auto ln = [&](const std::string& name) {
    return LayerNormWeights{r.get(name + ".weight", 1, d), r.get(name + ".bias", 1, d), c.ln_eps};
  };
  // GPT-2's Conv1D stores [in x out] and computes x·W.
  auto conv1d = [&](const std::string& name, int in, int out) {
    return LinearWeights{r.get(name + ".weight", in, out), r.get(name + ".bias", 1, out), false};
  };
  Gpt2Weights w;
  w.wte = r.get("wte.weight", c.vocab, d);
  w.wpe = r.get("wpe.weight", c.positions, d);
  for (int i = 0; i < c.layers; ++i) {
    if (progress) progress(static_cast<double>(i) / c.layers, "loading layer " + std::to_string(i));
    const std::string p = "h." + std::to_string(i);
    TransformerLayerWeights l;
    l.ln_attention = ln(p + ".ln_1");
    l.ln_mlp = ln(p + ".ln_2");
    l.qkv = conv1d(p + ".attn.c_attn", d, 3 * d);
    l.attention_out = conv1d(p + ".attn.c_proj", d, d);
    l.mlp_up = conv1d(p + ".mlp.c_fc", d, c.d_ff);
    l.mlp_down = conv1d(p + ".mlp.c_proj", c.d_ff, d);
    w.layers.push_back(std::move(l));
  }
  w.ln_f = ln("ln_f");
  if (progress) progress(1.0, "loaded");
  return Gpt2Network(c, std::move(w));
}

Gpt2Network::Gpt2Network(Gpt2Config config, Gpt2Weights host_weights)
    : config_(config), host_(std::make_shared<const Gpt2Weights>(std::move(host_weights))) {}

AttentionTrace Gpt2Network::forward_ids(const std::vector<int>& ids, Backend& backend, int top_k,
                                        Gpt2Outputs* outputs) const {
  const auto t0 = std::chrono::steady_clock::now();
  const int n = static_cast<int>(ids.size());
  const int d = config_.d_model;
  check_token_ids(ids, config_.positions, config_.vocab, "GPT-2");
  AttentionTrace trace = empty_trace("gpt2", config_.layers, config_.heads, backend);
  if (n == 0) return trace;  // nothing to attend to; every head is an empty matrix

  const std::shared_ptr<const Gpt2Weights> w = device_.get(backend, [&](Backend& b) {
    Gpt2Weights dw;
    dw.wte = to_backend(b, host_->wte);
    dw.layers.reserve(host_->layers.size());
    for (const auto& l : host_->layers) dw.layers.push_back(to_backend(b, l));
    dw.ln_f = to_backend(b, host_->ln_f);
    return dw;  // wpe stays on the host: the embedding lookup happens there
  });

  // Embedding lookup on the host (the backend has no gather): x[i] = wte[id_i] + wpe[i], [n x d].
  Matrix x_host(n, d);
  for (int i = 0; i < n; ++i) {
    const Eigen::Map<const RowVector> tok(host_->wte.data + static_cast<std::ptrdiff_t>(ids[i]) * d,
                                          d);
    const Eigen::Map<const RowVector> pos(host_->wpe.data + static_cast<std::ptrdiff_t>(i) * d, d);
    x_host.row(i) = tok + pos;
  }
  Tensor x = backend.upload(x_host);

  const TransformerShape shape = shape_of(config_);
  TransformerWorkspace ws(backend, shape, n);
  // Formula steps: all of them for short inputs, only q, k, v for longer ones (while they fit).
  const bool full_steps = n <= kStepsMaxTokens;
  const bool vector_steps =
      keep_vector_steps(n, config_.layers, config_.heads, config_.d_model / config_.heads);
  for (int l = 0; l < config_.layers; ++l)
    transformer_layer_forward(backend, shape, w->layers[l], x, ws, &trace.attention[l],
                              full_steps || vector_steps ? &trace.steps : nullptr, full_steps);

  backend.layer_norm(x, w->ln_f.gamma, w->ln_f.beta, w->ln_f.eps, ws.normed);  // [n x d]
  // The LM head only for the last position: the app shows the next token, and the other n-1 rows
  // of logits would cost n times the largest matmul of the model.
  Tensor logits = backend.alloc(1, config_.vocab);
  backend.matmul(ws.normed.rows_view(n - 1, 1), w->wte, /*transpose_b=*/true, logits);  // [1 x V]
  const Matrix logits_host = backend.download(logits);
  if (outputs) {
    outputs->final_hidden = backend.download(ws.normed);
    outputs->last_logits = logits_host.row(0);
  }

  // Softmax over the vocabulary (max subtracted), then the top k.
  const RowVector row = logits_host.row(0);
  const float mx = row.maxCoeff();
  const RowVector e = (row.array() - mx).exp().matrix();
  const float sum = e.sum();
  std::vector<int> order(config_.vocab);
  std::iota(order.begin(), order.end(), 0);
  const int k = std::clamp(top_k, 0, config_.vocab);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
  for (int i = 0; i < k; ++i) trace.predictions.push_back({order[i], "", e[order[i]] / sum});

  trace.compute_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return trace;
}

}  // namespace attnscope
