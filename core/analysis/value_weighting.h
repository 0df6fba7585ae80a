#pragma once
// Value-weighted attention (`--weighting value-norm`, issue 27; Kobayashi et al. 2020's norm-based
// attention). A weight a_ij says where query i looks, not how much it takes from there: a key
// whose value is small moves little into the residual stream however much it is looked at. The
// value-norm weighting multiplies each weight by n_j = ‖v_j · W_O,h‖ (AttentionTrace::value_norms)
// and renormalises the row:
//   w_ij = a_ij·n_j / Σ_j' a_ij'·n_j'
// A row whose weighted sum is 0 (a fully masked row, or one whose keys all have n_j = 0) stays 0.
// Applied right after a run or a read, so every view, aggregate, rollout, summary, figure and
// export works on the weighted trace without knowing of it.
#include <string>
#include <vector>

#include "core/trace/trace.h"
#include "core/util/matrix.h"

namespace attnscope {

inline constexpr const char* kRawWeighting = "raw";
inline constexpr const char* kValueNormWeighting = "value-norm";

// The names `--weighting` takes: "raw" (the default), "value-norm".
const std::vector<std::string>& weighting_names();
// Throws UsageError naming the known weightings unless `name` is one of them.
void check_weighting_name(const std::string& name);

// Row i of the result is a_i ⊙ f / (a_i · f) (sums in double); a row whose weighted sum is 0 is all
// 0, never NaN. `key_factors` holds one factor >= 0 per key (column). Throws Error when its length
// is not the number of columns.
Matrix weight_keys(const Matrix& weights, const RowVector& key_factors);
// The same, in place (one row, or a whole matrix).
void weight_keys_in_place(Matrix& weights, const RowVector& key_factors);
void weight_keys_in_place(std::vector<float>& row, const RowVector& key_factors);

// Throws Error unless `trace.value_norms` is empty or [layers][heads] of one finite norm >= 0 per
// key (`name` in the message: a file's name, or the model's).
void check_value_norms(const AttentionTrace& trace, const std::string& name);

// The trace as `weighting` asks:
//  - "raw": left as it is (a stored trace that is already weighted stays weighted: its raw weights
//    are not in the file);
//  - "value-norm": each head's weights value-weighted as above and trace.weighting set. Stored
//    matrices are rewritten; a compact trace (AttentionTrace::recomputed) gets a
//    RecomputedAttention that weights each head and row it recomputes. A trace already weighted is
//    not weighted twice.
// Throws UsageError for another name, and when the trace has no value_norms, naming `source`
// ("model 'gpt2'", "the stored trace f.json"; default: the trace's model); Error when the norms
// do not fit the trace.
void apply_weighting(AttentionTrace& trace, const std::string& weighting,
                     const std::string& source = {});

// What a view's or figure's title adds: " · weighted by ‖value‖" for a value-norm trace, "" for
// raw.
std::string weighting_title(const AttentionTrace& trace);

}  // namespace attnscope
