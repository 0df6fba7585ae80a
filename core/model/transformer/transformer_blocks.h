#pragma once
// The encoder's building blocks (BERT) — linear layers, multi-head attention that keeps every
// head's weights, the MLP, whole post-LayerNorm layers — written once on the Backend interface, so
// the CPU, CUDA and OpenGL run the very same code (llm.c's lesson, without its copy-pasted CPU/CUDA
// model files). The decoders, GPT-2 among them, run core/model/decoder's network; PerBackendWeights
// below serves both.
//
// Weights are Tensors. Loaded weights live in host memory as "host tensors" (see host_tensor),
// which the CPU backend reads in place; any other backend gets its own copy through to_backend().
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/trace/trace.h"
#include "core/util/matrix.h"

namespace attnscope {

// A host matrix as a Tensor (no copy of the data; the Tensor keeps the matrix alive).
Tensor host_tensor(Matrix m);
// A copy of a host tensor in `backend`'s memory; the CPU backend shares the host memory instead.
Tensor to_backend(Backend& backend, const Tensor& host);
// Host tensor -> Matrix (a copy).
Matrix host_matrix(const Tensor& host);

// y = x·W + b. `weight` is [in x out] (Conv1D's layout) or, when `out_by_in`, [out x in] (BERT's
// nn.Linear, computed as x·Wᵀ without transposing anything in memory).
struct LinearWeights {
  Tensor weight;
  Tensor bias;  // [1 x out]
  bool out_by_in = false;
  // The backend's own form of `weight` (to_backend makes it; nullptr on the host and when the
  // backend keeps none).
  std::shared_ptr<const PreparedWeight> prepared = nullptr;
  int in_features() const { return out_by_in ? weight.cols : weight.rows; }
  int out_features() const { return out_by_in ? weight.rows : weight.cols; }
};

struct LayerNormWeights {
  Tensor gamma, beta;  // [1 x d]
  float eps = 1e-5f;
};

struct TransformerShape {
  int d_model = 0;
  int heads = 0;
  int d_ff = 0;
  Gelu gelu = Gelu::kTanh;
  bool causal = false;
  int head_dim() const { return d_model / heads; }
};

struct TransformerLayerWeights {
  LayerNormWeights ln_attention;  // BERT attention.output.LayerNorm (after attention)
  LayerNormWeights ln_mlp;        // BERT output.LayerNorm (after the MLP)
  LinearWeights qkv;              // [d -> 3d]: columns [0,d) are Q, [d,2d) K, [2d,3d) V
  LinearWeights attention_out;    // [d -> d]
  LinearWeights mlp_up;           // [d -> d_ff]
  LinearWeights mlp_down;         // [d_ff -> d]
};

LinearWeights to_backend(Backend& backend, const LinearWeights& host);
LayerNormWeights to_backend(Backend& backend, const LayerNormWeights& host);
TransformerLayerWeights to_backend(Backend& backend, const TransformerLayerWeights& host);

// y = x·W + b  (x [n x in], y [n x out])
void linear_forward(Backend& backend, const Tensor& x, const LinearWeights& w, Tensor& y);

// Scratch tensors of one forward pass, allocated once per sequence length instead of per op.
struct TransformerWorkspace {
  Tensor normed;     // [n x d]
  Tensor qkv;        // [n x 3d]
  Tensor context;    // [n x d], every head's output side by side
  Tensor projected;  // [n x d]
  Tensor hidden;     // [n x d_ff]
  TransformerWorkspace(Backend& backend, const TransformerShape& shape, int n);
};

// Multi-head self-attention of `x` [n x d] (already normalised when pre-LN) into ws.projected
// [n x d] (the output projection applied, bias included). Each head's [n x n] weights are
// downloaded into `head_weights` (resized to `heads`) when it is not null, and every step of the
// formula (Q, K, V, Q·Kᵀ, scaled and masked, weights, output) appended to `head_steps` when that
// is not null (for the formula view; small inputs only). With `full_steps` false only each head's
// q, k and v are appended (long inputs: no n x n step matrix), and the heads run fused.
void self_attention_forward(Backend& backend, const TransformerShape& shape,
                            const TransformerLayerWeights& w, const Tensor& x,
                            TransformerWorkspace& ws, std::vector<Matrix>* head_weights,
                            std::vector<HeadSteps>* head_steps = nullptr, bool full_steps = true);

// Throws UsageError unless 0 <= id < vocab for every id and ids.size() <= positions.
void check_token_ids(const std::vector<int>& ids, int positions, int vocab,
                     const std::string& model_name);

// Throws ModelError (the folder cannot run this text; exit 1) naming the first token whose id has
// no row in the model's embedding of `vocab` rows. Released checkpoints often have tokenizers that
// define a few ids beyond vocab_size (gemma-3-1b's <image_soft_token> is id 262144 of 262144 rows):
// Hugging Face opens them and fails only when a text produces such an id, and so does attnscope.
void check_tokens_embedded(const Tokens& tokens, int vocab);

// A trace with the model's layer x head grid of (still empty) attention matrices.
AttentionTrace empty_trace(const std::string& kind, int layers, int heads, const Backend& backend);

// One transformer layer on the residual stream `x` [n x d], in place.
void transformer_layer_forward(Backend& backend, const TransformerShape& shape,
                               const TransformerLayerWeights& w, Tensor& x,
                               TransformerWorkspace& ws, std::vector<Matrix>* head_weights,
                               std::vector<HeadSteps>* head_steps = nullptr,
                               bool full_steps = true);

// The weights of a model copied to a backend once and reused for every forward pass (uploading
// GPT-2 small is 500 MB). Keyed by the backend's address: the app keeps one backend per kind alive
// for its whole run, so an address names one backend. The CPU backend needs no copy at all.
template <class Weights>
class PerBackendWeights {
 public:
  PerBackendWeights() = default;
  // Networks are moved into their Model once built; the cache moves along (a fresh mutex).
  PerBackendWeights(PerBackendWeights&& other) noexcept
      : cached_for_(other.cached_for_), cached_(std::move(other.cached_)) {}
  PerBackendWeights& operator=(PerBackendWeights&&) = delete;

  template <class MakeFn>
  std::shared_ptr<const Weights> get(Backend& backend, MakeFn&& make) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cached_ || cached_for_ != &backend) {
      cached_.reset();  // free the old copy before making the new one
      cached_ = std::make_shared<const Weights>(make(backend));
      cached_for_ = &backend;
    }
    return cached_;
  }

 private:
  mutable std::mutex mu_;
  mutable const Backend* cached_for_ = nullptr;
  mutable std::shared_ptr<const Weights> cached_;
};

}  // namespace attnscope
