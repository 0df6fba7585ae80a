#include "core/trace/trace.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

#include "core/trace/recomputed_attention.h"

namespace attnscope {

namespace {

constexpr double kDefaultAttentionBudget = 1024.0 * 1024 * 1024;

double budget_from_environment() {
  const char* mb = std::getenv("ATTNSCOPE_ATTENTION_BUDGET_MB");
  if (!mb || !*mb) return kDefaultAttentionBudget;
  char* end = nullptr;
  const double v = std::strtod(mb, &end);
  return (end && *end == '\0' && v >= 0) ? v * 1024 * 1024 : kDefaultAttentionBudget;
}

std::atomic<double>& budget_override() {
  static std::atomic<double> bytes{-1.0};
  return bytes;
}

}  // namespace

double attention_budget_bytes() {
  const double set = budget_override().load();
  if (set >= 0) return set;
  static const double from_environment = budget_from_environment();
  return from_environment;
}

void set_attention_budget_bytes(double bytes) {
  budget_override().store(bytes);
}

bool attention_fits_budget(int queries, int keys, int layers, int heads) {
  return sizeof(float) * static_cast<double>(queries) * keys * layers * heads <=
         attention_budget_bytes();
}

int AttentionTrace::layers() const {
  return recomputed ? recomputed->layers() : static_cast<int>(attention.size());
}

int AttentionTrace::heads() const {
  if (recomputed) return recomputed->heads();
  return attention.empty() ? 0 : static_cast<int>(attention[0].size());
}

int AttentionTrace::queries() const {
  if (recomputed) return recomputed->queries();
  return layers() == 0 || heads() == 0 ? 0 : static_cast<int>(attention[0][0].rows());
}

int AttentionTrace::keys() const {
  if (recomputed) return recomputed->keys();
  return layers() == 0 || heads() == 0 ? 0 : static_cast<int>(attention[0][0].cols());
}

std::shared_ptr<const Matrix> AttentionTrace::head_weights(int layer, int head, bool cache) const {
  if (recomputed)
    return cache ? recomputed->head(layer, head)
                 : std::make_shared<const Matrix>(recomputed->compute(layer, head));
  const Matrix& m =
      attention.at(static_cast<std::size_t>(layer)).at(static_cast<std::size_t>(head));
  return std::shared_ptr<const Matrix>(std::shared_ptr<const Matrix>(), &m);  // not owned
}

std::vector<float> AttentionTrace::head_row(int layer, int head, int query) const {
  if (recomputed) return recomputed->row(layer, head, query);
  const Matrix& m =
      attention.at(static_cast<std::size_t>(layer)).at(static_cast<std::size_t>(head));
  if (query < 0 || query >= m.rows())
    throw std::out_of_range("attention trace: no query " + std::to_string(query));
  const float* r = &m(query, 0);
  return std::vector<float>(r, r + m.cols());
}

std::size_t AttentionTrace::attention_bytes() const {
  if (recomputed) return recomputed->bytes();
  std::size_t total = 0;
  for (const auto& layer : attention)
    for (const Matrix& m : layer) total += sizeof(float) * static_cast<std::size_t>(m.size());
  return total;
}

}  // namespace attnscope
