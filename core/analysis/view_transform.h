#pragma once
// What a view does to a head's weights before drawing them, computed here so every view, the
// screenshot and the exporters agree: hiding attention sinks, combining several query rows,
// max-pooling a long matrix down to the pixels it gets, and a log colour scale.
#include <string>
#include <vector>

#include "core/text/token.h"
#include "core/util/matrix.h"

namespace attnscope {

// ---- Sinks ------------------------------------------------------------------------------------

// hidden_key[j] == true: column j is set to 0. With `renormalise`, each row is then divided by what
// is left of it so it sums to 1 again over the remaining keys; a row with nothing left stays all 0
// (never NaN). Throws Error when hidden_key.size() != weights.cols().
Matrix hide_keys(const Matrix& weights, const std::vector<bool>& hidden_key, bool renormalise);

// The keys to hide, one flag per token: the first token (position 0, the usual sink) and/or every
// special token ([CLS], [SEP], <|begin_of_text|> …).
std::vector<bool> sink_keys(const Tokens& tokens, bool first_token, bool special_tokens);

struct SinkOptions {
  bool hide_first = false;
  bool hide_special = false;
  bool renormalise = true;
  bool any() const { return hide_first || hide_special; }
};

// hide_keys(weights, sink_keys(tokens, …), options.renormalise); weights unchanged when !any().
Matrix apply_sink_options(const Matrix& weights, const Tokens& tokens, const SinkOptions& options);

// The phrase a view's title carries, e.g. "first token hidden, rows renormalised"; "" when nothing
// is hidden.
std::string sink_options_title(const SinkOptions& options);

// ---- Several query tokens ---------------------------------------------------------------------

enum class RowCombine { sum, mean };

// The sum or mean of the given rows (query tokens). An empty selection gives a row of zeros. Throws
// Error for a row index outside the matrix. Duplicated indices count once.
RowVector combine_rows(const Matrix& weights, const std::vector<int>& rows, RowCombine how);

// ---- Zoomed out: max-pooling ------------------------------------------------------------------

// The input range [begin, end) that output index `out_index` of a reduction from `in_size` to
// `out_size` covers: begin = floor(out_index·in_size / out_size). The blocks of all output indices
// partition [0, in_size) exactly: every input cell lies in exactly one block, none is empty.
// Requires 1 ≤ out_size ≤ in_size.
struct PoolBlock {
  int begin = 0, end = 0;
};
PoolBlock pool_block(int out_index, int in_size, int out_size);

// Each output cell is the max of the input cells of its block (pool_block on rows and columns), so
// a single hot cell stays visible at every reduction. The output is
// [min(out_rows, rows) x min(out_cols, cols)]: a matrix already small enough is never enlarged.
// Throws Error for out_rows or out_cols < 1.
Matrix max_pool(const Matrix& weights, int out_rows, int out_cols);

// ---- Log colour scale -------------------------------------------------------------------------

// Weights below 1e-3 are beyond what a colour can separate from 0 in a 4,096-key row (uniform is
// 2.4e-4) and make the sink-dominated maps of Llama-style models readable (three decades).
inline constexpr float kLogScaleFloor = 1e-3f;

// Maps [floor, ceiling] to [0, 1] logarithmically: log(w/floor) / log(ceiling/floor); clamped to
// 0 below floor (0 included) and 1 above ceiling. Requires 0 < floor < ceiling.
float log_scale(float w, float floor = kLogScaleFloor, float ceiling = 1.0f);
// The inverse, for colourbar ticks: the weight drawn at t in [0, 1].
float log_scale_inverse(float t, float floor = kLogScaleFloor, float ceiling = 1.0f);

}  // namespace attnscope
