#include "core/trace/query_row.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnscope {

QueryRow query_row(const AttentionTrace& trace, int layer, int head, int query) {
  if (query < 0 || query >= trace.queries()) throw std::out_of_range("query_row: no such query");
  QueryRow row;
  row.query = query;
  row.weights = trace.head_row(layer, head, query);  // one row, never the whole head
  const int keys = static_cast<int>(row.weights.size());
  const int queries = trace.queries();
  const size_t index = static_cast<size_t>(layer) * trace.heads() + head;
  if (index >= trace.steps.size()) return row;
  const HeadSteps& s = trace.steps[index];
  if (s.q.rows() != queries || s.k.rows() != keys || s.v.rows() != keys ||
      s.q.cols() != s.k.cols() || s.q.cols() == 0)
    return row;  // steps that do not match this head's weights: show the weights alone
  row.d_k = static_cast<int>(s.k.cols());
  row.scale = s.scale > 0 ? s.scale : 1.0f / std::sqrt(static_cast<float>(row.d_k));
  row.softcap = s.softcap;
  row.kv_head = s.kv_head;
  const bool full = s.scores.rows() == queries && s.scores.cols() == keys &&
                    s.scaled.rows() == queries && s.scaled.cols() == keys;
  row.scores.resize(static_cast<size_t>(keys));
  row.scaled.resize(static_cast<size_t>(keys));
  if (full) {
    row.source = QueryRow::Source::kSteps;
    for (int j = 0; j < keys; ++j)
      row.scores[j] = s.scores(query, j), row.scaled[j] = s.scaled(query, j);
  } else {
    // q_i · k_j, scaled and capped as the model did; a key the model masked has weight exactly 0
    // (a softmax of finite scores underflows to 0 only ~87 nats below the row's maximum).
    row.source = QueryRow::Source::kVectors;
    const Vector scores = s.k * s.q.row(query).transpose();  // [keys]
    for (int j = 0; j < keys; ++j) {
      row.scores[j] = scores[j];
      float v = row.scale * scores[j];
      if (row.softcap > 0) v = std::tanh(v / row.softcap) * row.softcap;
      row.scaled[j] = row.weights[j] == 0.0f ? -std::numeric_limits<float>::infinity() : v;
    }
  }
  // output = Σ_j weights_j · v_j  ([1 x keys] · [keys x d_v])
  const RowVector out =
      Eigen::Map<const RowVector>(row.weights.data(), static_cast<Eigen::Index>(keys)) * s.v;
  row.output.assign(out.data(), out.data() + out.size());
  return row;
}

const char* source_name(QueryRow::Source source) {
  switch (source) {
    case QueryRow::Source::kSteps:
      return "steps";
    case QueryRow::Source::kVectors:
      return "vectors";
    case QueryRow::Source::kWeights:
      break;
  }
  return "weights";
}

}  // namespace attnscope
