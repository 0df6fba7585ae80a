#pragma once
// Head summaries: one number per property of a head's attention, so a 16 × 32 model can be sorted,
// filtered and read at a glance (the model view's captions, `attnscope heads`).
//
// Every summary reads one head's weights w, a [queries x keys] matrix. Query row i sits at position
// p_i = first_query_position + i among the keys; the default (-1) puts the queries last,
// p_i = keys - queries + i, which is right for a square trace (p_i = i) and for one generation step
// (a 1 x n row whose query is the newest token, p_0 = n - 1).
//
// A row whose weights are all 0 (a fully masked query) has no distribution and is skipped by every
// summary. The other rows are read as distributions: each weight divided by its row's sum (the
// trace's rows sum to 1; a view with hidden keys may not). A summary no row qualifies for is 0, so
// nothing is ever NaN.
#include <functional>
#include <string>
#include <vector>

#include "core/trace/trace.h"
#include "core/util/matrix.h"

namespace attnscope {

struct HeadSummary {
  // Shannon entropy in bits, -Σ_j p_ij·log2 p_ij, averaged over the live rows: 0 when every query
  // looks at one key, log2 n for a uniform row over n keys.
  float entropy = 0.0f;
  // Mean attention distance in positions, Σ_j p_ij·|p_i − j|, averaged over the live rows.
  float mean_distance = 0.0f;
  // Mass on the first key (the "attention sink"), p_i0, averaged over the live rows.
  float first_token_mass = 0.0f;
  // Previous-token score, p_i,(p_i − 1), averaged over the live rows with p_i ≥ 1.
  float previous_token = 0.0f;
  // Diagonal (self) score, p_i,p_i, averaged over the live rows (every query is a key).
  float diagonal = 0.0f;
  // Induction (prefix-matching) score, when the keys' token ids are known: the mass on the tokens
  // that followed earlier occurrences of the query's own token, Σ p_i,(j+1) over j < p_i with
  // id_j = id_(p_i), averaged over the live rows whose token occurred before. An induction head
  // scores near 1 on a repeated random sequence. 0 when no token repeats (or ids are unknown).
  float induction = 0.0f;
};

// key_token_ids: empty, or one vocabulary id per key (the trace's token ids) for the induction
// score; ids < 0 (unknown words) never match. Throws Error when first_query_position puts a query
// outside [0, keys) or key_token_ids has the wrong length.
HeadSummary summarize_head(const Matrix& weights, int first_query_position = -1,
                           const std::vector<int>& key_token_ids = {});

// summaries[layer][head] for every head of the trace, the induction score from its tokens' ids.
std::vector<std::vector<HeadSummary>> summarize_trace(const AttentionTrace& trace);

// The registry of summaries the GUI sorts and filters by and `attnscope heads` prints. A new
// summary is one field above plus one entry in head_summary.cpp's list.
struct HeadSummaryKey {
  std::string name;         // "entropy": the stable key of JSON output and command-line choices
  std::string label;        // "entropy (bits)": a column or caption heading
  std::string description;  // one sentence for a tooltip or --help
  std::function<float(const HeadSummary&)> value;
  bool higher_is_notable = true;  // sort descending to see the notable heads first
};

const std::vector<HeadSummaryKey>& head_summary_keys();
// Throws UsageError naming the known keys.
const HeadSummaryKey& head_summary_key(const std::string& name);

// Induction score for a sequence made of a block of `period` tokens repeated, from the positions
// alone: the mean, over the queries of the repeats (positions p_i ≥ period), of the weight on the
// token after the same token's previous occurrence, p_i,(p_i − period + 1) (Olsson et al. 2022's
// prefix matching). Equals HeadSummary::induction's most-recent occurrence when the block has no
// repeated token of its own. Queries as in summarize_head; fully masked rows are skipped; 0 when
// no query is in a repeat. Throws Error for period < 1.
float induction_score(const Matrix& weights, int period, int first_query_position = -1);

}  // namespace attnscope
