// The uniform cube (Ryoanji's benchmark distribution, sim/ic/uniform.cpp): it fills its cube at
// rest about its centre of mass, its positions are uniform, its masses uniform with their
// total, and it is seeded and the built-in scenario.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "ic_test_support.h"
#include "sim/ic/initial_conditions.h"
#include "sim/ic/scenario_file.h"
#include "sim/params.h"

namespace bhviz::sim {
namespace {

using namespace ictest;

/// Per axis, the particles' lowest and highest coordinate.
struct Extent {
  Vec3d lo, hi;
  Vec3d mid() const { return {0.5 * (lo.x + hi.x), 0.5 * (lo.y + hi.y), 0.5 * (lo.z + hi.z)}; }
};
Extent extent(const Particles& p) {
  Extent e{position(p, 0), position(p, 0)};
  for (std::size_t i = 1; i < p.size(); ++i) {
    const Vec3d x = position(p, i);
    e.lo = {std::min(e.lo.x, x.x), std::min(e.lo.y, x.y), std::min(e.lo.z, x.z)};
    e.hi = {std::max(e.hi.x, x.x), std::max(e.hi.y, x.y), std::max(e.hi.z, x.z)};
  }
  return e;
}

/// Pearson's χ² of `counts` against equal expectations.
double chiSquared(const std::vector<std::size_t>& counts) {
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  const double expected = total / static_cast<double>(counts.size());
  double chi2 = 0.0;
  for (const std::size_t c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

constexpr std::size_t kCubeN = 100000;
constexpr double kCubeHalf = 3.0;

const Particles& referenceCube() {
  static const Particles p = makeUniformCube(kCubeN, 3);
  return p;
}

TEST(UniformCube, FillsTheCubeAtRestCentredOnItsCentreOfMass) {
  const Particles& p = referenceCube();
  const Moments m = moments(p);
  EXPECT_NEAR(m.mass, 0.5, 0.5e-5);
  EXPECT_LT(norm(m.pos), 1e-5 * kCubeHalf);
  for (std::size_t i = 0; i < p.size(); ++i) {
    ASSERT_EQ(norm(velocity(p, i)), 0.0) << "particle " << i;
  }
  // Each side spans 2·halfSide: the extreme of N uniform draws lies ~2·halfSide/N inside a face,
  // and 10⁻³ of the side inside with probability e^(−100). The centring moved the cube's centre
  // by the centre of mass's sampling offset, σ = 2·halfSide/(3√N) per axis.
  const Extent e = extent(p);
  const double sigma = 2.0 * kCubeHalf / (3.0 * std::sqrt(static_cast<double>(kCubeN)));
  const double side = 2.0 * kCubeHalf;
  for (auto [lo, hi] : {std::pair{e.lo.x, e.hi.x}, {e.lo.y, e.hi.y}, {e.lo.z, e.hi.z}}) {
    EXPECT_LE(hi - lo, side * (1.0 + 1e-6));
    EXPECT_GT(hi - lo, side * (1.0 - 1e-3));
    EXPECT_LT(std::abs(0.5 * (lo + hi)), 5.0 * sigma);
  }
  // Another mass and side scale the cube alike.
  const Particles q = makeUniformCube(2000, 4, 2.0, 0.25);
  EXPECT_NEAR(moments(q).mass, 2.0, 2e-5);
  const Extent f = extent(q);
  EXPECT_LE(f.hi.x - f.lo.x, 0.5 * (1.0 + 1e-6));
  EXPECT_GT(f.hi.z - f.lo.z, 0.5 * 0.99);
}

TEST(UniformCube, PositionsAreUniformInTheCube) {
  const Particles& p = referenceCube();
  const Vec3d c = extent(p).mid();
  const double n = static_cast<double>(kCubeN);
  // Per axis about the cube's centre: mean 0 ± h/√(3N), variance h²/3 ± h²·√(4/45)/√N.
  Vec3d sum, sum2;
  std::vector<std::size_t> octants(8, 0), cells(64, 0);
  auto cell = [&](double x, double centre, int k) {  // which of k slabs along one axis
    const int j = static_cast<int>(std::floor((x - centre + kCubeHalf) / (2.0 * kCubeHalf) * k));
    return std::clamp(j, 0, k - 1);
  };
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3d x = position(p, i);
    const Vec3d d{x.x - c.x, x.y - c.y, x.z - c.z};
    sum = {sum.x + d.x, sum.y + d.y, sum.z + d.z};
    sum2 = {sum2.x + d.x * d.x, sum2.y + d.y * d.y, sum2.z + d.z * d.z};
    ++octants[(d.x > 0.0 ? 1 : 0) + (d.y > 0.0 ? 2 : 0) + (d.z > 0.0 ? 4 : 0)];
    ++cells[cell(x.x, c.x, 4) + 4 * cell(x.y, c.y, 4) + 16 * cell(x.z, c.z, 4)];
  }
  const double h2 = kCubeHalf * kCubeHalf;
  for (auto [s, s2] : {std::pair{sum.x, sum2.x}, {sum.y, sum2.y}, {sum.z, sum2.z}}) {
    const double mean = s / n;
    EXPECT_LT(std::abs(mean), 5.0 * kCubeHalf / std::sqrt(3.0 * n));
    EXPECT_NEAR(s2 / n - mean * mean, h2 / 3.0, 5.0 * h2 * std::sqrt(4.0 / 45.0 / n));
  }
  // χ² at its 0.999 quantile: 24.32 for 7 degrees of freedom, 103.4 for 63.
  EXPECT_LT(chiSquared(octants), 24.32);
  EXPECT_LT(chiSquared(cells), 103.4);
}

TEST(UniformCube, MassesAreUniformAndPositiveWithTheirTotal) {
  const Particles& p = referenceCube();
  double total = 0.0, largest = 0.0;
  std::size_t argmax = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double m = p.posMass[i].w;
    ASSERT_GT(m, 0.0) << "particle " << i;
    total += m;
    if (m > largest) {
      largest = m;
      argmax = i;
    }
  }
  EXPECT_NEAR(total, 0.5, 0.5e-5);
  // Uniform in (0, 1) scaled to the total: in (0, ≈ 2·M/N), and given the largest, the others
  // are uniform below it (χ² of 10 bins at its 0.999 quantile, 27.88 for 9 degrees of freedom).
  EXPECT_LT(largest, 2.0 * 0.5 / static_cast<double>(kCubeN) * 1.01);
  std::vector<std::size_t> bins(10, 0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (i == argmax) continue;
    ++bins[std::min<std::size_t>(9, static_cast<std::size_t>(10.0 * p.posMass[i].w / largest))];
  }
  EXPECT_LT(chiSquared(bins), 27.88);
}

TEST(UniformCube, SeededIsTheBuiltInAndRejectsBadParameters) {
  EXPECT_TRUE(identical(makeUniformCube(3000, 42), makeUniformCube(3000, 42)));
  const Particles a = makeUniformCube(3000, 42), b = makeUniformCube(3000, 43);
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a.posMass[i].x == b.posMass[i].x;
  EXPECT_LT(same, a.size() / 100);
  // The scenario file holds the generator's defaults, Ryoanji's: M = ½, half side 3.
  for (std::size_t n : {7u, 1001u}) {
    EXPECT_TRUE(identical(makeScenario("uniform", n, 9), makeUniformCube(n, 9))) << n;
  }
  EXPECT_FLOAT_EQ(scenarioInfo("uniform").softening, 0.001f);
  EXPECT_EQ(norm(position(makeUniformCube(1, 1), 0)), 0.0);  // one particle: its own centre
  EXPECT_THROW(makeUniformCube(0, 1), InvalidParameter);
  EXPECT_THROW(makeUniformCube(10, 1, 0.0), InvalidParameter);
  EXPECT_THROW(makeUniformCube(10, 1, 1.0, -3.0), InvalidParameter);
  EXPECT_THROW(makeUniformCube(10, 1, 1.0, std::nan("")), InvalidParameter);
}

}  // namespace
}  // namespace bhviz::sim
