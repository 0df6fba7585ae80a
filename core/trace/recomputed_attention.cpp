#include "core/trace/recomputed_attention.h"

#include <cstddef>
#include <stdexcept>
#include <string>

#include "core/analysis/value_weighting.h"
#include "core/backend/cpu/cpu_ops.h"
#include "core/util/error.h"

namespace attnscope {

namespace {

// A read-only Tensor view of columns [c0, c0 + n) of a host matrix (the kernel only reads it).
Tensor columns_of(const Matrix& m, int c0, int n) {
  Tensor t;
  t.data = const_cast<float*>(m.data()) + c0;
  t.rows = static_cast<int>(m.rows());
  t.cols = n;
  t.stride = static_cast<int>(m.cols());
  return t;
}

}  // namespace

RecomputedAttention::RecomputedAttention(std::vector<AttentionInputs> layers, int cached_heads)
    : layers_(std::make_shared<const std::vector<AttentionInputs>>(std::move(layers))),
      cached_heads_(static_cast<std::size_t>(std::max(cached_heads, 0))) {
  for (std::size_t l = 0; l < layers_->size(); ++l) {
    const AttentionInputs& a = (*layers_)[l];
    const AttentionInputs& first = (*layers_)[0];
    const bool ok = a.heads > 0 && a.kv_heads > 0 && a.heads % a.kv_heads == 0 && a.head_dim > 0 &&
                    a.q.cols() == static_cast<Eigen::Index>(a.heads) * a.head_dim &&
                    a.k.cols() == static_cast<Eigen::Index>(a.kv_heads) * a.head_dim &&
                    a.heads == first.heads && a.q.rows() == first.q.rows() &&
                    a.k.rows() == first.k.rows();
    if (!ok)
      throw Error("recomputed attention: layer " + std::to_string(l) + " has q " +
                  std::to_string(a.q.rows()) + "x" + std::to_string(a.q.cols()) + " and k " +
                  std::to_string(a.k.rows()) + "x" + std::to_string(a.k.cols()) + " for " +
                  std::to_string(a.heads) + " heads (" + std::to_string(a.kv_heads) +
                  " KV heads) of " + std::to_string(a.head_dim) + " dims; layer 0 has " +
                  std::to_string(first.heads) + " heads, " + std::to_string(first.q.rows()) +
                  " queries and " + std::to_string(first.k.rows()) + " keys");
  }
}

Matrix RecomputedAttention::compute(int layer, int head) const {
  if (layer < 0 || layer >= layers() || head < 0 || head >= heads())
    throw std::out_of_range("recomputed attention: no layer " + std::to_string(layer) + " head " +
                            std::to_string(head));
  const AttentionInputs& a = (*layers_)[static_cast<std::size_t>(layer)];
  const int g = head / (a.heads / a.kv_heads);
  Matrix weights;
  cpu::attention_head(columns_of(a.q, head * a.head_dim, a.head_dim),
                      columns_of(a.k, g * a.head_dim, a.head_dim), nullptr, a.scale, a.softcap,
                      a.mask, weights, nullptr);
  apply_key_factors(layer, head, weights);
  return weights;
}

void RecomputedAttention::apply_key_factors(int layer, int head, Matrix& weights) const {
  if (key_factors_)
    weight_keys_in_place(
        weights, (*key_factors_)[static_cast<std::size_t>(layer)][static_cast<std::size_t>(head)]);
}

std::shared_ptr<const RecomputedAttention> RecomputedAttention::with_key_factors(
    std::vector<std::vector<RowVector>> key_factors) const {
  bool fits = static_cast<int>(key_factors.size()) == layers();
  for (const auto& layer : key_factors) {
    fits = fits && static_cast<int>(layer.size()) == heads();
    for (const RowVector& f : layer) fits = fits && f.size() == keys();
  }
  if (!fits)
    throw Error("recomputed attention: key factors for " + std::to_string(key_factors.size()) +
                " layers do not fit " + std::to_string(layers()) + " layers x " +
                std::to_string(heads()) + " heads x " + std::to_string(keys()) + " keys");
  return std::shared_ptr<const RecomputedAttention>(new RecomputedAttention(
      layers_, cached_heads_,
      std::make_shared<const std::vector<std::vector<RowVector>>>(std::move(key_factors))));
}

std::vector<float> RecomputedAttention::row(int layer, int head, int query) const {
  if (layer < 0 || layer >= layers() || head < 0 || head >= heads() || query < 0 ||
      query >= queries())
    throw std::out_of_range("recomputed attention: no layer " + std::to_string(layer) + " head " +
                            std::to_string(head) + " query " + std::to_string(query));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Cached& c : cache_)
      if (c.layer == layer && c.head == head) {
        const float* r = &(*c.weights)(query, 0);  // row-major: a row is contiguous
        return std::vector<float>(r, r + c.weights->cols());
      }
  }
  const AttentionInputs& a = (*layers_)[static_cast<std::size_t>(layer)];
  const int g = head / (a.heads / a.kv_heads);
  Tensor q = columns_of(a.q, head * a.head_dim, a.head_dim);
  q.data += static_cast<std::ptrdiff_t>(query) * q.stride;  // that query's row alone
  q.rows = 1;
  AttentionMask mask = a.mask;  // the row's position among the queries
  mask.query_offset += query;
  Matrix weights;
  cpu::attention_head(q, columns_of(a.k, g * a.head_dim, a.head_dim), nullptr, a.scale, a.softcap,
                      mask, weights, nullptr);
  apply_key_factors(layer, head, weights);
  return std::vector<float>(weights.data(), weights.data() + weights.cols());
}

std::shared_ptr<const Matrix> RecomputedAttention::head(int layer, int head) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = cache_.begin(); it != cache_.end(); ++it)
      if (it->layer == layer && it->head == head) {
        cache_.splice(cache_.begin(), cache_, it);
        return it->weights;
      }
  }
  auto weights = std::make_shared<const Matrix>(compute(layer, head));
  std::lock_guard<std::mutex> lock(mutex_);
  if (cached_heads_ == 0) return weights;
  for (const Cached& c : cache_)  // another thread computed it meanwhile: keep one copy
    if (c.layer == layer && c.head == head) return c.weights;
  cache_.push_front({layer, head, weights});
  while (cache_.size() > cached_heads_) cache_.pop_back();
  return weights;
}

std::size_t RecomputedAttention::bytes() const {
  std::size_t total = sizeof(*this);
  for (const AttentionInputs& a : *layers_)
    total += sizeof(float) * static_cast<std::size_t>(a.q.size() + a.k.size());
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Cached& c : cache_)
    total += sizeof(float) * static_cast<std::size_t>(c.weights->size());
  return total;
}

std::shared_ptr<const RecomputedAttention> RecomputedAttention::extended(
    const std::vector<Matrix>& q_rows, const std::vector<Matrix>& keys) const {
  if (q_rows.size() != layers_->size() || keys.size() != layers_->size())
    throw Error("recomputed attention: " + std::to_string(q_rows.size()) +
                " layers of queries and " + std::to_string(keys.size()) +
                " of keys for a trace of " + std::to_string(layers_->size()) + " layers");
  std::vector<AttentionInputs> grown = *layers_;
  for (std::size_t l = 0; l < grown.size(); ++l) {
    AttentionInputs& a = grown[l];
    if (q_rows[l].cols() != a.q.cols() || keys[l].cols() != a.k.cols())
      throw Error("recomputed attention: layer " + std::to_string(l) +
                  ": the new queries or keys have other columns than the trace's");
    const Eigen::Index old = a.q.rows();
    a.q.conservativeResize(old + q_rows[l].rows(), Eigen::NoChange);
    a.q.bottomRows(q_rows[l].rows()) = q_rows[l];
    a.k = keys[l];
  }
  return std::make_shared<const RecomputedAttention>(std::move(grown),
                                                     static_cast<int>(cached_heads_));
}

}  // namespace attnscope
