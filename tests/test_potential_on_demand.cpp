// The potentials on demand (Simulation::setPotentialOnDemand, the window's frames): the steps
// nobody asked the potentials of compute none and say so, the trajectory is the same bits as
// with the potentials at every step, an asked-for step has the potentials of the every-step run,
// and the window's session samples, saves and rewinds only with current potentials.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/core/sim_session.h"
#include "potentials.h"
#include "process_support.h"
#include "replay.h"
#include "session_support.h"
#include "sim/cpu/cpu_backend.h"
#include "sim/ic/scenario_file.h"
#include "sim/io/snapshot.h"

namespace bhviz::test {
namespace {

using sim::Particles;
using sim::Simulation;

sim::SimParams params(sim::TimeStepping stepping) {
  sim::SimParams p;
  p.dtMax = 1.0f / 32.0f;
  p.stepping = stepping;
  p.maxBinDepth = 4;
  p.eta = 0.05f;
  p.mac = sim::MacKind::Acceleration;  // the window's default: it reads the last accelerations
  // Rebuilds and refits at fixed substeps: auto would choose them from measured times, which
  // differ between two runs.
  p.rebuildInterval = 2;
  return p;
}

/// Two states (the same key order) with the same bits; `potentials`: accPot.w too.
bool sameState(const Particles& a, const Particles& b, bool potentials) {
  std::vector<sim::Vec4> accA = a.accPot, accB = b.accPot;
  if (!potentials) {
    for (std::vector<sim::Vec4>* acc : {&accA, &accB}) {
      for (sim::Vec4& x : *acc) x.w = 0.0f;
    }
  }
  return sameBytes(a.id, b.id) && sameBytes(a.posMass, b.posMass) && sameBytes(a.vel, b.vel) &&
         sameBytes(accA, accB);
}

class PotentialOnDemand : public ::testing::TestWithParam<sim::TimeStepping> {};

TEST_P(PotentialOnDemand, UnaskedStepEndsComputeNoneAndTheTrajectoryIsTheSame) {
  const Particles start = sim::buildScenario(sim::builtinScenario("merger"), 3000, 5);
  Simulation every(sim::makeCpuBackend(), start, params(GetParam()));
  Simulation onDemand(sim::makeCpuBackend(), start, params(GetParam()));
  onDemand.setPotentialOnDemand(true);
  ASSERT_TRUE(onDemand.potentialsCurrent()) << "the first evaluation takes every particle";

  for (int step = 0; step < 3; ++step) {
    const std::unordered_map<std::uint32_t, float> before = potentialsById(onDemand.particles());
    every.advance(1);
    onDemand.advance(1);
    ASSERT_TRUE(onDemand.synchronized());
    EXPECT_FALSE(onDemand.potentialsCurrent()) << "step " << step;
    EXPECT_TRUE(std::isnan(onDemand.diagnostics().potential)) << "stale potentials reported";
    EXPECT_TRUE(std::isnan(onDemand.diagnostics().total()));
    const Particles p = onDemand.particles();
    std::size_t changed = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const float was = before.at(p.id[i]);
      changed += std::memcmp(&was, &p.accPot[i].w, sizeof(float)) != 0 ? 1 : 0;
    }
    EXPECT_EQ(changed, 0u) << "an unasked step end wrote potentials";
    EXPECT_TRUE(sameState(every.particles(), p, false))
        << "positions, velocities or accelerations differ from the run with every potential";
  }

  // Asked for: the next step end has the potentials of the run that computes them always.
  onDemand.requestPotential();
  every.advance(1);
  onDemand.advance(1);
  EXPECT_TRUE(onDemand.potentialsCurrent());
  EXPECT_TRUE(sameState(every.particles(), onDemand.particles(), true));
  EXPECT_EQ(every.diagnostics().total(), onDemand.diagnostics().total());
  // The request is used up.
  onDemand.advance(1);
  EXPECT_FALSE(onDemand.potentialsCurrent());
}

INSTANTIATE_TEST_SUITE_P(Steps, PotentialOnDemand,
                         ::testing::Values(sim::TimeStepping::Shared, sim::TimeStepping::Block),
                         [](const auto& info) { return std::string(sim::toString(info.param)); });

TEST(PotentialOnDemandState, KeptStatesCarryWhetherThePotentialsAreCurrent) {
  Simulation sim(sim::makeCpuBackend(), sim::buildScenario(sim::builtinScenario("plummer"), 800, 2),
                 params(sim::TimeStepping::Shared));
  sim.setPotentialOnDemand(true);
  const std::unique_ptr<sim::KeptState> fresh = sim.keep();
  sim.advance(1);
  const std::unique_ptr<sim::KeptState> stale = sim.keep();
  ASSERT_FALSE(sim.potentialsCurrent());
  sim.restore(*fresh);
  EXPECT_TRUE(sim.potentialsCurrent());
  EXPECT_TRUE(std::isfinite(sim.diagnostics().total()));
  sim.restore(*stale);
  EXPECT_FALSE(sim.potentialsCurrent());
  EXPECT_TRUE(std::isnan(sim.diagnostics().potential));
}

// The tuners compare the walks of one kind of evaluation: on demand, a step end that computes
// the potentials (a longer walk) is counted but not timed, while the steps around it are timed;
// a simulation that computes them at every step times every step.
TEST(PotentialOnDemandState, TheTunersDoNotTimeAStepAskedForThePotentials) {
  sim::SimParams p = params(sim::TimeStepping::Shared);
  p.rebuildInterval = sim::kRebuildAuto;  // the tuner records under any interval; auto reads it
  const Particles start = sim::buildScenario(sim::builtinScenario("plummer"), 3000, 4);
  for (bool onDemand : {true, false}) {
    SCOPED_TRACE(onDemand ? "on demand" : "every step");
    Simulation sim(sim::makeCpuBackend(), start, p);
    sim.setPotentialOnDemand(onDemand);
    sim.advance(2);
    const auto evaluations = [&] { return sim.rebuildState().recorded(); };
    const std::uint64_t before = evaluations();
    const double timedBefore = sim.rebuildState().measuredWalkMs;
    EXPECT_GT(timedBefore, 0.0) << "the steps before were timed";
    sim.requestPotential();
    sim.advance(1);
    ASSERT_TRUE(sim.potentialsCurrent());
    EXPECT_EQ(evaluations(), before + 1) << "the step is counted";
    if (onDemand) {
      EXPECT_EQ(sim.rebuildState().measuredWalkMs, timedBefore) << "and not timed";
    } else {
      EXPECT_NE(sim.rebuildState().measuredWalkMs, timedBefore) << "and timed";
    }
    sim.advance(1);  // unasked: timed again
    EXPECT_NE(sim.rebuildState().measuredWalkMs, timedBefore);
  }
}

// The window's session: a due sample asks for the potentials and is taken at the next step end,
// with a finite energy on the plot; a single step samples with current potentials.
TEST(PotentialOnDemandSession, SamplesWaitForAStepWithThePotentials) {
  app::SimSession session(plummerScene(800), params(sim::TimeStepping::Shared));
  session.setPotentialOnDemand(true);
  const app::FrameBudget oneStep{app::FrameBudget::Mode::Substeps, 0.0f, 1, 1e9f};
  session.frame(oneStep, false);
  ASSERT_FALSE(session.simulation().potentialsCurrent());
  const std::size_t plotted = session.diagnosticsHistory().size();
  EXPECT_FALSE(session.sampleDiagnostics(0.0)) << "sampled stale potentials";
  EXPECT_EQ(session.diagnosticsHistory().size(), plotted);
  session.frame(oneStep, false);  // the step that computes them, and the sample after it
  EXPECT_TRUE(session.simulation().potentialsCurrent());
  ASSERT_EQ(session.diagnosticsHistory().size(), plotted + 1);
  EXPECT_TRUE(std::isfinite(session.diagnostics().total()));
  EXPECT_LT(std::fabs(session.diagnosticsHistory().back().energyDrift), 1e-3);

  session.frame(oneStep, true);  // a single step (the `.` key), then the window's forced sample
  EXPECT_TRUE(session.simulation().potentialsCurrent());
  EXPECT_TRUE(session.sampleDiagnostics(1e9, true));
  EXPECT_TRUE(std::isfinite(session.diagnostics().total()));
}

// A block-step session on demand under the window's sim-time budget (frames end mid-step): its
// plot samples are all at step ends with current potentials and a finite energy near the start.
TEST(PotentialOnDemandSession, BlockStepSamplesLandAtStepEndsWithPotentials) {
  app::SimSession session(plummerScene(800), params(sim::TimeStepping::Block));
  session.setPotentialOnDemand(true);
  const double dtMax = session.simulation().params().dtMax;
  app::FrameBudget budget;
  budget.simTimePerFrame = 0.3f * float(dtMax);
  budget.maxWallMs = 1e9f;  // never cut short by a loaded machine
  const std::size_t before = session.diagnosticsHistory().size();
  int stale = 0;
  for (int i = 0; i < 40; ++i) {
    session.frame(budget, false);
    stale += session.simulation().synchronized() && !session.simulation().potentialsCurrent();
    if (i % 5 == 0) session.sampleDiagnostics(0.0);  // the window's interval, in frames
  }
  EXPECT_GE(stale, 1) << "no step end went without the potentials: nothing on demand";
  const auto& h = session.diagnosticsHistory();
  ASSERT_GE(h.size() - before, 4u) << "samples while running";
  for (std::size_t i = before; i < h.size(); ++i) {
    EXPECT_LT(std::fabs(h[i].time / dtMax - std::round(h[i].time / dtMax)), 1e-9) << i;
    EXPECT_TRUE(std::isfinite(h[i].energyDrift)) << i;
    EXPECT_LT(std::fabs(h[i].energyDrift), 1e-3) << i;
  }
}

// A save writes current potentials. Where the last step end computed none, its walk runs again
// for them: the file is at the state's time, its potentials are the bits of the run that
// computes them at every step, and the run goes on as if nothing had been saved. From the middle
// of a block step the save finishes the step, which computes them.
TEST(PotentialOnDemandSession, SavesWithCurrentPotentials) {
  for (const sim::TimeStepping stepping : {sim::TimeStepping::Shared, sim::TimeStepping::Block}) {
    SCOPED_TRACE(sim::toString(stepping));
    app::SimSession session(plummerScene(800), params(stepping));
    app::SimSession every(plummerScene(800), params(stepping));
    session.setPotentialOnDemand(true);
    session.advanceInterval();
    every.advanceInterval();
    const bool midStep = stepping == sim::TimeStepping::Block;
    if (midStep) session.step(), every.step();
    const double before = session.simulation().time();
    ASSERT_FALSE(session.simulation().potentialsCurrent() && session.simulation().synchronized());
    const TempDir dir;
    const std::string path = (dir.path / "on_demand.tipsy").string();
    session.save(path);
    EXPECT_TRUE(session.simulation().synchronized());
    EXPECT_TRUE(session.simulation().potentialsCurrent());
    if (midStep) {
      EXPECT_GT(session.simulation().time(), before) << "the block step finished";
      while (!every.simulation().synchronized()) every.step();
    } else {
      EXPECT_EQ(session.simulation().time(), before) << "no step for the potentials";
    }
    EXPECT_EQ(sim::io::readSnapshotWithTime(path).time, session.simulation().time());
    EXPECT_TRUE(std::isfinite(session.simulation().diagnostics().total()));
    EXPECT_TRUE(sameState(every.simulation().particles(), session.simulation().particles(), true))
        << "the saved state, potentials included, is the every-step run's";
    // And the run goes on with the same bits.
    session.advanceInterval();
    every.advanceInterval();
    EXPECT_TRUE(sameState(every.simulation().particles(), session.simulation().particles(), false));
  }
}

// A paused window's frames do not step, so a state at a step end whose potentials went stale
// would never reach the plot: its first paused frame walks the last evaluation again for them and
// samples it, once, without moving the run.
TEST(PotentialOnDemandSession, APausedFrameSamplesItsStepEndOnce) {
  app::SimSession session(plummerScene(800), params(sim::TimeStepping::Shared));
  session.setPotentialOnDemand(true);
  const app::FrameBudget oneStep{app::FrameBudget::Mode::Substeps, 0.0f, 1, 1e9f};
  session.frame(oneStep, false);
  ASSERT_FALSE(session.simulation().potentialsCurrent());
  session.setPaused(true);
  const std::size_t plotted = session.diagnosticsHistory().size();
  const double time = session.simulation().time();
  const std::uint64_t substeps = session.simulation().substeps();
  EXPECT_FALSE(session.frame(oneStep, false).stepped);
  EXPECT_EQ(session.simulation().time(), time);
  EXPECT_EQ(session.simulation().substeps(), substeps);
  EXPECT_TRUE(session.simulation().potentialsCurrent());
  ASSERT_EQ(session.diagnosticsHistory().size(), plotted + 1);
  EXPECT_EQ(session.diagnosticsHistory().back().time, time);
  EXPECT_LT(std::fabs(session.diagnosticsHistory().back().energyDrift), 1e-3);
  session.frame(oneStep, false);
  EXPECT_EQ(session.diagnosticsHistory().size(), plotted + 1) << "sampled once";
}

// The backend's walk again (Backend::recomputePotentials) on both MAC families and both kinds of
// step end: the potentials of the evaluation that computed them, bit for bit, the accelerations
// untouched; refused once the particles moved or were replaced.
TEST(PotentialOnDemandState, TheLastWalkAgainGivesItsPotentials) {
  for (const auto stepping : {sim::TimeStepping::Shared, sim::TimeStepping::Block})
    for (const sim::MacKind mac : {sim::MacKind::Acceleration, sim::MacKind::Bonsai}) {
      SCOPED_TRACE(std::string(sim::toString(stepping)) + " " + std::string(sim::toString(mac)));
      sim::SimParams p = params(stepping);
      p.mac = mac;
      const Particles start = sim::buildScenario(sim::builtinScenario("merger"), 2000, 8);
      Simulation every(sim::makeCpuBackend(), start, p);
      Simulation onDemand(sim::makeCpuBackend(), start, p);
      onDemand.setPotentialOnDemand(true);
      int rebuilt = 0, refitted = 0;  // the step ends' last evaluations
      for (int step = 0; step < 4; ++step) {
        every.advance(1);
        do {
          onDemand.substep();
        } while (!onDemand.synchronized());
        // A refit sorts nothing (tests/test_tree_refit.cpp).
        (onDemand.lastProfile()[sim::Stage::Sort] > 0.0 ? rebuilt : refitted) += 1;
        ASSERT_FALSE(onDemand.potentialsCurrent());
        const Particles stale = onDemand.particles();
        ASSERT_TRUE(onDemand.computePotentialsNow()) << "step " << step;
        EXPECT_TRUE(onDemand.potentialsCurrent());
        const Particles now = onDemand.particles();
        EXPECT_TRUE(sameState(stale, now, false)) << "accelerations and the rest untouched";
        EXPECT_TRUE(sameState(every.particles(), now, true)) << "step " << step;
      }
      // (A block step here takes an even number of substeps: its ends all rebuild.)
      if (stepping == sim::TimeStepping::Shared) {
        EXPECT_GT(rebuilt, 0);
        EXPECT_GT(refitted, 0);
      }
      if (stepping != sim::TimeStepping::Block) continue;

      // Not in the middle of a step, nor after a restore (the kept state's potentials stale).
      onDemand.advance(1);
      ASSERT_FALSE(onDemand.potentialsCurrent());
      const std::unique_ptr<sim::KeptState> stale = onDemand.keep();
      onDemand.substep();
      ASSERT_FALSE(onDemand.synchronized()) << "the scene's bins make a substep mid-step";
      EXPECT_FALSE(onDemand.computePotentialsNow());
      onDemand.restore(*stale);
      EXPECT_FALSE(onDemand.computePotentialsNow()) << "the tree is not kept with a state";
      onDemand.advance(1);
      EXPECT_TRUE(onDemand.computePotentialsNow()) << "after the restore, a step end of its own";
    }
}

// The backend refuses where its last walk is not of the particles it holds now.
TEST(PotentialOnDemandState, TheBackendWalksAgainOnlyItsLastEvaluationsParticles) {
  const sim::SimParams p = params(sim::TimeStepping::Shared);
  const Particles start = sim::buildScenario(sim::builtinScenario("plummer"), 1000, 3);
  const sim::Clock clock{0.0, 0, 0, p.dtMax};
  sim::CpuBackend backend;
  backend.upload(start);
  EXPECT_FALSE(backend.recomputePotentials()) << "no evaluation yet";
  backend.computeForces(clock, p, sim::ForceTargets::All, false);
  const std::unique_ptr<sim::BackendState> kept = backend.keepState(0);
  EXPECT_TRUE(backend.recomputePotentials());
  backend.drift(0.01f);
  EXPECT_FALSE(backend.recomputePotentials()) << "the particles moved";
  backend.computeForces(clock, p, sim::ForceTargets::All, false);
  backend.restoreState(*kept);
  EXPECT_FALSE(backend.recomputePotentials()) << "restored";
  backend.computeForces(clock, p, sim::ForceTargets::All, false);
  backend.upload(start);
  EXPECT_FALSE(backend.recomputePotentials()) << "uploaded";
  backend.refitForces(clock, p, sim::ForceTargets::All, true);  // rebuilds: no tree of these
  EXPECT_TRUE(backend.recomputePotentials());
}

// The mutual near field: the walk again is the plain one, whose potentials differ from the
// mutual walk's by fp32 rounding (and two mutual runs differ in their last bits already: the
// counter-forces arrive in any thread order).
TEST(PotentialOnDemandState, UnderTheMutualNearFieldTheWalkAgainIsThePlainOne) {
  sim::SimParams p = params(sim::TimeStepping::Shared);
  p.p2p = sim::P2pMode::Mutual;
  const Particles start = sim::buildScenario(sim::builtinScenario("merger"), 2000, 9);
  Simulation every(sim::makeCpuBackend(), start, p);
  Simulation onDemand(sim::makeCpuBackend(), start, p);
  onDemand.setPotentialOnDemand(true);
  every.advance(2);
  onDemand.advance(2);
  ASSERT_TRUE(onDemand.computePotentialsNow());
  const std::unordered_map<std::uint32_t, float> a = potentialsById(every.particles());
  const std::unordered_map<std::uint32_t, float> b = potentialsById(onDemand.particles());
  ASSERT_EQ(a.size(), b.size());
  double worst = 0.0;
  for (const auto& [id, w] : a) {
    worst = std::max(worst, std::fabs(double(w) - b.at(id)) / std::fabs(double(w)));
  }
  std::printf("largest relative difference of a potential: %.2e\n", worst);
  EXPECT_LT(worst, 1e-5);
}

}  // namespace
}  // namespace bhviz::test
