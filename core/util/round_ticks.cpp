#include "core/util/round_ticks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace attnscope {

namespace {
constexpr std::array<double, 4> kMantissas = {1.0, 2.0, 2.5, 5.0};
constexpr double kEps = 1e-9;

// The round step just below `step` (itself round): 5 -> 2.5 -> 2 -> 1 -> 0.5 ...
double smaller_step(double step) {
  const double p = std::pow(10.0, std::floor(std::log10(step) + kEps));
  const double m = step / p;
  for (size_t i = kMantissas.size(); i-- > 1;)
    if (m > kMantissas[i] - kEps) return kMantissas[i - 1] * p;
  return 5.0 * p / 10.0;
}

// The fewest decimals that write every multiple of `step` exactly (0.25 needs 2, 0.2 needs 1).
int decimals_of(double step) {
  for (int d = 0; d < 10; ++d) {
    const double scaled = step * std::pow(10.0, d);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) return d;
  }
  return 10;
}

std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v == 0.0 ? 0.0 : v);  // never "-0"
  return buf;
}

std::vector<RoundTick> linear(double lo, double hi, int max_ticks) {
  double step = round_step((hi - lo) / (max_ticks - 1));
  std::vector<double> values;
  for (int tries = 0; tries < 8; ++tries) {  // a short range may need a smaller step for two
    values.clear();
    const double first = std::ceil(lo / step - kEps), last = std::floor(hi / step + kEps);
    for (double k = first; k <= last; ++k) values.push_back(k * step);
    if (values.size() >= 2) break;
    step = smaller_step(step);
  }
  const int d = decimals_of(step);
  std::vector<RoundTick> ticks;
  for (double v : values) {
    v = std::round(v / step) * step;  // k * step without accumulated error
    ticks.push_back({v, fixed(v, d)});
  }
  return ticks;
}

std::string log_label(double v) {
  const int e = static_cast<int>(std::floor(std::log10(v) + kEps));
  if (e >= -2 && e < 5) return fixed(v, std::max(0, -e));  // 0.05, 0.2, 1, 20
  char buf[32];
  std::snprintf(buf, sizeof buf, "%de%d", static_cast<int>(std::lround(v / std::pow(10.0, e))), e);
  return buf;  // 1e-3, 5e-4
}
}  // namespace

double round_step(double raw) {
  if (!(raw > 0) || !std::isfinite(raw)) return 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : kMantissas)
    if (m * p >= raw * (1 - kEps)) return m * p;
  return 10.0 * p;
}

std::vector<RoundTick> round_ticks(double lo, double hi, int max_ticks, bool log) {
  max_ticks = std::max(max_ticks, 2);
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (!(hi > lo)) return {{lo, fixed(lo, decimals_of(round_step(std::fabs(lo) / 10)))}};
  if (!log || !(lo > 0)) return linear(lo, hi, max_ticks);
  // Powers of ten, with 2x and 5x while they fit; every k-th power when even those are too many.
  const int e0 = static_cast<int>(std::floor(std::log10(lo) - kEps));
  const int e1 = static_cast<int>(std::ceil(std::log10(hi) + kEps));
  std::vector<double> all, powers;
  for (int e = e0; e <= e1; ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v < lo * (1 - kEps) || v > hi * (1 + kEps)) continue;
      all.push_back(v);
      if (m == 1.0) powers.push_back(v);
    }
  std::vector<double> chosen = static_cast<int>(all.size()) <= max_ticks ? all : powers;
  if (static_cast<int>(chosen.size()) > max_ticks) {
    const size_t every = (chosen.size() + max_ticks - 1) / max_ticks;
    std::vector<double> thinned;
    for (size_t i = 0; i < chosen.size(); i += every) thinned.push_back(chosen[i]);
    chosen = std::move(thinned);
  }
  if (chosen.size() < 2) return linear(lo, hi, max_ticks);  // less than a decade: round steps
  std::vector<RoundTick> ticks;
  for (double v : chosen) ticks.push_back({v, log_label(v)});
  return ticks;
}

}  // namespace attnscope
