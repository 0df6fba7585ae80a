#include "core/model/transformer/transformer_blocks.h"

#include <cmath>

#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {

Tensor host_tensor(Matrix m) {
  auto owner = std::make_shared<Matrix>(std::move(m));
  Tensor t;
  t.data = owner->data();
  t.rows = static_cast<int>(owner->rows());
  t.cols = static_cast<int>(owner->cols());
  t.stride = t.cols;
  t.owner = owner;
  return t;
}

Matrix host_matrix(const Tensor& host) {
  using ConstMap = Eigen::Map<const Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;
  return ConstMap(host.data, host.rows, host.cols, Eigen::OuterStride<>(host.stride));
}

Tensor to_backend(Backend& backend, const Tensor& host) {
  // The CPU backend works on plain host memory, so it reads the loaded weights in place; copying
  // GPT-2 small would cost 500 MB and ~0.1 s for nothing.
  if (backend.name() == "cpu") return host;
  return backend.upload(host_matrix(host));
}

LinearWeights to_backend(Backend& backend, const LinearWeights& host) {
  LinearWeights w{to_backend(backend, host.weight), to_backend(backend, host.bias), host.out_by_in,
                  nullptr};
  w.prepared = backend.prepare_weight(w.weight, w.out_by_in);
  return w;
}

LayerNormWeights to_backend(Backend& backend, const LayerNormWeights& host) {
  return {to_backend(backend, host.gamma), to_backend(backend, host.beta), host.eps};
}

TransformerLayerWeights to_backend(Backend& backend, const TransformerLayerWeights& host) {
  return {to_backend(backend, host.ln_attention), to_backend(backend, host.ln_mlp),
          to_backend(backend, host.qkv),          to_backend(backend, host.attention_out),
          to_backend(backend, host.mlp_up),       to_backend(backend, host.mlp_down)};
}

void linear_forward(Backend& backend, const Tensor& x, const LinearWeights& w, Tensor& y) {
  // x [n x in] · W -> y [n x out]; BERT's [out x in] weights are used as Wᵀ by the matmul itself.
  backend.linear(x, w.weight, w.out_by_in, w.prepared.get(), w.bias, y);
}

TransformerWorkspace::TransformerWorkspace(Backend& backend, const TransformerShape& shape, int n)
    : normed(backend.alloc(n, shape.d_model)),
      qkv(backend.alloc(n, 3 * shape.d_model)),
      context(backend.alloc(n, shape.d_model)),
      projected(backend.alloc(n, shape.d_model)),
      hidden(backend.alloc(n, shape.d_ff)) {}

void self_attention_forward(Backend& backend, const TransformerShape& shape,
                            const TransformerLayerWeights& w, const Tensor& x,
                            TransformerWorkspace& ws, std::vector<Matrix>* head_weights,
                            std::vector<HeadSteps>* head_steps, bool full_steps) {
  const int d = shape.d_model;
  const int dh = shape.head_dim();
  linear_forward(backend, x, w.qkv, ws.qkv);  // [n x 3d]
  AttentionMask mask;
  mask.causal = shape.causal;
  const float score_factor = 1.0f / std::sqrt(static_cast<float>(dh));
  if (!head_steps || !full_steps) {  // the usual case: every head at once, as the backend likes it
    backend.self_attention_heads(ws.qkv, shape.heads, score_factor, mask, ws.context, head_weights);
    linear_forward(backend, ws.context, w.attention_out, ws.projected);  // [n x d]
    // Long inputs: only each head's q, k, v (column slices of the fused projection), [n x dh].
    for (int h = 0; head_steps && h < shape.heads; ++h) {
      HeadSteps& steps = head_steps->emplace_back();
      steps.q = backend.download(ws.qkv.cols_view(h * dh, dh));
      steps.k = backend.download(ws.qkv.cols_view(d + h * dh, dh));
      steps.v = backend.download(ws.qkv.cols_view(2 * d + h * dh, dh));
      steps.scale = score_factor;
    }
    return;
  }
  // The formula view's inputs (small n): head by head, each step kept.
  if (head_weights) head_weights->resize(shape.heads);
  Tensor scores = backend.alloc(x.rows, x.rows);  // [n x n], one head at a time
  for (int h = 0; h < shape.heads; ++h) {
    // Head h's Q, K, V are column slices of the fused projection: views, no copies.
    const Tensor q = ws.qkv.cols_view(h * dh, dh);          // [n x dh]
    const Tensor k = ws.qkv.cols_view(d + h * dh, dh);      // [n x dh]
    const Tensor v = ws.qkv.cols_view(2 * d + h * dh, dh);  // [n x dh]
    // The formula view shows Q·Kᵀ before the scaling, so scale in a separate step here.
    HeadSteps& steps = head_steps->emplace_back();
    steps.q = backend.download(q);
    steps.k = backend.download(k);
    steps.v = backend.download(v);
    backend.matmul(q, k, /*transpose_b=*/true, scores);  // [n x n]
    steps.scores = backend.download(scores);
    backend.scale(scores, score_factor);
    if (mask.any()) backend.mask_fill(scores, mask);
    steps.scaled = backend.download(scores);
    backend.softmax_rows(scores);
    if (head_weights) (*head_weights)[h] = backend.download(scores);
    Tensor out = ws.context.cols_view(h * dh, dh);  // heads concatenated side by side
    backend.matmul(scores, v, false, out);
    steps.weights = backend.download(scores);
    steps.output = backend.download(out);
  }
  linear_forward(backend, ws.context, w.attention_out, ws.projected);  // [n x d]
}

void transformer_layer_forward(Backend& backend, const TransformerShape& shape,
                               const TransformerLayerWeights& w, Tensor& x,
                               TransformerWorkspace& ws, std::vector<Matrix>* head_weights,
                               std::vector<HeadSteps>* head_steps, bool full_steps) {
  // Post-LayerNorm (BERT): x = LN1(x + attn(x)); x = LN2(x + mlp(x))
  self_attention_forward(backend, shape, w, x, ws, head_weights, head_steps, full_steps);
  backend.add(ws.projected, x);
  backend.layer_norm(ws.projected, w.ln_attention.gamma, w.ln_attention.beta, w.ln_attention.eps,
                     x);
  linear_forward(backend, x, w.mlp_up, ws.hidden);
  backend.gelu(ws.hidden, shape.gelu);
  linear_forward(backend, ws.hidden, w.mlp_down, ws.projected);
  backend.add(ws.projected, x);
  backend.layer_norm(ws.projected, w.ln_mlp.gamma, w.ln_mlp.beta, w.ln_mlp.eps, x);
}

void check_token_ids(const std::vector<int>& ids, int positions, int vocab,
                     const std::string& model_name) {
  if (static_cast<int>(ids.size()) > positions)
    throw UsageError(model_name + " takes at most " + std::to_string(positions) + " tokens, got " +
                     std::to_string(ids.size()));
  for (int id : ids)
    if (id < 0 || id >= vocab)
      throw UsageError("token id " + std::to_string(id) + " is outside the vocabulary (size " +
                       std::to_string(vocab) + ")");
}

void check_tokens_embedded(const Tokens& tokens, int vocab) {
  for (const Token& t : tokens)
    if (t.id < 0 || t.id >= vocab)
      throw ModelError("the text's token \"" + unicode::printable_utf8(t.text) + "\" is id " +
                       std::to_string(t.id) + ", which the model has no embedding for (" +
                       std::to_string(vocab) +
                       " rows, vocab_size in config.json): the tokenizer defines more tokens than "
                       "the weights");
}

AttentionTrace empty_trace(const std::string& kind, int layers, int heads, const Backend& backend) {
  AttentionTrace trace;
  trace.model.kind = kind;
  trace.model.layers = layers;
  trace.model.heads = heads;
  trace.backend = backend.name();
  trace.attention.assign(layers, std::vector<Matrix>(heads));
  return trace;
}

}  // namespace attnscope
