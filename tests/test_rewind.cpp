// Rewind and replay on the CPU: a kept state replays the same bits (shared and block steps, the
// acceleration MAC's old accelerations included), and the window's ring of kept states stays
// within its budget while covering the whole run, and drops what lies after a step back.
#include <gtest/gtest.h>

#include "app/core/rewind.h"
#include "app/core/sim_session.h"
#include "replay.h"

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
