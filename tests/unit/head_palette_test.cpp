// The head-overlay palette (app/ui/head_palette.h) stays distinguishable for colour-blind viewers:
// each colour is converted to linear RGB, passed through Machado, Oliveira & Fernandes (2009)'s
// dichromacy matrices at severity 1 (protanopia, deuteranopia, tritanopia), clipped to the gamut,
// converted to CIELAB (D65), and every pair must stay apart by a minimum ΔE*ab (CIE76: the
// Euclidean distance in L*a*b*). Normal vision is held to a higher bar.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "app/ui/head_palette.h"

namespace attnscope {
namespace {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>;

double srgb_to_linear(double c) {
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

Vec3 multiply(const Mat3& m, const Vec3& v) {
  Vec3 out{};
  for (int i = 0; i < 3; ++i) out[i] = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
  return out;
}

// Linear sRGB (D65) -> CIELAB.
Vec3 lab_from_linear(Vec3 rgb) {
  const Mat3 to_xyz = {{{0.4124564, 0.3575761, 0.1804375},
                        {0.2126729, 0.7151522, 0.0721750},
                        {0.0193339, 0.1191920, 0.9503041}}};
  Vec3 xyz = multiply(to_xyz, rgb);
  const Vec3 white = {0.95047, 1.0, 1.08883};
  auto f = [](double t) {
    const double d = 6.0 / 29.0;
    return t > d * d * d ? std::cbrt(t) : t / (3 * d * d) + 4.0 / 29.0;
  };
  const double fx = f(xyz[0] / white[0]), fy = f(xyz[1] / white[1]), fz = f(xyz[2] / white[2]);
  return {116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)};
}

struct Simulation {
  std::string name;
  Mat3 matrix;  // applied to linear RGB
  double min_delta_e;
};

const std::array<Simulation, 4> kSimulations = {{
    {"normal vision", {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, 25.0},
    {"protanopia",
     {{{0.152286, 1.052583, -0.204868},
       {0.114503, 0.786281, 0.099216},
       {-0.003882, -0.048116, 1.051998}}},
     15.0},
    {"deuteranopia",
     {{{0.367322, 0.860646, -0.227968},
       {0.280085, 0.672501, 0.047413},
       {-0.011820, 0.042940, 0.968881}}},
     15.0},
    {"tritanopia",
     {{{1.255528, -0.076749, -0.178779},
       {-0.078411, 0.930809, 0.147602},
       {0.004733, 0.691367, 0.303900}}},
     15.0},
}};

Vec3 simulated_lab(Rgb8 c, const Mat3& m) {
  Vec3 lin = {srgb_to_linear(c.r / 255.0), srgb_to_linear(c.g / 255.0),
              srgb_to_linear(c.b / 255.0)};
  Vec3 sim = multiply(m, lin);
  for (double& v : sim) v = std::clamp(v, 0.0, 1.0);
  return lab_from_linear(sim);
}

TEST(HeadPalette, AtLeastTwelveColours) {
  EXPECT_GE(kHeadPalette.size(), 12u);
}

TEST(HeadPalette, LabConversionMatchesKnownValues) {
  // Reference values (CIE D65, sRGB): white is L* 100, pure red is (53.24, 80.09, 67.20).
  Vec3 white = simulated_lab({255, 255, 255}, kSimulations[0].matrix);
  EXPECT_NEAR(white[0], 100.0, 0.01);
  EXPECT_NEAR(white[1], 0.0, 0.01);
  Vec3 red = simulated_lab({255, 0, 0}, kSimulations[0].matrix);
  EXPECT_NEAR(red[0], 53.24, 0.05);
  EXPECT_NEAR(red[1], 80.09, 0.05);
  EXPECT_NEAR(red[2], 67.20, 0.05);
  // Red and green, told apart by normal vision, nearly merge for a deuteranope: the simulation
  // is doing its job (it is not the identity).
  auto de = [](Vec3 a, Vec3 b) { return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]); };
  const Mat3& deut = kSimulations[2].matrix;
  EXPECT_GT(de(simulated_lab({200, 60, 60}, kSimulations[0].matrix),
               simulated_lab({90, 140, 60}, kSimulations[0].matrix)),
            3 * de(simulated_lab({200, 60, 60}, deut), simulated_lab({90, 140, 60}, deut)));
}

TEST(HeadPalette, EveryPairStaysApartUnderEachSimulation) {
  for (const Simulation& sim : kSimulations) {
    double worst = 1e9;
    size_t wa = 0, wb = 0;
    for (size_t a = 0; a < kHeadPalette.size(); ++a)
      for (size_t b = a + 1; b < kHeadPalette.size(); ++b) {
        Vec3 la = simulated_lab(kHeadPalette[a], sim.matrix);
        Vec3 lb = simulated_lab(kHeadPalette[b], sim.matrix);
        double d = std::hypot(la[0] - lb[0], la[1] - lb[1], la[2] - lb[2]);
        if (d < worst) worst = d, wa = a, wb = b;
      }
    EXPECT_GE(worst, sim.min_delta_e)
        << sim.name << ": colours " << wa << " and " << wb << " are only " << worst << " apart";
  }
}

TEST(HeadPalette, ReadableOnBothThemes) {
  // L* between 40 and 80: neither lost on the dark background nor washed out on white.
  for (size_t i = 0; i < kHeadPalette.size(); ++i) {
    double l = simulated_lab(kHeadPalette[i], kSimulations[0].matrix)[0];
    EXPECT_GE(l, 40.0) << "colour " << i;
    EXPECT_LE(l, 80.0) << "colour " << i;
  }
}

TEST(HeadPalette, HeadsBeyondTwelveReuseTheColoursInOrder) {
  EXPECT_EQ(head_color(12).r, head_color(0).r);
  EXPECT_EQ(head_color(13).g, head_color(1).g);
  EXPECT_EQ(head_color(-1).b, head_color(0).b);
}

}  // namespace
}  // namespace attnscope
