#pragma once
// Axis ticks at round numbers: the colorbar of the window's heatmap and of every figure. A reader
// compares a colour with "0.2", not with "0.135"; so a linear axis steps by 1, 2, 2.5 or 5 × 10^n
// and a log axis sits on 1, 2, 5 × 10^n. One function for the window and the figures, so the two
// never disagree on what a colorbar says.
#include <string>
#include <vector>

namespace attnscope {

struct RoundTick {
  double value = 0;
  std::string label;  // "0.25", "1e-3": as few digits as the step needs, the same for every tick
};

// Ticks inside [lo, hi] (ends included), at most `max_ticks` (at least 2 where the range holds
// two round numbers). Linear: the multiples of the smallest round step that keeps the count within
// `max_ticks`. Log (lo > 0): the powers of ten, with 2× and 5× between while they fit.
std::vector<RoundTick> round_ticks(double lo, double hi, int max_ticks, bool log = false);

// The round step (1, 2, 2.5 or 5 × 10^n) at least `raw`.
double round_step(double raw);

}  // namespace attnscope
