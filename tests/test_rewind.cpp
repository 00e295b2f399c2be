// Rewind and replay on the CPU: a kept state replays the same bits (shared and block steps, the
// acceleration MAC's old accelerations included), and the window's ring of kept states stays
// within its budget while covering the whole run, and drops what lies after a step back. And the
// substep in two halves the window's frames overlap with (Simulation::beginSubstep, endSubstep;
// SimSession::setOverlap).
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>

#include "app/core/rewind.h"
#include "app/core/sim_session.h"
#include "replay.h"
#include "session_support.h"
#include "sim/io/snapshot.h"

namespace {

using namespace bhviz;
using test::ReplayCase;

class CpuReplay : public ::testing::TestWithParam<ReplayCase> {};

TEST_P(CpuReplay, KeptStatesReplayTheSameBits) {
  // Mid-interval for block steps (7 substeps in): the clock's tick and every bin come back.
  const bool onDevice =
      test::expectReplayIsExact([] { return sim::makeCpuBackend(); }, GetParam(), 3000, 7, 12, 0);
  EXPECT_FALSE(onDevice);
}

INSTANTIATE_TEST_SUITE_P(
    Steps, CpuReplay,
    ::testing::Values(ReplayCase{sim::TimeStepping::Shared, sim::MacKind::Bonsai},
                      ReplayCase{sim::TimeStepping::Block, sim::MacKind::Bonsai},
                      ReplayCase{sim::TimeStepping::Block, sim::MacKind::Acceleration}),
    [](const auto& info) {
      return std::string(sim::toString(info.param.stepping)) + "_" +
             std::string(sim::toString(info.param.mac));
    });

sim::Simulation merger(std::size_t n) {
  sim::SimParams p;
  p.dtMax = 1.0f / 64.0f;
  return sim::Simulation(sim::makeCpuBackend(),
                         sim::buildScenario(sim::builtinScenario("merger"), n, 3), p);
}

TEST(StateRing, StaysWithinItsBudgetAndCoversTheWholeRun) {
  const std::size_t n = 500;
  sim::Simulation s = merger(n);
  app::StateRing ring(6 * n * sim::kParticleBytes);  // room for six states
  ring.update(s);
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_EQ(ring.at(0).time(), 0.0);
  const double first = 8.0 / 64.0;
  EXPECT_DOUBLE_EQ(ring.interval(), first);
  for (int k = 0; k < 200; ++k) {
    s.advance();
    ring.update(s);
    ASSERT_LE(ring.bytes(), ring.budget());
    ASSERT_LE(ring.size(), 6u);
  }
  EXPECT_EQ(ring.at(0).time(), 0.0) << "the start is never thinned away";
  EXPECT_GT(ring.interval(), first) << "thinned: kept half as often";
  for (std::size_t k = 1; k < ring.size(); ++k) {
    EXPECT_GT(ring.at(k).time(), ring.at(k - 1).time());
  }
  EXPECT_GT(ring.at(ring.size() - 1).time(), 0.5 * s.time()) << "the recent past is kept";
  EXPECT_EQ(ring.onDevice(), 0u);
}

TEST(StateRing, GoingBackAndRunningOnDropsTheStatesAfter) {
  const std::size_t n = 400;
  sim::Simulation s = merger(n);
  app::StateRing ring(1000 * n * sim::kParticleBytes);
  ring.update(s);
  for (int k = 0; k < 40; ++k) {
    s.advance();
    ring.update(s);
  }
  ASSERT_EQ(ring.size(), 6u);  // t = 0, 8/64, …, 40/64
  s.restore(ring.at(2));
  ring.update(s);
  EXPECT_EQ(ring.size(), 3u) << "states after the one gone back to are dropped on the update";
  s.advance();
  ring.update(s);
  EXPECT_EQ(ring.size(), 3u);
  for (int k = 0; k < 8; ++k) s.advance();
  ring.update(s);
  EXPECT_EQ(ring.size(), 4u) << "the new branch is kept as before";
}

TEST(StateRing, KeepsNothingWhenOneStateDoesNotFit) {
  sim::Simulation s = merger(300);
  app::StateRing ring(100);
  ring.update(s);
  EXPECT_EQ(ring.size(), 0u);
  EXPECT_EQ(ring.bytes(), 0u);
}

// The window's session goes back paused, and runs on from there.
TEST(SimSessionRewind, GoesBackPausedAndRunsOn) {
  app::SceneSettings scene;
  scene.scenario = "plummer";
  scene.n = 800;
  scene.backend = app::BackendChoice::Cpu;
  app::SimSession session(scene, sim::SimParams{});
  const std::unique_ptr<sim::KeptState> start = session.simulation().keep();
  session.advanceInterval();
  session.advanceInterval();
  const double later = session.simulation().time();
  ASSERT_GT(later, 0.0);
  session.restore(*start);
  EXPECT_TRUE(session.paused());
  EXPECT_FALSE(session.halted());
  EXPECT_EQ(session.simulation().time(), 0.0);
  session.advanceInterval();
  session.advanceInterval();
  EXPECT_EQ(session.simulation().time(), later);
}

}  // namespace

namespace {

bool sameBits(const sim::Particles& a, const sim::Particles& b) {
  using test::sameBytes;  // replay.h
  return sameBytes(a.posMass, b.posMass) && sameBytes(a.vel, b.vel) &&
         sameBytes(a.accPot, b.accPot);
}

}  // namespace

// A substep in two halves (the window's frames: Simulation::beginSubstep, endSubstep) gives the
// bits substep() gives, block steps and the tuners included; in between, what would read or
// change the state refuses (std::logic_error) and the getters show the clock the substep reaches;
// a ring of kept states keeps one only after its `settle` ended the substep.
TEST(SubstepHalves, GiveTheSameBitsAndRefuseWhatWouldMixThem) {
  const auto make = [] {
    sim::SimParams p;
    p.dtMax = 1.0f / 16.0f;
    p.stepping = sim::TimeStepping::Block;
    p.maxBinDepth = 4;
    p.rebuildInterval = 3;  // the tuner's choices follow measured times: not the same twice
    return sim::Simulation(sim::makeCpuBackend(),
                           sim::buildScenario(sim::builtinScenario("merger"), 2000, 5), p);
  };
  sim::Simulation whole = make(), halves = make();
  // Both keep states at the same substeps (a kept state has the next evaluation rebuild).
  app::StateRing wholeRing(64 * 2000 * sim::kParticleBytes), ring(wholeRing.budget());
  int settles = 0;
  for (int k = 0; k < 120; ++k) {  // past a second kept state, 8 dtMax after the first
    whole.substep();
    wholeRing.update(whole);
    halves.beginSubstep();
    ASSERT_TRUE(halves.substepPending());
    EXPECT_EQ(halves.time(), whole.time()) << "the clock the substep reaches";
    EXPECT_EQ(halves.substeps(), whole.substeps() - 1) << "counted when it ends";
    if (k == 5) {
      EXPECT_THROW(halves.setParams(halves.params()), std::logic_error);
      EXPECT_THROW(halves.substep(), std::logic_error);
      EXPECT_THROW(halves.advance(), std::logic_error);
      EXPECT_THROW((void)halves.keep(), std::logic_error);
      EXPECT_THROW(halves.computePotentialsNow(), std::logic_error);
    }
    ring.update(halves, [&] {
      ++settles;
      halves.endSubstep();
      return true;
    });
    halves.endSubstep();
    halves.endSubstep();  // nothing pending: nothing done
    ASSERT_FALSE(halves.substepPending());
    ASSERT_EQ(halves.substeps(), whole.substeps());
    ASSERT_TRUE(sameBits(halves.particles(), whole.particles())) << "substep " << k;
    EXPECT_EQ(halves.lastTreeChoice(), whole.lastTreeChoice());
  }
  EXPECT_GE(settles, 2) << "the ring kept states, each after ending the substep";
  EXPECT_EQ(ring.size(), wholeRing.size());
}

// The window's session (SimSession::setOverlap): each frame leaves its last substep running, the
// next call ends it, and the run is the one without overlap, bit for bit; a state that becomes
// non-finite halts the session a frame later, with the same line.
TEST(SessionOverlap, FramesLeaveTheirLastSubstepRunningAndHaltAFrameLate) {
  const app::SceneSettings scene = test::plummerScene(500);
  app::FrameBudget budget;
  budget.mode = app::FrameBudget::Mode::Substeps;
  budget.substepsPerFrame = 2;
  budget.maxWallMs = std::numeric_limits<float>::infinity();  // the same substeps however slow
  sim::SimParams params = sim::defaultSimParams();
  params.rebuildInterval = 2;  // the tuner's choices follow measured times: not the same twice
  app::SimSession plain(scene, params), overlapped(scene, params);
  overlapped.setOverlap(true);
  for (int k = 0; k < 6; ++k) {
    EXPECT_TRUE(plain.frame(budget, false).stepped);
    const app::SimSession::Frame f = overlapped.frame(budget, false);
    EXPECT_TRUE(f.stepped);
    EXPECT_EQ(f.advance.substeps, 2);
    EXPECT_TRUE(overlapped.simulation().substepPending());
    EXPECT_EQ(overlapped.simulation().time(), plain.simulation().time());
  }
  ASSERT_TRUE(overlapped.settle());
  EXPECT_FALSE(overlapped.simulation().substepPending());
  EXPECT_EQ(overlapped.simulation().substeps(), plain.simulation().substeps());
  EXPECT_TRUE(sameBits(overlapped.simulation().particles(), plain.simulation().particles()));

  // Velocities near the float limit: the first drift overflows (as in test_window.cpp).
  sim::Particles p = sim::makePlummer(100, 3);
  for (auto& v : p.vel) v = {3e38f, -3e38f, 3e38f, 0.0f};
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "bhviz-test-overlap-fast.tipsy";
  sim::io::writeSnapshot(path.string(), p, 0.0);
  app::SceneSettings fromFile = scene;
  fromFile.n = 100;
  fromFile.snapshotPath = path.string();
  sim::SimParams longSteps = sim::defaultSimParams();
  longSteps.dtMax = 4.0f;  // v·dt beyond the largest float
  app::SimSession fast(fromFile, longSteps);
  std::filesystem::remove(path);
  fast.setOverlap(true);
  budget.substepsPerFrame = 1;  // so that the frame leaves the substep that overflows running
  const app::SimSession::Frame first = fast.frame(budget, false);
  EXPECT_TRUE(first.stepped) << "its check comes with the next call";
  EXPECT_TRUE(first.notice.empty());
  EXPECT_FALSE(fast.halted());
  const app::SimSession::Frame next = fast.frame(budget, false);
  EXPECT_FALSE(next.stepped);
  EXPECT_NE(next.notice.find("non-finite"), std::string::npos) << next.notice;
  EXPECT_TRUE(fast.halted());
  EXPECT_TRUE(fast.paused());
  EXPECT_FALSE(fast.simulation().substepPending());
  EXPECT_TRUE(fast.frame(budget, false).notice.empty()) << "said once";
}

// With the window's overlap and its potentials on demand, every call that reads or changes the
// state ends the running substep first: a paused frame (which samples the paused state), a single
// step, new parameters, a forced sample, a save, the ring's keep and a restore; none throws.
TEST(SessionOverlap, EveryCallEndsTheRunningSubstepFirst) {
  const sim::SimParams params = sim::defaultSimParams();
  app::SimSession s(test::plummerScene(400), params);
  s.setPotentialOnDemand(true);
  s.setOverlap(true);
  app::FrameBudget budget;
  budget.mode = app::FrameBudget::Mode::Substeps;
  budget.substepsPerFrame = 1;
  budget.maxWallMs = std::numeric_limits<float>::infinity();
  const auto running = [&] {
    s.setPaused(false);
    ASSERT_TRUE(s.frame(budget, false).stepped);
    ASSERT_TRUE(s.simulation().substepPending());
  };
  running();
  s.setPaused(true);
  EXPECT_FALSE(s.frame(budget, false).stepped);
  EXPECT_FALSE(s.simulation().substepPending()) << "a paused frame";
  running();
  EXPECT_EQ(s.frame(budget, true).advance.substeps, 1);
  EXPECT_FALSE(s.simulation().substepPending()) << "a single step";
  running();
  EXPECT_TRUE(s.applyParams(params).empty());
  EXPECT_FALSE(s.simulation().substepPending()) << "new parameters";
  running();
  EXPECT_TRUE(s.sampleDiagnostics(0.0, true));
  EXPECT_FALSE(s.simulation().substepPending()) << "a forced sample";
  running();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "bhviz-test-overlap-save.tipsy";
  s.save(path.string());
  EXPECT_TRUE(std::filesystem::exists(path));
  std::filesystem::remove(path);
  EXPECT_FALSE(s.simulation().substepPending()) << "a save";
  running();
  app::StateRing ring(1000 * 400 * sim::kParticleBytes);
  ring.update(s.simulation(), [&] { return s.settle(); });
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_FALSE(s.simulation().substepPending()) << "the ring's keep";
  running();
  s.restore(ring.at(0));
  EXPECT_FALSE(s.simulation().substepPending()) << "a restore";
  EXPECT_EQ(s.simulation().time(), ring.at(0).time());
  EXPECT_TRUE(s.takeNotice().empty());
}
