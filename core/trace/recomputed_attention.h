#pragma once
// Attention weights kept as what they are computed from (long inputs of large models).
//
// A 4,096-token trace of a 16-layer x 32-head model holds 16·32·4096² floats of weights: 34 GB. The
// weights of a head are softmax(mask(softcap(scale · Q_h·K_gᵀ))), so per layer it is enough to keep
// the Q [n x heads·dh] (after the q norm and rotary embedding) and the K [m x kv_heads·dh] (after
// the k norm and rotary embedding) the forward multiplied, with its scale, softcap and mask:
// 16·4096·(2048 + 512) floats = 671 MB for that model. A head's [n x m] matrix is recomputed when
// asked, by the CPU kernel the forward runs (cpu::attention_head), so on the CPU backend the
// numbers are bit for bit the forward's (on CUDA, the CPU's rounding: within 1e-6). A few recently
// asked heads are cached, so a view that shows one head every frame computes it once.
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include "core/backend/backend.h"
#include "core/util/matrix.h"

namespace attnscope {

// One layer's inputs of the attention softmax.
struct AttentionInputs {
  Matrix q;  // [queries x heads·head_dim]: what the scores multiply (after norm and rotary)
  Matrix k;  // [keys x kv_heads·head_dim]: query head h uses KV head h / (heads / kv_heads)
  int heads = 0, kv_heads = 0, head_dim = 0;
  float scale = 1.0f;    // the factor of Q·Kᵀ
  float softcap = 0.0f;  // Gemma 2's attention logit softcap; 0 = none
  AttentionMask mask;    // causal, sliding window, query_offset
};

class RecomputedAttention {
 public:
  // Throws Error when the layers' shapes disagree (every layer: the same heads and the same
  // numbers of queries and keys).
  explicit RecomputedAttention(std::vector<AttentionInputs> layers, int cached_heads = 4);

  int layers() const { return static_cast<int>(layers_->size()); }
  int heads() const { return layers_->empty() ? 0 : (*layers_)[0].heads; }
  int queries() const { return layers_->empty() ? 0 : static_cast<int>((*layers_)[0].q.rows()); }
  int keys() const { return layers_->empty() ? 0 : static_cast<int>((*layers_)[0].k.rows()); }
  const AttentionInputs& layer(int l) const { return layers_->at(static_cast<size_t>(l)); }

  // Head `head` of layer `layer`: [queries x keys], rows summing to 1 (masked entries 0). Served
  // from the cache of recently asked heads, or computed (outside the lock, so threads asking for
  // different heads do not wait on each other) and cached. Thread-safe. Throws std::out_of_range.
  std::shared_ptr<const Matrix> head(int layer, int head) const;
  // The same matrix, computed now and not cached (a pass over every head: summaries, thumbnails,
  // exports), so such a pass never evicts the heads a view shows.
  Matrix compute(int layer, int head) const;

  // Row `query` of that matrix alone (a view that shows one query's row, such as the formula's):
  // from the cache when the head is there, else one query against every key, n times cheaper
  // than the whole head. Throws std::out_of_range.
  std::vector<float> row(int layer, int head, int query) const;

  // The bytes this object holds: the inputs plus the cached heads.
  std::size_t bytes() const;

  // The same inputs (shared, not copied) whose heads and rows come weighted by a factor per key:
  // each row of head (l, h) times key_factors[l][h], renormalised to sum 1 (the value-norm
  // weighting, core/analysis/value_weighting.h). Throws Error unless the factors are
  // [layers][heads] of one per key.
  std::shared_ptr<const RecomputedAttention> with_key_factors(
      std::vector<std::vector<RowVector>> key_factors) const;
  bool weighted() const { return key_factors_ != nullptr; }

  // The same inputs with more queries and keys appended (a generation step): `q_rows` [r x
  // heads·dh] are the new queries of each layer, `keys` [m x kv·dh] each layer's keys so far.
  // Unweighted (a generator extends its own raw trace; the weighting applies to published copies).
  std::shared_ptr<const RecomputedAttention> extended(const std::vector<Matrix>& q_rows,
                                                      const std::vector<Matrix>& keys) const;

 private:
  // Shared by the copies with_key_factors makes (a long trace's Q and K are hundreds of MB).
  std::shared_ptr<const std::vector<AttentionInputs>> layers_;
  std::size_t cached_heads_;
  // Null: the softmax weights; else key_factors_[layer][head] weights each key (see above).
  std::shared_ptr<const std::vector<std::vector<RowVector>>> key_factors_;
  void apply_key_factors(int layer, int head, Matrix& weights) const;
  // with_key_factors' copy: the same inputs, an empty cache of its own.
  RecomputedAttention(std::shared_ptr<const std::vector<AttentionInputs>> layers,
                      std::size_t cached_heads,
                      std::shared_ptr<const std::vector<std::vector<RowVector>>> key_factors)
      : layers_(std::move(layers)),
        cached_heads_(cached_heads),
        key_factors_(std::move(key_factors)) {}
  struct Cached {
    int layer, head;
    std::shared_ptr<const Matrix> weights;
  };
  mutable std::mutex mutex_;
  mutable std::list<Cached> cache_;  // most recently used first
};

}  // namespace attnscope
