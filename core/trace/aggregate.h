#pragma once
// Ways to combine the heads of a layer into one matrix (`render --aggregate NAME`, the views).
// A new aggregate is one entry in aggregate.cpp's list. Each takes the whole trace and a layer, so
// one that spans layers (rollout up to `layer`, the mean of all layers) fits the same signature.
// All of them need every head's full matrix (square for rollout).
#include <functional>
#include <string>
#include <vector>

#include "core/trace/trace.h"

namespace attnscope {

struct HeadAggregate {
  std::string name;         // "mean"
  std::string description;  // "mean of the layer's heads"
  std::function<Matrix(const AttentionTrace&, int layer)> combine;
  // What a view's title says it shows, e.g. "layer 3 · mean of 12 heads", "rollout of layers 0–3".
  std::function<std::string(const AttentionTrace&, int layer)> title;
};

const std::vector<HeadAggregate>& head_aggregates();
// Throws UsageError naming the known aggregates.
const HeadAggregate& head_aggregate(const std::string& name);

}  // namespace attnscope
