// The isolated disk galaxy (assets/scenarios/milky-way.json) at modest N keeps its shape for
// several rotation periods at the disk's half-mass radius: the disk's half-mass radius and
// thickness change by less than 20%, and its surface density in annuli stays near the initial
// profile at every check (no rings from a non-equilibrium start, no bar). Labels cpu and slow.
//
// Everything is measured in the disk's own frame: centred on the disk's centre of mass and
// velocity, z along its angular momentum. With a few thousand halo particles the disk wobbles
// and tilts a little as a whole; that is not a change of shape.
//
// Measured (N = 20000, 3 periods, 2026-11-21): R_half within 4%, rms z +8%, median |z| +11%,
// annuli within 21%. The original `galaxy` model (z₀ = 0.1 R_d, Q constant, a disk that
// dominates the centre) fails here: its thickness grows by 60% in 2.5 periods. What the
// thickening is made of: particle noise, mostly the heavy halo particles. It shrinks with N
// (a z₀ = 0.12 R_d variant after one period: median |z| +1% at N = 48000, +15% at N = 16000),
// and a thicker, hotter disk and lighter halo particles resist it.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "sim/backend.h"
#include "sim/ic/scenario_file.h"
#include "sim/simulation.h"

namespace bhviz::sim {
namespace {

constexpr double kTwoPi = 6.283185307179586;
constexpr std::size_t kParticles = 20000;
constexpr double kPeriods = 3.0;
/// Annuli holding 15% of the initial disk each, out to its 90% radius (~4 R_d): equal counts
/// give every annulus the same Poisson noise (~3% at this N).
constexpr int kAnnuli = 6;
constexpr double kAnnulusShare = 0.15;
constexpr double kShapeTolerance = 0.2;
constexpr double kProfileTolerance = 0.25;  // spiral arms move ~10-15% in and out

struct V3 {
  double x = 0, y = 0, z = 0;
};
V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
double dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
V3 cross(V3 a, V3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

struct DiskShape {
  double halfMassRadius = 0.0;  ///< median cylindrical R of the disk particles [length]
  double rmsHeight = 0.0;       ///< rms z within 3 R_d [length]
  double medianHeight = 0.0;    ///< median |z| within 3 R_d [length]
  std::vector<double> radii;    ///< cylindrical R of every disk particle [length]
};

DiskShape measure(const Particles& p) {
  std::vector<std::size_t> disk;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (tagComponent(p.tag[i]) == Component::Disk) disk.push_back(i);
  }
  auto pos = [&](std::size_t i) { return V3{p.posMass[i].x, p.posMass[i].y, p.posMass[i].z}; };
  auto vel = [&](std::size_t i) { return V3{p.vel[i].x, p.vel[i].y, p.vel[i].z}; };
  // Centre: shrinking spheres on the disk particles (robust to a few strays), then its velocity.
  V3 c;
  for (double r = 8.0; r > 0.5; r *= 0.8) {
    V3 sum;
    int k = 0;
    for (std::size_t i : disk) {
      const V3 d = pos(i) - c;
      if (dot(d, d) < r * r) {
        sum = {sum.x + pos(i).x, sum.y + pos(i).y, sum.z + pos(i).z};
        ++k;
      }
    }
    c = {sum.x / k, sum.y / k, sum.z / k};
  }
  V3 u, l;
  int inner = 0;
  for (std::size_t i : disk) {
    const V3 d = pos(i) - c;
    if (dot(d, d) < 9.0) {
      u = {u.x + vel(i).x, u.y + vel(i).y, u.z + vel(i).z};
      ++inner;
    }
  }
  u = {u.x / inner, u.y / inner, u.z / inner};
  for (std::size_t i : disk) {
    const V3 d = pos(i) - c;
    if (dot(d, d) < 9.0) {
      const V3 j = cross(d, vel(i) - u);
      l = {l.x + j.x, l.y + j.y, l.z + j.z};
    }
  }
  const double ln = std::sqrt(dot(l, l));
  const V3 axis{l.x / ln, l.y / ln, l.z / ln};

  DiskShape s;
  std::vector<double> heights;
  double z2 = 0.0;
  for (std::size_t i : disk) {
    const V3 d = pos(i) - c;
    const double z = dot(d, axis);
    const double R = std::sqrt(std::max(0.0, dot(d, d) - z * z));
    s.radii.push_back(R);
    if (R < 3.0) {
      heights.push_back(std::abs(z));
      z2 += z * z;
    }
  }
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  std::vector<double> radii = s.radii;
  s.halfMassRadius = median(radii);
  s.rmsHeight = std::sqrt(z2 / static_cast<double>(heights.size()));
  s.medianHeight = median(heights);
  return s;
}

using Edges = std::array<double, kAnnuli + 1>;

/// Annulus edges [length] holding kAnnulusShare of these radii each, from R = 0.
Edges equalShareEdges(std::vector<double> radii) {
  std::sort(radii.begin(), radii.end());
  Edges e{};
  for (int a = 1; a <= kAnnuli; ++a) {
    e[a] = radii[static_cast<std::size_t>(a * kAnnulusShare * static_cast<double>(radii.size()))];
  }
  return e;
}

/// Share of the radii in each annulus.
std::array<double, kAnnuli> profile(const std::vector<double>& radii, const Edges& e) {
  std::array<double, kAnnuli> share{};
  for (double R : radii) {
    const auto a = std::upper_bound(e.begin(), e.end(), R) - e.begin() - 1;
    if (a >= 0 && a < kAnnuli) share[a] += 1.0 / static_cast<double>(radii.size());
  }
  return share;
}

/// Circular speed at R from the mean azimuthal speed plus the dispersion's support would need
/// the asymmetric drift; the enclosed mass is simpler and what the model was built from:
/// v² = G M(<R)/R of all particles, spherically (the disk's share makes it a few % low).
double rotationPeriod(const Particles& p, double radius) {
  double m = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec4& x = p.posMass[i];
    if (double(x.x) * x.x + double(x.y) * x.y + double(x.z) * x.z < radius * radius) m += x.w;
  }
  return kTwoPi * radius / std::sqrt(m / radius);
}

TEST(Equilibrium, IsolatedDiskGalaxyKeepsItsShape) {
  const ScenarioSpec& spec = builtinScenario("milky-way");
  const Particles initial = buildScenario(spec, kParticles, spec.seed);
  const DiskShape s0 = measure(initial);
  const Edges edges = equalShareEdges(s0.radii);
  const std::array<double, kAnnuli> profile0 = profile(s0.radii, edges);
  const double period = rotationPeriod(initial, s0.halfMassRadius);

  SimParams params = defaultSimParams();
  params.softening = spec.softening;
  params.dtMax = 1.0f / 32.0f;  // the scenario's 1/64 halved: ~370 steps per period here
  params.theta = 0.6f;
  // A fixed interval: the tuned one follows the measured walk times, so a loaded machine would
  // walk another trajectory than this one (tests/test_equilibrium_cusps.cpp says the same).
  params.rebuildInterval = 1;
  Simulation sim(makeCpuBackend(), initial, params);
  const int steps = static_cast<int>(std::ceil(kPeriods * period / params.dtMax));
  const int checks = 6;  // every half period
  std::printf("N = %zu, R_half = %.3f, period %.2f, %d steps\n", kParticles, s0.halfMassRadius,
              period, steps);
  for (int c = 1; c <= checks; ++c) {
    sim.advance(steps * c / checks - steps * (c - 1) / checks);
    const DiskShape s = measure(sim.particles());
    std::printf("t = %6.2f: R_half %.3f (%.3f), rms z %.4f (%.3f), median |z| %.4f (%.3f)\n",
                sim.time(), s.halfMassRadius, s.halfMassRadius / s0.halfMassRadius, s.rmsHeight,
                s.rmsHeight / s0.rmsHeight, s.medianHeight, s.medianHeight / s0.medianHeight);
    double worst = 0.0;  // the largest relative change of an annulus's share
    const std::array<double, kAnnuli> shares = profile(s.radii, edges);
    for (int a = 0; a < kAnnuli; ++a) {
      worst = std::max(worst, std::abs(shares[a] / profile0[a] - 1.0));
      EXPECT_NEAR(shares[a] / profile0[a], 1.0, kProfileTolerance)
          << "annulus " << edges[a] << "-" << edges[a + 1] << " at t = " << sim.time();
    }
    std::printf("          annuli (share / initial):");
    for (int a = 0; a < kAnnuli; ++a) std::printf(" %.3f", shares[a] / profile0[a]);
    std::printf("; largest change %.3f\n", worst);
    EXPECT_NEAR(s.halfMassRadius / s0.halfMassRadius, 1.0, kShapeTolerance) << "t = " << sim.time();
    EXPECT_NEAR(s.rmsHeight / s0.rmsHeight, 1.0, kShapeTolerance) << "t = " << sim.time();
    EXPECT_NEAR(s.medianHeight / s0.medianHeight, 1.0, kShapeTolerance) << "t = " << sim.time();
  }
}

}  // namespace
}  // namespace bhviz::sim
