// Colorbar ticks at round numbers (issue 21 item 6): every tick a multiple of a step of
// 1, 2, 2.5 or 5 × 10^n, inside the range, at most the count asked for, labelled as written.
#include "core/util/round_ticks.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace attnscope {
namespace {

// The decimal mantissa of v > 0 (0.25 -> 2.5), read off its scientific notation, not computed
// by the code under test.
double mantissa(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6e", v);  // "2.500000e-01"
  return std::atof(std::string(buf).substr(0, std::string(buf).find('e')).c_str());
}

// Is `step` (> 0) one of 1, 2, 2.5, 5 × 10^n?
bool is_round_step(double step) {
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (std::fabs(mantissa(step) - m) < 1e-5) return true;
  return false;
}

void expect_round_linear(double lo, double hi, int max_ticks) {
  SCOPED_TRACE(std::to_string(lo) + ".." + std::to_string(hi) + " max " +
               std::to_string(max_ticks));
  const auto ticks = round_ticks(lo, hi, max_ticks);
  ASSERT_GE(ticks.size(), 2u);
  EXPECT_LE(static_cast<int>(ticks.size()), max_ticks);
  const double step = std::atof(ticks[1].label.c_str()) - std::atof(ticks[0].label.c_str());
  EXPECT_TRUE(is_round_step(step)) << "step " << step;
  for (size_t i = 0; i < ticks.size(); ++i) {
    const double v = std::atof(ticks[i].label.c_str());  // what the reader sees
    EXPECT_NEAR(v, ticks[i].value, 1e-9 + 1e-6 * std::fabs(v)) << ticks[i].label;
    EXPECT_GE(v, lo - 1e-9);
    EXPECT_LE(v, hi + 1e-9);
    EXPECT_NEAR(v / step, std::round(v / step), 1e-6) << ticks[i].label << " step " << step;
    if (i > 0) {
      EXPECT_NEAR(v - std::atof(ticks[i - 1].label.c_str()), step, 1e-9 + 1e-6 * step);
    }
  }
}

TEST(RoundTicks, LinearTicksStepByRoundNumbers) {
  expect_round_linear(0, 0.54, 5);    // the old colorbar: 0, 0.135, 0.27 ...
  expect_round_linear(0, 0.3271, 5);  // the review's 0.11, 0.22, 0.32
  expect_round_linear(0, 1, 5);
  expect_round_linear(0, 0.0413, 6);  // a long text's small weights
  expect_round_linear(0, 0.54, 2);
  expect_round_linear(0.31, 0.34, 5);
  expect_round_linear(0, 17.3, 6);
  // The labels carry as many decimals as the step needs, the same for each.
  const auto quarter = round_ticks(0, 1, 5);
  ASSERT_EQ(quarter.size(), 5u);
  EXPECT_EQ(quarter[1].label, "0.25");
  EXPECT_EQ(quarter[4].label, "1.00");
}

TEST(RoundTicks, LogTicksSitOnOneTwoFiveTimesAPowerOfTen) {
  for (auto [lo, hi] :
       {std::pair{1e-3, 0.54}, std::pair{1e-3, 1.0}, std::pair{0.05, 0.5}, std::pair{1e-9, 1.0}}) {
    SCOPED_TRACE(std::to_string(lo) + ".." + std::to_string(hi));
    const auto ticks = round_ticks(lo, hi, 5, true);
    ASSERT_GE(ticks.size(), 2u);
    EXPECT_LE(ticks.size(), 5u);
    for (const RoundTick& t : ticks) {
      const double v = std::atof(t.label.c_str());
      EXPECT_NEAR(v, t.value, 1e-6 * v) << t.label;
      EXPECT_GE(v, lo * (1 - 1e-9));
      EXPECT_LE(v, hi * (1 + 1e-9));
      const double m = mantissa(v);
      EXPECT_TRUE(std::fabs(m - 1) < 1e-5 || std::fabs(m - 2) < 1e-5 || std::fabs(m - 5) < 1e-5)
          << t.label;
    }
  }
  const auto decades = round_ticks(1e-3, 1.0, 5, true);
  ASSERT_EQ(decades.size(), 4u);
  EXPECT_EQ(decades[0].label, "1e-3");
  EXPECT_EQ(decades[3].label, "1");
}

TEST(RoundTicks, DegenerateRangesGiveOneTickOrNone) {
  EXPECT_EQ(round_ticks(0.5, 0.5, 5).size(), 1u);
  EXPECT_TRUE(round_ticks(0, NAN, 5).empty());
  EXPECT_EQ(round_step(0.135), 0.2);
  EXPECT_EQ(round_step(0.11), 0.2);
  EXPECT_EQ(round_step(0.22), 0.25);
  EXPECT_EQ(round_step(3.1), 5.0);
}

}  // namespace
}  // namespace attnscope
