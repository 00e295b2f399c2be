#pragma once
// The potentials of a block-step run, checked the same way on either backend: a substep that
// ends only some particles' steps leaves every potential as it was (its walk computes none), and
// where every step ends they are those of an evaluation of every particle (sim/backend.h,
// evaluatesPotential).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "sim/simulation.h"

namespace bhviz::test {

/// Each particle's potential by id.
inline std::unordered_map<std::uint32_t, float> potentialsById(const sim::Particles& p) {
  std::unordered_map<std::uint32_t, float> w;
  for (std::size_t i = 0; i < p.size(); ++i) w[p.id[i]] = p.accPot[i].w;
  return w;
}

/// Runs `sim` (block steps, synchronised) for `substeps` substeps and then to the end of the
/// block step, checking the potentials after each; then compares the last ones with a new
/// evaluation of every particle. Needs substeps that end some but not all steps.
inline void expectPotentialsOnlyWhereEveryStepEnds(sim::Simulation& sim, int substeps) {
  ASSERT_TRUE(sim.synchronized());
  int partial = 0, ended = 0;
  for (int k = 0; k < substeps || !sim.synchronized(); ++k) {
    const std::unordered_map<std::uint32_t, float> before = potentialsById(sim.particles());
    sim.substep();
    const sim::Particles after = sim.particles();
    if (sim.synchronized()) {
      ++ended;
      continue;
    }
    ++partial;
    std::size_t changed = 0;
    for (std::size_t i = 0; i < after.size(); ++i) {
      const float was = before.at(after.id[i]);
      changed += std::memcmp(&was, &after.accPot[i].w, sizeof(float)) != 0 ? 1 : 0;
    }
    EXPECT_EQ(changed, 0u) << "substep " << k << " (tick " << sim.clock().tick
                           << ") ends only some steps but changed potentials";
  }
  EXPECT_GE(partial, 3) << "the test needs substeps that end only some steps";
  EXPECT_GE(ended, 1);

  // Where every step ends: the potentials of every particle's evaluation (on a rebuilt tree, so
  // within the tree's error; stale ones, a block step old, would be off by percents).
  const sim::Particles last = sim.particles();
  sim.recomputeForces();
  const std::unordered_map<std::uint32_t, float> fresh = potentialsById(sim.particles());
  std::vector<double> rel;
  rel.reserve(last.size());
  for (std::size_t i = 0; i < last.size(); ++i) {
    const double f = fresh.at(last.id[i]);
    rel.push_back(std::fabs(double(last.accPot[i].w) - f) / std::fabs(f));
  }
  std::sort(rel.begin(), rel.end());
  EXPECT_LE(rel[rel.size() / 2], 1e-4) << "median relative difference from a new evaluation";
  EXPECT_LE(rel[rel.size() * 99 / 100], 1e-3) << "99th percentile";
}

}  // namespace bhviz::test
