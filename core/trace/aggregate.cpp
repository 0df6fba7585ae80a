#include "core/trace/aggregate.h"

#include "core/util/error.h"

namespace attnscope {

namespace {
// Rows of a mean of row-stochastic matrices still sum to 1.
// Head by head (a long trace's heads may be recomputed on demand, never all held).
Matrix mean_of_heads(const AttentionTrace& t, int layer) {
  Matrix sum = *t.head_weights(layer, 0, /*cache=*/false);
  for (int h = 1; h < t.heads(); ++h) sum += *t.head_weights(layer, h, false);
  return sum / static_cast<float>(t.heads());
}

// The strongest weight any head gives each (query, key): rows no longer sum to 1.
Matrix max_of_heads(const AttentionTrace& t, int layer) {
  Matrix m = *t.head_weights(layer, 0, /*cache=*/false);
  for (int h = 1; h < t.heads(); ++h) m = m.cwiseMax(*t.head_weights(layer, h, false));
  return m;
}

// Every head of every layer, equally weighted; `layer` is ignored (the same matrix for all).
Matrix mean_of_all_layers(const AttentionTrace& t, int /*layer*/) {
  Matrix sum = mean_of_heads(t, 0);
  for (int l = 1; l < t.layers(); ++l) sum += mean_of_heads(t, l);
  return sum / static_cast<float>(t.layers());
}

// Attention rollout (Abnar & Zuidema 2020): the residual connection is modelled as an identity
// added to each layer's head mean, Â_l = rownorm(0.5·mean_l + 0.5·I), and the layers are chained,
// R_l = Â_l · Â_(l-1) ··· Â_0: row i of R_l says how much of layer l's output at token i flows from
// each input token. Rows sum to 1 (a fully masked row becomes the identity's row). Accumulated in
// double: 40 layers of products of 4,096-wide rows lose float digits.
Matrix rollout(const AttentionTrace& t, int layer) {
  if (layer < 0 || layer >= t.layers())
    throw UsageError("rollout: layer " + std::to_string(layer) + " is outside the " +
                     std::to_string(t.layers()) + " layers");
  Eigen::MatrixXd result;
  for (int l = 0; l <= layer; ++l) {
    const Matrix mean = mean_of_heads(t, l);
    if (mean.rows() != mean.cols())
      throw Error("rollout needs square attention (every token a query), found " +
                  std::to_string(mean.rows()) + " x " + std::to_string(mean.cols()));
    Eigen::MatrixXd a = 0.5 * mean.cast<double>();
    a.diagonal().array() += 0.5;
    a.array().colwise() /= a.rowwise().sum().array();
    result = l == 0 ? a : Eigen::MatrixXd(a * result);
  }
  return result.cast<float>();
}
std::string layer_heads_title(const std::string& what, const AttentionTrace& t, int layer) {
  return "layer " + std::to_string(layer) + " \xC2\xB7 " + what + " of " +
         std::to_string(t.heads()) + " heads";
}
}  // namespace

const std::vector<HeadAggregate>& head_aggregates() {
  static const std::vector<HeadAggregate> all = {
      {"mean", "mean over the layer's heads", mean_of_heads,
       [](const AttentionTrace& t, int l) { return layer_heads_title("mean", t, l); }},
      {"max", "largest weight of any of the layer's heads", max_of_heads,
       [](const AttentionTrace& t, int l) { return layer_heads_title("max", t, l); }},
      {"layers-mean", "mean over every head of every layer (the same for each layer)",
       mean_of_all_layers,
       [](const AttentionTrace& t, int) {
         return "mean of all " + std::to_string(t.layers()) + " layers";
       }},
      {"rollout",
       "attention rollout: (0.5·A + 0.5·I) of each layer's head mean, rows renormalised, "
       "multiplied through layers 0..layer (Abnar & Zuidema 2020)",
       rollout,
       [](const AttentionTrace&, int l) {
         return "rollout of layers 0\xE2\x80\x93" + std::to_string(l);
       }},
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
