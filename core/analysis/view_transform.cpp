#include "core/analysis/view_transform.h"

#include <algorithm>
#include <cmath>

#include "core/util/error.h"

namespace attnscope {

Matrix hide_keys(const Matrix& weights, const std::vector<bool>& hidden_key, bool renormalise) {
  if (hidden_key.size() != static_cast<size_t>(weights.cols()))
    throw Error("hide_keys: " + std::to_string(hidden_key.size()) + " key flags for a matrix of " +
                std::to_string(weights.cols()) + " keys");
  Matrix out = weights;
  for (Eigen::Index j = 0; j < out.cols(); ++j)
    if (hidden_key[static_cast<size_t>(j)]) out.col(j).setZero();
  if (renormalise) {
    for (Eigen::Index i = 0; i < out.rows(); ++i) {
      // Summed in double: a 4,096-key row of tiny weights loses digits in float.
      const double left = out.row(i).cast<double>().sum();
      if (left > 0.0) out.row(i) = (out.row(i).cast<double>() / left).cast<float>();
    }
  }
  return out;
}

std::vector<bool> sink_keys(const Tokens& tokens, bool first_token, bool special_tokens) {
  std::vector<bool> hidden(tokens.size(), false);
  for (size_t j = 0; j < tokens.size(); ++j)
    hidden[j] = (first_token && j == 0) || (special_tokens && tokens[j].special);
  return hidden;
}

Matrix apply_sink_options(const Matrix& weights, const Tokens& tokens, const SinkOptions& options) {
  if (!options.any()) return weights;
  return hide_keys(weights, sink_keys(tokens, options.hide_first, options.hide_special),
                   options.renormalise);
}

std::string sink_options_title(const SinkOptions& options) {
  if (!options.any()) return "";
  std::string what = options.hide_first && options.hide_special ? "first and special tokens"
                     : options.hide_first                       ? "first token"
                                                                : "special tokens";
  return what + " hidden" + (options.renormalise ? ", rows renormalised" : "");
}

RowVector combine_rows(const Matrix& weights, const std::vector<int>& rows, RowCombine how) {
  std::vector<int> unique = rows;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(weights.cols());
  for (int r : unique) {
    if (r < 0 || r >= weights.rows())
      throw Error("combine_rows: query " + std::to_string(r) + " is outside the " +
                  std::to_string(weights.rows()) + " rows");
    sum += weights.row(r).cast<double>();
  }
  if (how == RowCombine::mean && !unique.empty()) sum /= static_cast<double>(unique.size());
  return sum.cast<float>();
}

PoolBlock pool_block(int out_index, int in_size, int out_size) {
  // 64-bit products: 4,096 × 4,096 fits in int, but a caller's larger sizes must not overflow.
  const auto edge = [&](int k) {
    return static_cast<int>(static_cast<long long>(k) * in_size / out_size);
  };
  return {edge(out_index), edge(out_index + 1)};
}

Matrix max_pool(const Matrix& weights, int out_rows, int out_cols) {
  if (out_rows < 1 || out_cols < 1)
    throw Error("max_pool: the output needs at least one row and one column (asked for " +
                std::to_string(out_rows) + " x " + std::to_string(out_cols) + ")");
  const int in_rows = static_cast<int>(weights.rows()), in_cols = static_cast<int>(weights.cols());
  out_rows = std::min(out_rows, in_rows);
  out_cols = std::min(out_cols, in_cols);
  Matrix out(out_rows, out_cols);
  if (out_rows == in_rows && out_cols == in_cols) return weights;
  std::vector<PoolBlock> col_blocks(static_cast<size_t>(out_cols));
  for (int c = 0; c < out_cols; ++c)
    col_blocks[static_cast<size_t>(c)] = pool_block(c, in_cols, out_cols);
  for (int r = 0; r < out_rows; ++r) {
    const PoolBlock rb = pool_block(r, in_rows, out_rows);
    // The block's rows reduced first (contiguous in row-major memory), then each column block.
    RowVector row_max = weights.middleRows(rb.begin, rb.end - rb.begin).colwise().maxCoeff();
    for (int c = 0; c < out_cols; ++c) {
      const PoolBlock cb = col_blocks[static_cast<size_t>(c)];
      out(r, c) = row_max.segment(cb.begin, cb.end - cb.begin).maxCoeff();
    }
  }
  return out;
}

float log_scale(float w, float floor, float ceiling) {
  if (!(w > floor)) return 0.0f;  // 0 and NaN too
  if (w >= ceiling) return 1.0f;
  return std::log(w / floor) / std::log(ceiling / floor);
}

float log_scale_inverse(float t, float floor, float ceiling) {
  t = std::clamp(t, 0.0f, 1.0f);
  return floor * std::pow(ceiling / floor, t);
}

}  // namespace attnscope
