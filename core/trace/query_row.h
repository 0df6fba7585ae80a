#pragma once
// One query's row through the attention formula, for inputs of any length:
//   scores_j = q_i · k_j,  scaled_j = softcap(scale · scores_j) (−∞ where masked),
//   weights_j = softmax(scaled)_j,  output = Σ_j weights_j · v_j.
// Taken from the trace's full steps when it kept them (short inputs), computed from its q, k, v
// rows otherwise (long inputs keep only those: see keep_vector_steps), and reduced to the trace's
// weights alone when it kept neither (a stored trace, or a model too large to keep q, k, v).
#include <string>
#include <vector>

#include "core/trace/trace.h"

namespace attnscope {

struct QueryRow {
  enum class Source { kSteps, kVectors, kWeights };
  Source source = Source::kWeights;
  int query = -1;
  int d_k = 0;
  float scale = 0.0f;    // the factor applied to q·k (1/√d_k unless the model says otherwise)
  float softcap = 0.0f;  // 0: none
  int kv_head = -1;
  std::vector<float> scores, scaled;  // empty when source == kWeights
  std::vector<float> weights;         // the trace's weights of this row (what the views show)
  std::vector<float> output;          // Σ weights_j · v_j, empty when source == kWeights
};

// The row of `query` in head (layer, head) of `trace`. Throws std::out_of_range for a query,
// layer or head outside the trace.
QueryRow query_row(const AttentionTrace& trace, int layer, int head, int query);

const char* source_name(QueryRow::Source source);  // "steps", "vectors", "weights"

}  // namespace attnscope
