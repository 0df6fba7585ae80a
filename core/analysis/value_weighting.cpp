#include "core/analysis/value_weighting.h"

#include <cmath>

#include "core/trace/recomputed_attention.h"
#include "core/util/error.h"

namespace attnscope {

namespace {

// Row `row` (length n, contiguous) times the factors, renormalised; summed in double, as
// hide_keys does: a 4,096-key row of small weights loses digits in float.
void weight_row(float* row, Eigen::Index n, const RowVector& f) {
  double sum = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) sum += static_cast<double>(row[j]) * f[j];
  if (!(sum > 0.0)) {  // nothing left to renormalise (or a row of zeros): all 0, never NaN
    for (Eigen::Index j = 0; j < n; ++j) row[j] = 0.0f;
    return;
  }
  for (Eigen::Index j = 0; j < n; ++j)
    row[j] = static_cast<float>(static_cast<double>(row[j]) * f[j] / sum);
}

void check_factors(Eigen::Index keys, const RowVector& f) {
  if (f.size() != keys)
    throw Error("value weighting: " + std::to_string(f.size()) + " key factors for " +
                std::to_string(keys) + " keys");
}

}  // namespace

const std::vector<std::string>& weighting_names() {
  static const std::vector<std::string> names = {kRawWeighting, kValueNormWeighting};
  return names;
}

void check_weighting_name(const std::string& name) {
  for (const std::string& n : weighting_names())
    if (n == name) return;
  throw UsageError("unknown weighting '" + name + "' (known: raw, value-norm)");
}

void weight_keys_in_place(Matrix& weights, const RowVector& key_factors) {
  check_factors(weights.cols(), key_factors);
  for (Eigen::Index i = 0; i < weights.rows(); ++i)
    weight_row(&weights(i, 0), weights.cols(), key_factors);  // row-major: a row is contiguous
}

void weight_keys_in_place(std::vector<float>& row, const RowVector& key_factors) {
  check_factors(static_cast<Eigen::Index>(row.size()), key_factors);
  weight_row(row.data(), static_cast<Eigen::Index>(row.size()), key_factors);
}

Matrix weight_keys(const Matrix& weights, const RowVector& key_factors) {
  Matrix out = weights;
  weight_keys_in_place(out, key_factors);
  return out;
}

void check_value_norms(const AttentionTrace& trace, const std::string& name) {
  if (trace.value_norms.empty()) return;
  const int layers = trace.layers(), heads = trace.heads(), keys = trace.keys();
  auto fail = [&](const std::string& what) {
    throw Error(name + ": value_norms " + what + " (the trace has " + std::to_string(layers) +
                " layers x " + std::to_string(heads) + " heads x " + std::to_string(keys) +
                " keys)");
  };
  if (static_cast<int>(trace.value_norms.size()) != layers)
    fail("has " + std::to_string(trace.value_norms.size()) + " layers");
  for (std::size_t l = 0; l < trace.value_norms.size(); ++l) {
    if (static_cast<int>(trace.value_norms[l].size()) != heads)
      fail("[" + std::to_string(l) + "] has " + std::to_string(trace.value_norms[l].size()) +
           " heads");
    for (std::size_t h = 0; h < trace.value_norms[l].size(); ++h) {
      const RowVector& n = trace.value_norms[l][h];
      std::string where = "[";
      where.append(std::to_string(l)).append("][").append(std::to_string(h)).append("]");
      if (n.size() != keys) fail(where + " has " + std::to_string(n.size()) + " keys");
      for (Eigen::Index j = 0; j < n.size(); ++j)
        if (!std::isfinite(n[j]) || n[j] < 0.0f)
          fail(where + "[" + std::to_string(j) + "] is " + std::to_string(n[j]) +
               ", not a finite norm >= 0");
    }
  }
}

void apply_weighting(AttentionTrace& trace, const std::string& weighting,
                     const std::string& source) {
  check_weighting_name(weighting);
  if (weighting == kRawWeighting || trace.weighting == kValueNormWeighting) return;
  const std::string who = source.empty() ? "model '" + trace.model.name + "'" : source;
  if (trace.value_norms.empty())
    throw UsageError(
        "--weighting value-norm needs the size of each token's value (value_norms), "
        "which " +
        who + " does not give");
  check_value_norms(trace, who);
  if (trace.recomputed) {
    trace.recomputed = trace.recomputed->with_key_factors(trace.value_norms);
  } else {
    for (std::size_t l = 0; l < trace.attention.size(); ++l)
      for (std::size_t h = 0; h < trace.attention[l].size(); ++h)
        weight_keys_in_place(trace.attention[l][h], trace.value_norms[l][h]);
  }
  trace.weighting = kValueNormWeighting;
}

std::string weighting_title(const AttentionTrace& trace) {
  return trace.weighting == kValueNormWeighting
             ? " \xC2\xB7 weighted by \xE2\x80\x96value\xE2\x80\x96"
             : "";
}

}  // namespace attnscope
