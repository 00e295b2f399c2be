// The CUDA backend end to end: the same Simulation as the CPU tests, with the CUDA backend,
// against the CPU backend and against exact direct summation (on the GPU, in double).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "../potentials.h"
#include "../scenes.h"
#include "backend_support.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/device_buffer.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

using namespace bhviz::sim;
using bhviz::test::P99;
using bhviz::test::plummerParams;
using bhviz::test::relativeDifferenceP99;

namespace {

/// Block steps of dtMax 1/8, five bins deep, η 0.05: substeps with some particles in mid-step.
SimParams blockPlummerParams(SimParams p = plummerParams()) {
  p.stepping = TimeStepping::Block;
  p.dtMax = 1.0f / 8.0f;
  p.maxBinDepth = 5;
  p.eta = 0.05f;
  return p;
}

Simulation cudaSim(const Particles& ic, const SimParams& p) {
  return Simulation(cuda::makeCudaBackend(ic.size()), ic, p);
}

ForceError gpuForceError(const Simulation& sim, float softening, std::size_t sample = 4000) {
  const Particles p = sim.particles();
  const std::vector<std::uint32_t> targets = sampleIndices(p.size(), sample, 11);
  return forceError(p, targets, cuda::directSumDevice(p, targets, softening));
}

double relativeDrift(const Diagnostics& a, const Diagnostics& b) {
  return std::fabs((b.total() - a.total()) / a.total());
}

}  // namespace

TEST(CudaDirectSum, MatchesTheCpuReference) {
  REQUIRE_GPU();
  const Particles p = makePlummer(3000, 1);
  const std::vector<std::uint32_t> targets = sampleIndices(p.size(), 300, 2);
  const auto gpu = cuda::directSumDevice(p, targets, 0.05);
  const auto cpu = directSum(p, targets, 0.05);
  for (std::size_t t = 0; t < targets.size(); ++t) {
    for (int k = 0; k < 4; ++k)
      EXPECT_NEAR(gpu[t][k], cpu[t][k], 1e-9 * (1.0 + std::fabs(cpu[t][k])));
  }
}

TEST(CudaBackend, FirstForcesMatchTheCpuBackend) {
  REQUIRE_GPU();
  for (MacKind mac : {MacKind::BarnesHut, MacKind::Bonsai, MacKind::Multipole}) {
    const Particles ic = makePlummer(50000, 3);
    const Simulation gpu = cudaSim(ic, plummerParams(mac));
    const Simulation cpu(makeCpuBackend(), ic, plummerParams(mac));
    const P99 diff =
        relativeDifferenceP99(sortedById(gpu.particles()), sortedById(cpu.particles()));
    EXPECT_LE(diff.acc, 1e-4) << toString(mac);
    // The same lists up to MAC decisions that fp32 moments flip at the margin.
    const double gi =
        double(gpu.lastProfile().interactions.cell + gpu.lastProfile().interactions.particle);
    const double ci =
        double(cpu.lastProfile().interactions.cell + cpu.lastProfile().interactions.particle);
    EXPECT_NEAR(gi / ci, 1.0, 1e-3) << toString(mac);
  }
}

// The far cells' expansion by mass reads |a_old|: on a state that carries forces, an evaluation
// without old accelerations expands what the distance rule alone does (the backend passes gamma
// 0), one with them more; and the second evaluation's forces follow the CPU backend's.
TEST(CudaBackend, TheExpansionByMassNeedsOldAccelerations) {
  REQUIRE_GPU();
  const Particles ic = makePlummer(50000, 5);
  const SimParams p = plummerParams(MacKind::Bonsai);
  ASSERT_GT(p.expansionBudget, 0.0f);
  ASSERT_GT(p.expansionRatio, 0.0f);
  const Particles withForces = cudaSim(ic, p).particles();
  auto expanded = [&](float budget, bool oldAccValid) {
    SimParams q = p;
    q.expansionBudget = budget;
    std::unique_ptr<Backend> b = cuda::makeCudaBackend(ic.size());
    b->upload(withForces);
    b->computeForces(Clock{0.0, 0, 0, q.dtMax}, q, ForceTargets::All, oldAccValid);
    return b->profile().interactions.expanded;
  };
  EXPECT_EQ(expanded(p.expansionBudget, false), expanded(0.0f, false));
  EXPECT_GT(expanded(p.expansionBudget, true), expanded(0.0f, true));
  // Both backends from the same state and |a_old|.
  auto evaluate = [&](std::unique_ptr<Backend> b, Particles& out) {
    b->upload(withForces);
    b->computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, true);
    b->download(out);
    return double(b->profile().interactions.expanded);
  };
  Particles gpu, cpu;
  const double g = evaluate(cuda::makeCudaBackend(ic.size()), gpu);
  const double c = evaluate(makeCpuBackend(), cpu);
  const P99 diff = relativeDifferenceP99(sortedById(gpu), sortedById(cpu));
  EXPECT_LE(diff.acc, 1e-4);
  EXPECT_NEAR(g / c, 1.0, 1e-3) << "expanded cells, gpu " << g << " cpu " << c;
}

TEST(CudaBackend, FirstForcesMatchTheCpuBackendWithLargeSoftening) {
  // ε = 0.5: the quadrupole's softening term (−tr Q·ε², made on the device from the record's
  // tr Q) is a sizeable part of each cell's force, so a slip there shows against the CPU.
  REQUIRE_GPU();
  const Particles ic = makePlummer(20000, 6);
  SimParams p = plummerParams();
  p.softening = 0.5f;
  const Simulation gpu = cudaSim(ic, p);
  const Simulation cpu(makeCpuBackend(), ic, p);
  const P99 diff = relativeDifferenceP99(sortedById(gpu.particles()), sortedById(cpu.particles()));
  EXPECT_LE(diff.acc, 1e-4);
  EXPECT_LE(diff.pot, 1e-5);
}

TEST(CudaBackend, AccuracyBoundsForEveryMac) {
  REQUIRE_GPU();
  const Particles ic = makePlummer(20000, 2026);
  struct Case {
    MacKind mac;
    float param;
  };
  for (Case c : {Case{MacKind::BarnesHut, 0}, Case{MacKind::Bonsai, 0},
                 Case{MacKind::Multipole, 1e-4f}, Case{MacKind::Acceleration, 2e-3f}}) {
    SimParams p = plummerParams(c.mac);
    p.macParam = c.param;
    Simulation sim = cudaSim(ic, p);
    if (c.mac == MacKind::Acceleration) sim.recomputeForces();  // now with |a_old|
    const ForceError e = gpuForceError(sim, p.softening);
    EXPECT_LE(e.median, 1e-3) << toString(c.mac);
    EXPECT_LE(e.p99, 1e-2) << toString(c.mac);
  }
}

TEST(CudaBackend, ErrorFallsAsThetaFallsAndWithTheQuadrupole) {
  REQUIRE_GPU();
  const Particles ic = makePlummer(20000, 2026);
  double prev = INFINITY;
  for (float theta : {0.9f, 0.7f, 0.5f, 0.35f}) {
    const ForceError e = gpuForceError(cudaSim(ic, plummerParams(MacKind::Bonsai, theta)), 0.05f);
    EXPECT_LT(e.median, prev) << "θ = " << theta;
    prev = e.median;
  }
  SimParams mono = plummerParams(MacKind::Bonsai, 0.5f);
  mono.quadrupole = false;
  const ForceError q = gpuForceError(cudaSim(ic, plummerParams(MacKind::Bonsai, 0.5f)), 0.05f);
  const ForceError m = gpuForceError(cudaSim(ic, mono), 0.05f);
  EXPECT_LT(q.median, 0.5 * m.median);
}

TEST(CudaBackend, StepsFollowTheCpuBackend) {
  REQUIRE_GPU();
  const Particles ic = makePlummer(20000, 4);
  SimParams p = plummerParams();
  p.stepping = TimeStepping::Block;
  p.dtMax = 1.0f / 16.0f;
  p.maxBinDepth = 5;
  p.rebuildInterval = 2;  // the same rebuilds and refits on both (tuned ones follow the timings)
  Simulation gpu = cudaSim(ic, p);
  Simulation cpu(makeCpuBackend(), ic, p);
  gpu.advance(1);
  cpu.advance(1);
  EXPECT_EQ(gpu.substeps(), cpu.substeps());
  const Particles a = sortedById(gpu.particles()), b = sortedById(cpu.particles());
  float worst = 0.0f;
  int sameBin = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max({worst, std::fabs(a.posMass[i].x - b.posMass[i].x),
                      std::fabs(a.posMass[i].y - b.posMass[i].y),
                      std::fabs(a.posMass[i].z - b.posMass[i].z)});
    sameBin += a.bin[i] == b.bin[i];
  }
  EXPECT_LT(worst, 1e-5f);
  EXPECT_GE(sameBin, int(0.999 * a.size())) << "fp32 force differences may move a rare particle";
  EXPECT_NEAR(gpu.diagnostics().total(), cpu.diagnostics().total(), 1e-6);
}

// The CUDA walk computes no potential in a substep that ends only some steps (WalkSettings::
// potential): the potentials stay, and where every step ends they are fresh (tests/potentials.h;
// the CPU backend's twin in test_integrator).
TEST(CudaBackend, PotentialsAreComputedWhereEveryStepEndsAndKeptBetween) {
  REQUIRE_GPU();
  const SimParams p = blockPlummerParams();
  Simulation sim = cudaSim(makePlummer(20000, 12), p);
  bhviz::test::expectPotentialsOnlyWhereEveryStepEnds(sim, 12);
}

// On demand, a step end that computed no potential walks again for them (Backend::
// recomputePotentials, the walk's potential-only write): the potentials of a run that computes
// them at every step (to fp32 rounding: its other kernel), the state's accelerations and
// positions untouched, every particle's potential written; refused once the particles moved.
TEST(CudaBackend, TheLastWalkAgainGivesThePotentialsOfAnEveryStepRun) {
  REQUIRE_GPU();
  SimParams p = blockPlummerParams(plummerParams(MacKind::Acceleration));
  p.rebuildInterval = 2;  // rebuilds and refits at the same evaluations in both runs
  const Particles ic = makePlummer(20000, 14);
  Simulation every = cudaSim(ic, p);
  Simulation onDemand = cudaSim(ic, p);
  onDemand.setPotentialOnDemand(true);
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    every.advance(1);
    onDemand.advance(1);
    ASSERT_FALSE(onDemand.potentialsCurrent());
    const Particles stale = onDemand.particles();
    ASSERT_TRUE(onDemand.computePotentialsNow());
    const Particles now = onDemand.particles();
    std::size_t moved = 0, written = 0;
    for (std::size_t i = 0; i < now.size(); ++i) {
      const Vec4 a = stale.accPot[i], b = now.accPot[i];
      moved += std::memcmp(&stale.posMass[i], &now.posMass[i], sizeof(Vec4)) != 0 ||
               std::memcmp(&a, &b, 3 * sizeof(float)) != 0;
      written += std::memcmp(&a.w, &b.w, sizeof(float)) != 0;
    }
    EXPECT_EQ(moved, 0u) << "positions or accelerations changed";
    EXPECT_GT(written, now.size() * 99 / 100) << "potentials left stale";
    // Every target's, not most: the same tree, groups and settings walked again give the
    // every-step run's potentials (a slot the walk missed keeps a stale one, off by far more).
    const P99 diff = relativeDifferenceP99(sortedById(now), sortedById(every.particles()));
    EXPECT_LT(diff.potMax, 1e-6) << "against the every-step run";
    EXPECT_LT(diff.accMax, 1e-6);
  }
  std::unique_ptr<Backend> b = cuda::makeCudaBackend(ic.size());
  b->upload(ic);
  EXPECT_FALSE(b->recomputePotentials()) << "no evaluation yet";
  b->computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
  EXPECT_TRUE(b->recomputePotentials());
  b->drift(0.01f);
  EXPECT_FALSE(b->recomputePotentials()) << "the particles moved";
}

TEST(CudaBackend, SharedAndBlockStepsConserveEnergy) {
  REQUIRE_GPU();
  SimParams shared = plummerParams();
  Simulation a = cudaSim(makePlummer(4096, 1), shared);
  const Diagnostics a0 = a.diagnostics();
  a.advance(128);
  EXPECT_LE(relativeDrift(a0, a.diagnostics()), 1e-3);

  SimParams block = plummerParams();
  block.stepping = TimeStepping::Block;
  block.dtMax = 1.0f / 16.0f;
  block.maxBinDepth = 6;
  block.eta = 0.1f;
  Simulation b = cudaSim(makePlummer(4096, 2), block);
  const Diagnostics b0 = b.diagnostics();
  b.advance(16);
  const Diagnostics b1 = b.diagnostics();
  EXPECT_LE(relativeDrift(b0, b1), 1e-3);
  EXPECT_GE(
      std::count_if(b1.binHistogram.begin(), b1.binHistogram.end(), [](auto c) { return c > 0; }),
      3);
}

TEST(CudaBackend, BlockStepsWithOneBinEqualSharedSteps) {
  REQUIRE_GPU();
  SimParams shared = plummerParams();
  shared.dtMax = 1.0f / 64.0f;
  shared.rebuildInterval = 2;  // the same rebuilds on both (tuned ones follow the timings)
  SimParams block = shared;
  block.stepping = TimeStepping::Block;
  block.maxBinDepth = 8;
  block.eta = 1e6f;
  const Particles ic = makePlummer(5000, 3);
  Simulation a = cudaSim(ic, shared), b = cudaSim(ic, block);
  a.advance(4);
  b.advance(4);
  const Particles pa = a.particles(), pb = b.particles();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    ASSERT_EQ(pa.id[i], pb.id[i]);
    ASSERT_EQ(pa.posMass[i].x, pb.posMass[i].x);
    ASSERT_EQ(pa.vel[i].y, pb.vel[i].y);
  }
}

TEST(CudaBackend, NonFiniteStateNamesTheRunawayParticle) {
  REQUIRE_GPU();
  SimParams p = plummerParams();
  p.dtMax = 4.0f;
  Particles ic = makePlummer(2000, 6);
  std::size_t k = 0;
  while (ic.id[k] != 123) ++k;
  ic.vel[k].x = 3e38f;
  Simulation sim = cudaSim(ic, p);
  try {
    sim.substep();
    FAIL() << "expected NonFiniteState";
  } catch (const NonFiniteState& e) {
    ASSERT_EQ(e.ids.size(), 1u);
    EXPECT_EQ(e.ids[0], 123u);
  }
}

namespace {

/// Plays a kernel gone wrong: the velocity of the particle with `id` made NaN in device memory.
void poisonVelocity(const Backend& b, std::uint32_t id) {
  Particles h;
  b.download(h);  // in the device's order
  const std::size_t k = std::size_t(std::find(h.id.begin(), h.id.end(), id) - h.id.begin());
  if (k >= h.size()) {
    ADD_FAILURE() << "no particle " << id;
    return;
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  cuda::copyToDevice(const_cast<Vec4*>(b.deviceAccess()->particles().vel) + k, &nan, sizeof nan);
}

}  // namespace

TEST(CudaBackend, TheCheckAfterASubstepSeesWhatItsKernelsMadeAndPassesOverAllAfterAnythingElse) {
  // The check after a substep reads a flag its drift and close kicks set (no pass over every
  // particle); after forces made outside a substep, or new particles, it passes over them all.
  // Driven stage by stage, as Simulation::substep does, shared steps.
  REQUIRE_GPU();
  const SimParams p = plummerParams();
  const Particles ic = makePlummer(3000, 12);
  std::unique_ptr<Backend> b = cuda::makeCudaBackend(ic.size());
  Clock clock{0.0, 0, 0, p.dtMax};
  const auto start = [&](const Particles& particles) {
    b->upload(particles);
    clock.tick = 0;
    b->computeForces(clock, p, ForceTargets::All, false);
    return b->nonFiniteIds(10);
  };
  const auto substepUpToTheCheck = [&](bool poisonBeforeCloseKicks) {
    b->openKicks(clock, p);
    b->drift(p.dtMax);
    ++clock.tick;
    b->computeForces(clock, p, ForceTargets::Active, true);
    if (poisonBeforeCloseKicks) poisonVelocity(*b, 77);
    b->closeKicks(clock);
  };
  ASSERT_TRUE(start(ic).empty());
  substepUpToTheCheck(false);
  EXPECT_TRUE(b->nonFiniteIds(10).empty());
  substepUpToTheCheck(true);
  EXPECT_EQ(b->nonFiniteIds(10), std::vector<std::uint32_t>{77u}) << "the close kicks' flag";
  ASSERT_TRUE(start(ic).empty());
  // Before the open kicks: the drift moves the particle by it, and its NaN position reaches the
  // other particles' forces, so the drift's flag and the close kicks' are both set.
  poisonVelocity(*b, 88);
  substepUpToTheCheck(false);
  EXPECT_EQ(b->nonFiniteIds(10), std::vector<std::uint32_t>{88u}) << "the substep's flags";

  // Between a substep's close kicks and its check: forces of every particle (their flag is not
  // set by anything), then new particles.
  ASSERT_TRUE(start(ic).empty());
  substepUpToTheCheck(false);
  poisonVelocity(*b, 1234);
  b->computeForces(clock, p, ForceTargets::All, true);
  EXPECT_EQ(b->nonFiniteIds(10), std::vector<std::uint32_t>{1234u}) << "forces outside a substep";
  ASSERT_TRUE(start(ic).empty());
  substepUpToTheCheck(false);
  Particles bad = ic;
  bad.vel[5].y = std::numeric_limits<float>::infinity();
  b->upload(bad);
  EXPECT_EQ(b->nonFiniteIds(10), std::vector<std::uint32_t>{bad.id[5]}) << "uploaded particles";

  // And a state restored there.
  ASSERT_TRUE(start(ic).empty());
  const std::unique_ptr<BackendState> clean = b->keepState(std::size_t(1) << 40);
  poisonVelocity(*b, 9);
  const std::unique_ptr<BackendState> poisoned = b->keepState(std::size_t(1) << 40);
  b->restoreState(*clean);
  ASSERT_TRUE(b->nonFiniteIds(10).empty());
  substepUpToTheCheck(false);
  b->restoreState(*poisoned);
  EXPECT_EQ(b->nonFiniteIds(10), std::vector<std::uint32_t>{9u}) << "a restored state";
}

TEST(CudaBackend, DiagnosticsOnTheDeviceEqualTheHostSumsMidStep) {
  REQUIRE_GPU();
  const SimParams p = blockPlummerParams();
  Simulation sim = cudaSim(makePlummer(30000, 8), p);
  sim.substep();
  ASSERT_FALSE(sim.synchronized()) << "the test needs particles in mid-step";
  const Diagnostics device = sim.diagnostics();
  const Diagnostics host = computeDiagnostics(sim.particles(), sim.clock());
  EXPECT_EQ(device.binHistogram, host.binHistogram);
  EXPECT_NEAR(device.mass, host.mass, 1e-12);
  EXPECT_NEAR(device.kinetic, host.kinetic, 1e-12 * std::fabs(host.kinetic));
  EXPECT_NEAR(device.potential, host.potential, 1e-12 * std::fabs(host.potential));
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(device.momentum[k], host.momentum[k], 1e-12);
    EXPECT_NEAR(device.angularMomentum[k], host.angularMomentum[k], 1e-12);
  }
}

// A substep launches its stages without waiting for them (but for the deepest bin of block
// steps and a rebuild's level table) and reads their times and the walk's counts once, at its
// end. Each substep's profile must still be its own: every stage it ran, the sort only where it
// rebuilt, and as targets exactly the particles active at its tick; and the device's span from its
// first stage to its last holds every stage and lies within the host's time for the substep.
TEST(CudaBackend, EachSubstepsProfileIsItsOwnThoughReadAtItsEnd) {
  REQUIRE_GPU();
  for (const bool blockSteps : {false, true}) {
    SimParams p = plummerParams();
    p.rebuildInterval = 3;  // refits between the rebuilds
    if (blockSteps) p = blockPlummerParams(p);
    Simulation sim = cudaSim(makePlummer(30000, 9), p);
    std::uint64_t targets = 0;
    int partial = 0;
    for (int k = 0; k < 16; ++k) {
      const auto begun = std::chrono::steady_clock::now();
      sim.substep();
      const double wallMs =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begun)
              .count();
      const StepProfile& prof = sim.lastProfile();
      const std::uint64_t active = bhviz::test::activeAt(sim.particles(), sim.clock());
      const std::string at =
          (blockSteps ? "block" : "shared") + std::string(" substep ") + std::to_string(k);
      EXPECT_EQ(prof.interactions.targets, active) << at;
      EXPECT_EQ(prof.interactions.groups, sim.backend().treeCensus().groups) << at;
      EXPECT_GT(prof.interactions.cell + prof.interactions.particle, active) << at;
      for (const Stage s :
           {Stage::Predict, Stage::Moments, Stage::Groups, Stage::Walk, Stage::Integrate}) {
        EXPECT_GT(prof[s], 0.0) << at << " " << stageName(s);
      }
      EXPECT_EQ(prof[Stage::Sort] > 0.0, sim.lastRebuilt()) << at;
      // Each event pair is read to ~0.5 µs; the stages follow one another on one stream.
      EXPECT_GE(prof.spanMs, prof.total() - 0.01) << at;
      EXPECT_LE(prof.spanMs, wallMs) << at;
      targets += active;
      partial += active < sim.backend().size() ? 1 : 0;
    }
    EXPECT_EQ(sim.totalProfile().interactions.targets, targets);
    if (blockSteps) {
      EXPECT_GT(partial, 8) << "substeps with only some particles active";
    }
  }
}

// The device memory a process holds through its buffers, and the most it held: what a rank's
// --stats reports (device_bytes_peak) and a run's size is checked against.
TEST(CudaMemory, PeakIsTheMostHeldAtOnce) {
  if (cuda::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const std::size_t before = cuda::deviceBytesInUse();
  {
    cuda::DeviceBuffer<float> a, b;
    a.reserve(1 << 20);
    EXPECT_EQ(cuda::deviceBytesInUse(), before + (4u << 20));
    b.reserve(3 << 20);
    EXPECT_EQ(cuda::deviceBytesInUse(), before + (16u << 20));
    EXPECT_GE(cuda::deviceBytesPeak(), before + (16u << 20));
    // Growth past 256 MiB is by an eighth, not a half.
    cuda::DeviceBuffer<std::uint8_t> big;
    big.reserve(std::size_t{512} << 20);
    big.reserve((std::size_t{512} << 20) + 1);
    EXPECT_EQ(big.capacity(), (std::size_t{512} << 20) + (std::size_t{64} << 20));
  }
  EXPECT_EQ(cuda::deviceBytesInUse(), before);
}
