#include "core/trace/aggregate.h"

#include "core/util/error.h"

namespace attnscope {

namespace {
// Rows of a mean of row-stochastic matrices still sum to 1.
Matrix mean_of_heads(const AttentionTrace& t, int layer) {
  const auto& heads = t.attention.at(static_cast<size_t>(layer));
  Matrix sum = heads.at(0);
  for (size_t h = 1; h < heads.size(); ++h) sum += heads[h];
  return sum / static_cast<float>(heads.size());
}

// The strongest weight any head gives each (query, key): rows no longer sum to 1.
Matrix max_of_heads(const AttentionTrace& t, int layer) {
  const auto& heads = t.attention.at(static_cast<size_t>(layer));
  Matrix m = heads.at(0);
  for (size_t h = 1; h < heads.size(); ++h) m = m.cwiseMax(heads[h]);
  return m;
}
}  // namespace

const std::vector<HeadAggregate>& head_aggregates() {
  static const std::vector<HeadAggregate> all = {
      {"mean", "mean over the layer's heads", mean_of_heads},
      {"max", "largest weight of any of the layer's heads", max_of_heads},
  };
  return all;
}

const HeadAggregate& head_aggregate(const std::string& name) {
  std::string known;
  for (const HeadAggregate& a : head_aggregates()) {
    if (a.name == name) return a;
    known += (known.empty() ? "" : ", ") + a.name;
  }
  throw UsageError("unknown aggregate '" + name + "' (known: " + known + ")");
}

}  // namespace attnscope
