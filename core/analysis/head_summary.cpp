#include "core/analysis/head_summary.h"

#include <cmath>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <unordered_map>

#include "core/backend/cpu/work_sharing.h"
#include "core/util/error.h"

namespace attnscope {

namespace {

// Position of query row 0 among the keys (see the header), checked so every query is a key.
int first_query_position_of(const Matrix& w, int requested) {
  const int first =
      requested >= 0 ? requested : static_cast<int>(w.cols()) - static_cast<int>(w.rows());
  if (first < 0 || first + w.rows() > w.cols())
    throw Error("head summary: " + std::to_string(w.rows()) + " queries starting at position " +
                std::to_string(first) + " do not fit among " + std::to_string(w.cols()) + " keys");
  return first;
}

// Running mean of one summary over the rows it applies to.
struct Mean {
  double sum = 0.0;
  long count = 0;
  void add(double v) {
    sum += v;
    ++count;
  }
  float value() const { return count == 0 ? 0.0f : static_cast<float>(sum / count); }
};

// For each key position q, the keys that followed earlier occurrences of token ids[q]: the
// induction targets {j+1 : j < q, ids[j] == ids[q]}. Built once per trace shape, O(n + matches).
std::vector<std::vector<int>> induction_targets(const std::vector<int>& ids) {
  std::vector<std::vector<int>> targets(ids.size());
  std::unordered_map<int, std::vector<int>> seen;  // id -> its positions so far
  for (size_t q = 0; q < ids.size(); ++q) {
    if (ids[q] < 0) continue;
    std::vector<int>& earlier = seen[ids[q]];
    for (int j : earlier) targets[q].push_back(j + 1);
    earlier.push_back(static_cast<int>(q));
  }
  return targets;
}

HeadSummary summarize(const Matrix& w, int first_query_position,
                      const std::vector<std::vector<int>>& targets) {
  const int first = first_query_position_of(w, first_query_position);
  Mean entropy, distance, first_mass, previous, diagonal, induction;
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    double row_sum = 0.0;
    for (Eigen::Index j = 0; j < w.cols(); ++j) row_sum += w(i, j);
    if (!(row_sum > 0.0)) continue;  // fully masked (or not a distribution at all)
    const long pos = first + i;
    double h = 0.0, d = 0.0;
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      const double p = w(i, j) / row_sum;
      if (p > 0.0) h -= p * std::log2(p);
      d += p * std::abs(pos - static_cast<long>(j));
    }
    entropy.add(h);
    distance.add(d);
    first_mass.add(w(i, 0) / row_sum);
    if (pos >= 1) previous.add(w(i, pos - 1) / row_sum);
    diagonal.add(w(i, pos) / row_sum);
    if (!targets.empty() && !targets[static_cast<size_t>(pos)].empty()) {
      double mass = 0.0;
      for (int k : targets[static_cast<size_t>(pos)]) mass += w(i, k);
      induction.add(mass / row_sum);
    }
  }
  return {entropy.value(),  distance.value(), first_mass.value(),
          previous.value(), diagonal.value(), induction.value()};
}

}  // namespace

HeadSummary summarize_head(const Matrix& w, int first_query_position,
                           const std::vector<int>& key_token_ids) {
  if (!key_token_ids.empty() && key_token_ids.size() != static_cast<size_t>(w.cols()))
    throw Error("head summary: " + std::to_string(key_token_ids.size()) +
                " token ids for a matrix of " + std::to_string(w.cols()) + " keys");
  return summarize(w, first_query_position, induction_targets(key_token_ids));
}

std::vector<std::vector<HeadSummary>> summarize_trace(const AttentionTrace& trace) {
  std::vector<int> ids = token_ids(trace.tokens);
  if (ids.size() != static_cast<size_t>(trace.keys()))
    ids.clear();  // a trace without its tokens: no induction score
  const auto targets = induction_targets(ids);
  // Head by head, on the cores share_work lends: a long trace's heads may be recomputed on demand
  // (about 60 ms each at 4,096 tokens), and only the heads being summarized are held.
  const int layers = trace.layers(), heads = trace.heads();
  std::vector<std::vector<HeadSummary>> all(static_cast<size_t>(layers),
                                            std::vector<HeadSummary>(static_cast<size_t>(heads)));
  std::mutex failed_mutex;
  std::exception_ptr failed;  // a helper thread must not throw: the first error is rethrown here
  share_work(layers * heads, [&](int i) {
    const int l = i / heads, h = i % heads;
    try {
      all[static_cast<size_t>(l)][static_cast<size_t>(h)] =
          summarize(*trace.head_weights(l, h, /*cache=*/false), -1, targets);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failed_mutex);
      if (!failed) failed = std::current_exception();
    }
  });
  if (failed) std::rethrow_exception(failed);
  return all;
}

const std::vector<HeadSummaryKey>& head_summary_keys() {
  static const std::vector<HeadSummaryKey> keys = {
      {"entropy", "entropy (bits)",
       "how spread out each query's attention is: 0 = one key, log2 n = uniform",
       [](const HeadSummary& s) { return s.entropy; }, false},
      {"distance", "mean distance", "how far back (or ahead) the attended keys are, in tokens",
       [](const HeadSummary& s) { return s.mean_distance; }, true},
      {"first", "first-token mass", "share of attention on the first token (an attention sink)",
       [](const HeadSummary& s) { return s.first_token_mass; }, true},
      {"previous", "previous-token", "share of attention on the token just before the query",
       [](const HeadSummary& s) { return s.previous_token; }, true},
      {"diagonal", "diagonal", "share of attention a query gives itself",
       [](const HeadSummary& s) { return s.diagonal; }, true},
      {"induction", "induction",
       "share of attention on the token after an earlier occurrence of the query's token "
       "(0 when no token repeats)",
       [](const HeadSummary& s) { return s.induction; }, true},
  };
  return keys;
}

const HeadSummaryKey& head_summary_key(const std::string& name) {
  std::string known;
  for (const HeadSummaryKey& k : head_summary_keys()) {
    if (k.name == name) return k;
    known += (known.empty() ? "" : ", ") + k.name;
  }
  throw UsageError("unknown head summary '" + name + "' (known: " + known + ")");
}

float induction_score(const Matrix& w, int period, int first_query_position) {
  if (period < 1) throw Error("induction score: the period must be at least 1");
  const int first = first_query_position_of(w, first_query_position);
  Mean score;
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    const long pos = first + i;
    if (pos < period) continue;
    const double row_sum = w.row(i).cast<double>().sum();
    if (!(row_sum > 0.0)) continue;
    score.add(w(i, pos - period + 1) / row_sum);
  }
  return score.value();
}

}  // namespace attnscope
