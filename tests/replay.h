#pragma once
// Replay from a kept state (Simulation::keep / restore), for any backend: run on from a moment,
// go back to it, run on again: the same bits, every array, the same clock.

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>

#include "sim/backend.h"
#include "sim/ic/scenario_file.h"
#include "sim/simulation.h"

namespace bhviz::test {

struct ReplayCase {
  sim::TimeStepping stepping;
  sim::MacKind mac;
};

inline sim::SimParams replayParams(const ReplayCase& c) {
  sim::SimParams p;
  p.stepping = c.stepping;
  p.mac = c.mac;
  p.dtMax = c.stepping == sim::TimeStepping::Block ? 0.125f : 1.0f / 64.0f;
  return p;
}

template <typename T>
bool sameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Keeps the state after `before` substeps (with `deviceBytes` of device room), runs `after`
/// more, goes back, runs `after` again, and compares. Returns whether the state was on the device.
inline bool expectReplayIsExact(const std::function<std::unique_ptr<sim::Backend>()>& make,
                                const ReplayCase& c, std::size_t n, int before, int after,
                                std::size_t deviceBytes) {
  const sim::Particles initial = sim::buildScenario(sim::builtinScenario("merger"), n, 5);
  sim::Simulation s(make(), initial, replayParams(c));
  for (int k = 0; k < before; ++k) s.substep();
  const std::unique_ptr<sim::KeptState> kept = s.keep(deviceBytes);
  EXPECT_EQ(kept->backend->size(), n);
  EXPECT_EQ(kept->bytes(), n * sim::kParticleBytes);
  for (int k = 0; k < after; ++k) s.substep();
  const sim::Particles first = s.particles();
  const sim::Clock firstClock = s.clock();
  EXPECT_GT(s.time(), kept->time());

  sim::SimParams changed = s.params();
  changed.theta = 0.9f;  // the kept parameters come back with the state
  s.setParams(changed);
  s.restore(*kept);
  EXPECT_EQ(s.params().theta, replayParams(c).theta);
  EXPECT_EQ(s.time(), kept->time());
  for (int k = 0; k < after; ++k) s.substep();
  const sim::Particles second = s.particles();
  EXPECT_EQ(s.clock().tick, firstClock.tick);
  EXPECT_EQ(s.time(), firstClock.time());
  EXPECT_TRUE(sameBytes(first.posMass, second.posMass)) << "positions";
  EXPECT_TRUE(sameBytes(first.vel, second.vel)) << "velocities";
  EXPECT_TRUE(sameBytes(first.accPot, second.accPot)) << "accelerations";
  EXPECT_TRUE(sameBytes(first.id, second.id)) << "ids (order)";
  EXPECT_TRUE(sameBytes(first.bin, second.bin)) << "bins";
  EXPECT_TRUE(sameBytes(first.tag, second.tag)) << "tags";
  // And the run really moved: a replay that changes nothing would pass the above.
  const sim::Particles keptState = [&] {
    s.restore(*kept);
    return s.particles();
  }();
  EXPECT_FALSE(sameBytes(keptState.posMass, second.posMass));
  return kept->onDevice();
}

}  // namespace bhviz::test
