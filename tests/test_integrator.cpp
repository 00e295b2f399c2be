// Time integration: energy conservation with shared and block steps, the potentials only where
// every step ends, the block scheme's reduction to the shared leapfrog, a closed Kepler orbit, the
// bin rules, determinism across thread counts, a clear stop on a non-finite state, block against
// shared steps on a cusp, and the drift's carried rounding.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "potentials.h"
#include "scenes.h"
#include "sim/common/timestep.h"
#include "sim/simulation.h"
#include "test_support.h"

using namespace bhviz;
using namespace bhviz::sim;

namespace {

SimParams plummerParams(TimeStepping stepping) {
  SimParams p;
  p.mac = MacKind::Bonsai;
  p.theta = 0.5f;
  p.softening = 0.05f;
  p.stepping = stepping;
  // Rebuilds and refits at fixed evaluations: the tuned interval follows the measured times,
  // so the trajectory would depend on the machine's load (test_tree_refit tests the tuning).
  p.rebuildInterval = 2;
  return p;
}

SimParams blockParams(float dtMax, int maxBinDepth, float eta) {
  SimParams p = plummerParams(TimeStepping::Block);
  p.dtMax = dtMax;
  p.maxBinDepth = maxBinDepth;
  p.eta = eta;
  return p;
}

double relativeDrift(const Diagnostics& a, const Diagnostics& b) {
  return std::fabs((b.total() - a.total()) / a.total());
}

Particles twoBody(double e) {
  // Equal masses 0.5 on an orbit of semi-major axis 1 and eccentricity e, starting at apocentre.
  Particles p;
  p.resize(2);
  const double rApo = 1.0 + e;
  const double vApo = std::sqrt(1.0 * (1.0 - e) / (1.0 + e));  // relative speed, M = 1, a = 1
  p.posMass[0] = {float(0.5 * rApo), 0, 0, 0.5f};
  p.posMass[1] = {float(-0.5 * rApo), 0, 0, 0.5f};
  p.vel[0] = {0, float(0.5 * vApo), 0, 0};
  p.vel[1] = {0, float(-0.5 * vApo), 0, 0};
  p.id = {0, 1};
  return p;
}

}  // namespace

TEST(Integrator, SharedStepsConserveEnergyOverOneTimeUnit) {
  SimParams p = plummerParams(TimeStepping::Shared);
  p.dtMax = 1.0f / 128.0f;
  Simulation sim(makeCpuBackend(), makePlummer(4096, 1), p);
  const Diagnostics start = sim.diagnostics();
  EXPECT_NEAR(start.total(), -0.25, 0.02) << "Hénon units";
  sim.advance(128);
  EXPECT_NEAR(sim.time(), 1.0, 1e-9);
  const Diagnostics end = sim.diagnostics();
  EXPECT_LE(relativeDrift(start, end), 1e-3);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(end.momentum[k], start.momentum[k], 1e-4);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(end.angularMomentum[k], start.angularMomentum[k], 1e-3);
}

TEST(Integrator, BlockStepsConserveEnergyAndUseSeveralBins) {
  Simulation sim(makeCpuBackend(), makePlummer(4096, 2), blockParams(1.0f / 16.0f, 6, 0.1f));
  const Diagnostics start = sim.diagnostics();
  sim.advance(16);
  EXPECT_NEAR(sim.time(), 1.0, 1e-9);
  const Diagnostics end = sim.diagnostics();
  EXPECT_LE(relativeDrift(start, end), 1e-3);
  int occupied = 0;
  for (std::uint64_t count : end.binHistogram) occupied += count > 0;
  EXPECT_GE(occupied, 3) << "the test must exercise several bins";
  // Fewer forces than stepping everyone at the deepest occupied bin's step.
  int deepest = 0;
  for (std::size_t b = 0; b < end.binHistogram.size(); ++b)
    if (end.binHistogram[b]) deepest = int(b);
  const double sharedForces = 4096.0 * 16.0 * double(1 << deepest);
  EXPECT_LT(double(sim.totalProfile().interactions.targets), 0.9 * sharedForces);
}

// Potentials are computed only where every particle's step ends (every shared step, a block
// step's last substep): a substep that ends only some keeps every potential as it was, and the
// diagnostics, taken where every step ends, read fresh ones.
TEST(Integrator, PotentialsAreComputedWhereEveryStepEndsAndKeptBetween) {
  for (const P2pMode mode : {P2pMode::Plain, P2pMode::Mutual}) {
    SimParams p = blockParams(1.0f / 8.0f, 5, 0.05f);
    p.p2p = mode;
    Simulation sim(makeCpuBackend(), makePlummer(4096, 12), p);
    SCOPED_TRACE(mode == P2pMode::Plain ? "plain near field" : "mutual near field");
    bhviz::test::expectPotentialsOnlyWhereEveryStepEnds(sim, 12);
  }
}

// What a substep's profile says it walked: as targets exactly the particles active at its tick,
// and the groups the backend built for them (the tree census's count), fewer than the targets.
TEST(Integrator, EachSubstepsProfileCountsItsTargetsAndGroups) {
  Simulation sim(makeCpuBackend(), makePlummer(4096, 9), blockParams(1.0f / 8.0f, 5, 0.05f));
  int partial = 0;
  for (int k = 0; k < 12; ++k) {
    sim.substep();
    const InteractionCounts& c = sim.lastProfile().interactions;
    const std::uint64_t active = bhviz::test::activeAt(sim.particles(), sim.clock());
    EXPECT_EQ(c.targets, active) << "substep " << k;
    EXPECT_EQ(c.groups, sim.backend().treeCensus().groups) << "substep " << k;
    EXPECT_GT(c.groups, 0u) << "substep " << k;
    EXPECT_LE(c.groups, c.targets) << "substep " << k;
    partial += active < 4096 ? 1 : 0;
  }
  EXPECT_GT(partial, 4) << "the test needs substeps with only some particles active";
}

TEST(Integrator, BlockStepsWithOneBinEqualSharedSteps) {
  SimParams shared = plummerParams(TimeStepping::Shared);
  shared.dtMax = 1.0f / 64.0f;
  shared.rebuildInterval = 2;  // the same rebuilds on both (tuned ones follow the timings)
  SimParams block = shared;
  block.stepping = TimeStepping::Block;
  block.maxBinDepth = 8;
  block.eta = 1e6f;  // every particle wants the longest step: everyone stays in bin 0
  const Particles ic = makePlummer(1024, 3);
  Simulation a(makeCpuBackend(), ic, shared), b(makeCpuBackend(), ic, block);
  a.advance(8);
  b.advance(8);
  EXPECT_EQ(b.substeps(), 8u);
  const Particles pa = a.particles(), pb = b.particles();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    ASSERT_EQ(pa.id[i], pb.id[i]);
    ASSERT_EQ(pa.posMass[i].x, pb.posMass[i].x);
    ASSERT_EQ(pa.posMass[i].y, pb.posMass[i].y);
    ASSERT_EQ(pa.vel[i].z, pb.vel[i].z);
  }
}

namespace {

/// A run of the NFW sphere to t = 0.5 with the tree rebuilt at every evaluation: its state by
/// id, energy error and force evaluations per particle.
struct CuspRun {
  Particles byId;
  double energyError = 0.0;
  double evaluations = 0.0;
};

CuspRun runCusp(const Particles& ic, SimParams p) {
  p.softening = scenarioInfo("nfw").softening;
  p.rebuildInterval = 1;
  Simulation sim(makeCpuBackend(), ic, p);
  const double e0 = sim.diagnostics().total();
  sim.advance(static_cast<int>(std::lround(0.5 / p.dtMax)));
  return {sortedById(sim.particles()), std::fabs((sim.diagnostics().total() - e0) / e0),
          double(sim.totalProfile().interactions.targets) / double(ic.size())};
}

}  // namespace

TEST(Integrator, OnACuspBlockStepsAreMoreAccurateForTheSameForces) {
  // The NFW sphere's cusp spreads its particles over the bins (GOTHIC §4). Block steps with
  // η 0.1 and dtMax 1/8 against shared steps of 1/32 (as many force evaluations) and a reference
  // of block steps with η 0.02 and one more bin, all at t = 0.5. Measured at N = 2000 with the
  // drift's rounding carried (sim/common/timestep.h): 16.3 and 16 evaluations per particle; p99
  // |Δx| 7.4e-5 and 2.5e-4; |ΔE/E| 2.3e-5 and 1.3e-4; median |Δx| 6.7e-7 and 5.1e-7. The
  // median is the halo's, whose block steps (up to dtMax) are longer than the shared 1/32: the
  // centre gains, the bulk pays. (Before the carry, every run's median sat at the floor of the
  // reference's own rounded drifts, 1.0–1.1e-6, and the two looked equal.)
  const Particles ic = makeScenario("nfw", 2000, 1);
  SimParams block;
  block.stepping = TimeStepping::Block;
  block.dtMax = 1.0f / 8.0f;
  block.maxBinDepth = 7;
  block.eta = 0.1f;
  SimParams reference = block;
  reference.eta = 0.02f;
  reference.maxBinDepth = 8;
  SimParams shared;
  shared.dtMax = 1.0f / 32.0f;
  const CuspRun ref = runCusp(ic, reference), b = runCusp(ic, block), s = runCusp(ic, shared);
  const ErrorSummary bError = positionError(b.byId, ref.byId);
  const ErrorSummary sError = positionError(s.byId, ref.byId);
  const double bMedian = bError.median, bP99 = bError.p99;
  const double sMedian = sError.median, sP99 = sError.p99;
  EXPECT_LT(b.evaluations, 1.1 * s.evaluations);
  EXPECT_LT(bP99, 0.6 * sP99) << "block " << bP99 << ", shared " << sP99;
  EXPECT_LT(bMedian, 2.0 * sMedian) << "block " << bMedian << ", shared " << sMedian;
  EXPECT_LT(b.energyError, 0.6 * s.energyError);
  EXPECT_GT(ref.evaluations, 4.0 * s.evaluations) << "the reference is much finer than both";
  std::printf("NFW cusp, block / shared: p99 %.3g / %.3g, median %.3g / %.3g, dE %.3g / %.3g\n",
              bP99, sP99, bMedian, sMedian, b.energyError, s.energyError);
}

TEST(Integrator, KeplerOrbitCloses) {
  SimParams p;
  p.softening = 0.0f;
  p.nLeaf = 1;  // the two bodies meet through the tree, not a single leaf
  p.mac = MacKind::BarnesHut;
  const double period = 2.0 * M_PI;  // a = 1, M = 1
  const int steps = 4000;
  p.dtMax = static_cast<float>(period / steps);
  const Particles ic = twoBody(0.5);
  Simulation sim(makeCpuBackend(), ic, p);
  const Diagnostics start = sim.diagnostics();
  EXPECT_NEAR(start.total(), -0.5 * 0.5 / 2.0, 1e-6);  // E = −G m1 m2 / 2a
  sim.advance(steps);
  Particles end = sim.particles();
  if (end.id[0] != 0) std::swap(end.posMass[0], end.posMass[1]);
  EXPECT_NEAR(end.posMass[0].x, ic.posMass[0].x, 2e-3);
  EXPECT_NEAR(end.posMass[0].y, ic.posMass[0].y, 2e-3);
  EXPECT_LE(relativeDrift(start, sim.diagnostics()), 1e-4);
}

TEST(TimeBins, BinsDeepenAnywhereAndRiseOnlyWhereTheLongerStepBegins) {
  const int depth = 4;  // periods: bin 0 → 16 ticks, bin 4 → 1 tick
  EXPECT_EQ(wantedBin(1.0f, 0.05f, 0.2f, 1.0f, depth), 4);  // dt = 0.045: deepest allowed
  EXPECT_EQ(wantedBin(0.0f, 0.05f, 0.2f, 1.0f, depth), 0);
  EXPECT_EQ(wantedBin(1e-6f, 0.05f, 0.2f, 1.0f, depth), 0);  // dt ≫ dtMax: clamped
  EXPECT_EQ(nextBin(3, 5, depth), 4);                        // tick 5 is only a bin-4 boundary
  EXPECT_EQ(nextBin(4, 5, depth), 4);
  EXPECT_EQ(nextBin(1, 4, depth), 2);   // tick 4 starts a bin-2 step, not a bin-1 step
  EXPECT_EQ(nextBin(0, 16, depth), 0);  // a full synchronisation point allows any bin
  for (std::uint64_t tick = 0; tick < 64; ++tick) {
    const int b = nextBin(0, tick, depth);
    EXPECT_TRUE(isActive(b, tick, depth)) << "a new step must start on its own boundary";
  }
}

TEST(Integrator, ResultDoesNotDependOnTheThreadCount) {
  SimParams p = plummerParams(TimeStepping::Block);
  p.dtMax = 1.0f / 16.0f;
  p.maxBinDepth = 4;
  p.rebuildInterval = 3;  // rebuilds and refits; the tuned interval follows measured times
  const Particles ic = makePlummer(3000, 4);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  Simulation one(makeCpuBackend(), ic, p);
  one.advance(2);
  omp_set_num_threads(std::max(2, threads));
  Simulation many(makeCpuBackend(), ic, p);
  many.advance(2);
  omp_set_num_threads(threads);
  const Particles a = one.particles(), b = many.particles();
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a.id[i], b.id[i]);
    ASSERT_EQ(a.posMass[i].x, b.posMass[i].x);
    ASSERT_EQ(a.vel[i].y, b.vel[i].y);
    ASSERT_EQ(a.accPot[i].w, b.accPot[i].w);
  }
}

TEST(Integrator, ClockChangesWaitForSynchronisation) {
  const SimParams p = blockParams(1.0f / 8.0f, 5, 0.05f);
  Simulation sim(makeCpuBackend(), makePlummer(1000, 5), p);
  sim.substep();
  ASSERT_FALSE(sim.synchronized()) << "η is small enough that some particle steps shorter";
  SimParams shared = p;
  shared.stepping = TimeStepping::Shared;
  shared.dtMax = 1.0f / 32.0f;
  sim.setParams(shared);
  while (!sim.synchronized()) sim.substep();
  EXPECT_NEAR(sim.time(), 0.125, 1e-12);
  sim.substep();
  EXPECT_NEAR(sim.time(), 0.125 + 1.0 / 32.0, 1e-12);
  EXPECT_EQ(sim.clock().depth, 0);
}

TEST(Integrator, NonFiniteStateStopsWithTheParticleIds) {
  SimParams p;
  p.dtMax = 4.0f;
  Particles ic = makePlummer(500, 6);
  std::size_t k = 0;
  while (ic.id[k] != 123) ++k;
  ic.vel[k].x = 3e38f;  // finite, but the first drift overflows to infinity
  Simulation sim(makeCpuBackend(), ic, p);
  try {
    sim.substep();
    FAIL() << "expected NonFiniteState";
  } catch (const NonFiniteState& e) {
    EXPECT_NE(std::find(e.ids.begin(), e.ids.end(), 123u), e.ids.end());
    EXPECT_NE(std::string(e.what()).find("123"), std::string::npos);
  }
}

TEST(Integrator, RejectsInvalidParticlesAndParameters) {
  Particles ic = makePlummer(100, 7);
  ic.vel[5].y = NAN;
  EXPECT_THROW(Simulation(makeCpuBackend(), ic, SimParams{}), std::invalid_argument);
  SimParams bad;
  bad.theta = 2.0f;
  EXPECT_THROW(Simulation(makeCpuBackend(), makePlummer(100, 7), bad), InvalidParameter);
  EXPECT_THROW(Simulation(makeCpuBackend(), Particles{}, SimParams{}), InvalidParameter);
}

// The drift carries its sums' rounding (sim/common/timestep.h): a position far larger than its
// increments, moved 10,000 times, ends where the exact sum does to about an ulp; the plain float
// sum of the same increments ends hundreds of ulps off (each rounds the same way).
TEST(Drift, CarriesItsRoundingSoThatManySmallStepsSumExactly) {
  for (const float v : {0.731f, -0.2843f, 1.9f}) {
    const float dt = 1.0f / 4096.0f;  // increments of ~2–30 ulps, each with a fraction to lose
    Vec4 pos{200.0f, -200.0f, 100.0f, 1.0f};  // kpc: halo particles
    Vec4 vel{v, -v, 0.5f * v, 0.0f};
    float plain = pos.x;
    double exact[3] = {pos.x, pos.y, pos.z};
    for (int k = 0; k < 10000; ++k) {
      drift(pos, vel, dt);
      plain += vel.x * dt;
      exact[0] += double(vel.x * dt);  // the same rounded increments, summed exactly
      exact[1] += double(vel.y * dt);
      exact[2] += double(vel.z * dt);
    }
    // At most 1/2048 ulp a drift is left (the carry's resolution, the same each time for equal
    // increments), and an ulp at the end.
    const float got[3] = {pos.x, pos.y, pos.z};
    for (int a = 0; a < 3; ++a) {
      const float ulp = std::nextafter(std::fabs(got[a]), INFINITY) - std::fabs(got[a]);
      EXPECT_LE(std::fabs(got[a] - exact[a]), (10000.0 / 2048.0 + 1.5) * ulp)
          << "v " << v << ", axis " << a;
    }
    // Without the carry the bias is real, and far larger: what the test guards against.
    const float ulp = std::nextafter(200.0f, INFINITY) - 200.0f;
    EXPECT_GT(std::fabs(plain - exact[0]), 50.0 * ulp) << "v " << v;
    EXPECT_LT(std::fabs(pos.x - exact[0]) * 10.0, std::fabs(plain - exact[0])) << "v " << v;
    // The carry lives in w as a finite float, and the velocity is untouched.
    EXPECT_TRUE(std::isfinite(vel.w));
    EXPECT_GE(vel.w, 0.0f);
    EXPECT_LT(vel.w, 2.0f);
    EXPECT_EQ(vel.x, v);
  }
}

// Nothing carried reads as w = 0 (initial conditions, snapshots without it), and a carry is
// always at most half an ulp: a w from elsewhere moves a position by less than one ulp.
TEST(Drift, ZeroCarriesNothingAndAnyCarryIsUnderAnUlp) {
  Vec4 pos{3.0f, 3.0f, 3.0f, 1.0f};
  Vec4 vel{0.0f, 0.0f, 0.0f, 0.0f};
  drift(pos, vel, 0.01f);
  EXPECT_EQ(pos.x, 3.0f);
  EXPECT_EQ(vel.w, 0.0f);
  // Every bit pattern of w: a still particle moves by less than one ulp of its position.
  const float ulp = std::nextafter(3.0f, 4.0f) - 3.0f;
  for (std::uint32_t bits : {0x3FFFFFFFu, 0x20080201u, 0x7FC00000u, 0xFFFFFFFFu, 0x1FF7FDFFu}) {
    Vec4 p{3.0f, 3.0f, 3.0f, 1.0f};
    Vec4 v{0.0f, 0.0f, 0.0f, 0.0f};
    std::memcpy(&v.w, &bits, sizeof bits);
    drift(p, v, 0.01f);
    EXPECT_LE(std::fabs(p.x - 3.0f), ulp) << std::hex << bits;
    EXPECT_LE(std::fabs(p.z - 3.0f), ulp) << std::hex << bits;
    EXPECT_TRUE(std::isfinite(v.w)) << std::hex << bits;
  }
}
