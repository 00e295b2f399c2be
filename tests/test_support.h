#pragma once
// Helpers shared by the physics tests: scenes come only from the seeded initial conditions.

#include <vector>

#include "sim/cpu/cpu_backend.h"
#include "sim/direct_sum.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::test {

/// The 20,000-particle Plummer sphere of the accuracy tests, made once per test program.
inline const sim::Particles& plummer20k() {
  static const sim::Particles p = sim::makePlummer(20000, 2026);
  return p;
}

/// The 20,000-particle galaxy merger of the accuracy tests, made once per test program.
inline const sim::Particles& merger20k() {
  static const sim::Particles p = sim::makeMerger(20000, 2026);
  return p;
}

/// Block steps of dtMax 1/16 over six bins (η 0.1, ε 0.01), rebuilt, refitted or rebuilt around
/// their targets as the tuners choose (`auto`), under `mac`.
inline sim::SimParams tunedBlockParams(sim::MacKind mac) {
  sim::SimParams p;
  p.softening = 0.01f;
  p.mac = mac;
  p.stepping = sim::TimeStepping::Block;
  p.dtMax = 1.0f / 16.0f;
  p.maxBinDepth = 5;
  p.eta = 0.1f;
  p.rebuildInterval = sim::kRebuildAuto;
  return p;
}

/// `b` holds `ic`, its forces evaluated at `clock` (every particle a target, no old
/// accelerations) and drifted by `dt`, with a fresh profile: a tree that a later evaluation may
/// refit, rebuild around the targets or rebuild.
inline void builtAndDrifted(sim::CpuBackend& b, const sim::Particles& ic, const sim::Clock& clock,
                            const sim::SimParams& p, float dt) {
  b.upload(ic);
  b.computeForces(clock, p, sim::ForceTargets::All, false);
  b.drift(dt);
  b.resetProfile();
}

/// Tree forces of every particle (one evaluation, no old accelerations unless `twice`).
inline sim::Particles treeForces(const sim::Particles& in, const sim::SimParams& p,
                                 bool twice = false, sim::InteractionCounts* counts = nullptr) {
  sim::CpuBackend backend;
  backend.upload(in);
  const sim::Clock clock{0.0, 0, 0, p.dtMax};
  backend.computeForces(clock, p, sim::ForceTargets::All, false);
  if (twice) {
    backend.resetProfile();
    backend.computeForces(clock, p, sim::ForceTargets::All, true);
  }
  if (counts) *counts = backend.profile().interactions;
  sim::Particles out;
  backend.download(out);
  return out;
}

/// Error of tree forces against exact direct summation on a fixed random sample.
struct Accuracy {
  sim::ForceError error;
  double interactionsPerParticle = 0.0;
};

inline Accuracy measureAccuracy(const sim::Particles& in, const sim::SimParams& p,
                                bool twice = false, std::size_t sample = 2000) {
  sim::InteractionCounts counts;
  const sim::Particles out = treeForces(in, p, twice, &counts);
  const std::vector<std::uint32_t> targets = sim::sampleIndices(out.size(), sample, 7);
  const std::vector<sim::Accel4d> ref = sim::directSum(out, targets, p.softening);
  return {sim::forceError(out, targets, ref),
          double(counts.cell + counts.particle) / double(counts.targets)};
}

}  // namespace bhviz::test
