#pragma once
// The golden determinism scenes (Box2D keeps such a test in shared/determinism.h): fixed seeded
// initial conditions, fixed parameters and a fixed number of steps, and a hash of the final
// state's bits. test_determinism runs them on the CPU backend for several OpenMP thread counts
// against committed hashes; test_cuda_determinism runs them twice on the CUDA backend.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

namespace bhviz::test {

/// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3), over bytes. Words
/// go in least significant byte first whatever the host's byte order, so a hash means the same
/// values everywhere.
class Fnv1a64 {
 public:
  void byte(std::uint8_t b) {
    m_h ^= b;
    m_h *= 0x100000001b3ull;
  }
  void word(std::uint32_t w) {
    for (int k = 0; k < 4; ++k) byte(static_cast<std::uint8_t>(w >> (8 * k)));
  }
  void bits(float f) {  // the bit pattern: −0 is not 0, and every NaN payload counts
    std::uint32_t w;
    std::memcpy(&w, &f, sizeof w);
    word(w);
  }
  void vec(const sim::Vec4& v) {
    bits(v.x);
    bits(v.y);
    bits(v.z);
    bits(v.w);
  }
  std::uint64_t value() const { return m_h; }

 private:
  std::uint64_t m_h = 0xcbf29ce484222325ull;
};

/// One particle's record: posMass, vel, accPot (x, y, z, w each), id, tag and bin.
inline void addParticle(Fnv1a64& h, const sim::Particles& p, std::size_t i) {
  h.vec(p.posMass[i]);
  h.vec(p.vel[i]);
  h.vec(p.accPot[i]);
  h.word(p.id[i]);
  h.byte(p.tag[i]);
  h.byte(p.bin[i]);
}

/// The hash of a state: its particles' records in id order, whatever order the backend keeps.
inline std::uint64_t stateHash(const sim::Particles& state) {
  const sim::Particles p = sim::sortedById(state);
  Fnv1a64 h;
  for (std::size_t i = 0; i < p.size(); ++i) addParticle(h, p, i);
  return h.value();
}

/// Whether particle i of a and of b have the same record, bit for bit.
inline bool sameParticle(const sim::Particles& a, const sim::Particles& b, std::size_t i) {
  Fnv1a64 x, y;
  addParticle(x, a, i);
  addParticle(y, b, i);
  return x.value() == y.value();
}

inline std::string hex(std::uint64_t h) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%016llx", static_cast<unsigned long long>(h));
  return s;
}

/// A fixed run: the initial conditions, the parameters and the number of dtMax intervals.
struct DeterminismScene {
  const char* name;
  sim::Particles (*make)();
  sim::SimParams params;
  int steps;  ///< Simulation::advance(steps): whole dtMax intervals [1]
};

/// A 4,000-particle merger (two 2,000-particle disk galaxies, parabolic orbit) on block steps:
/// 4 intervals of dtMax = 1/8 with η = 0.1, so bins 0 to 4 are occupied (64 substeps) and bin
/// choice, the active-only force evaluations and the integer clock all shape the result. The
/// Bonsai MAC and no far-cell expansion (named: the golden hashes predate both defaults), and
/// the defaults otherwise (quadrupole, Hilbert keys, N_leaf 16, N_group 64).
inline DeterminismScene blockStepMerger() {
  sim::SimParams p;
  p.mac = sim::MacKind::Bonsai;
  p.expansionRatio = 0.0f;
  p.softening = 0.05f;
  p.stepping = sim::TimeStepping::Block;
  p.dtMax = 1.0f / 8.0f;
  p.maxBinDepth = 6;
  p.eta = 0.1f;
  p.rebuildInterval = 1;  // every evaluation rebuilds: the refits have their own scene
  return {"block-step merger", [] { return sim::makeMerger(4000, 2026); }, p, 4};
}

/// The same merger with the tree rebuilt at every 4th force evaluation and refitted in between:
/// the refit's moments, and the rebuild pattern, must not depend on the threads either. (A
/// fixed interval: the tuned one follows measured times, so it differs from run to run.) With the
/// far cells expanded by both rules (distance and mass, named), on the block substeps' groups.
inline DeterminismScene refittedMerger() {
  DeterminismScene scene = blockStepMerger();
  scene.name = "refitted merger";
  scene.params.rebuildInterval = 4;
  scene.params.expansionRatio = 0.08f;
  scene.params.expansionBudget = 2.0f;
  return scene;
}

/// A 4,096-particle Plummer sphere on shared steps: 32 steps of 1/128, with the other key curve
/// and MAC than the merger (Morton keys, the acceleration MAC, whose group |a|_min reads the
/// previous forces), smaller leaves and groups, and the far cells expanded about their groups
/// (by distance and by mass, the defaults of 2026-11-28, named).
inline DeterminismScene sharedStepPlummer() {
  sim::SimParams p;
  p.mac = sim::MacKind::Acceleration;
  p.curve = sim::Curve::Morton;
  p.nLeaf = 8;
  p.nGroup = 32;
  p.softening = 0.05f;
  p.stepping = sim::TimeStepping::Shared;
  p.dtMax = 1.0f / 128.0f;
  p.rebuildInterval = 1;
  p.expansionRatio = 0.08f;
  p.expansionBudget = 2.0f;
  return {"shared-step Plummer", [] { return sim::makePlummer(4096, 2026); }, p, 32};
}

/// What a run of a scene ends with.
struct SceneRun {
  std::uint64_t initialHash = 0;  ///< of the initial conditions as made
  std::uint64_t finalHash = 0;    ///< of the state after the scene's steps
  sim::Particles final;           ///< in id order
  std::uint64_t substeps = 0;
  double time = 0.0;
};

/// Makes the scene's initial conditions (under the caller's thread count: their loops are
/// parallel too) and runs them on `backend`.
inline SceneRun runScene(const DeterminismScene& scene, std::unique_ptr<sim::Backend> backend) {
  const sim::Particles initial = scene.make();
  SceneRun r;
  r.initialHash = stateHash(initial);
  sim::Simulation sim(std::move(backend), initial, scene.params);
  sim.advance(scene.steps);
  r.final = sim::sortedById(sim.particles());
  r.finalHash = stateHash(r.final);
  r.substeps = sim.substeps();
  r.time = sim.time();
  return r;
}

/// Bins holding at least one particle.
inline int occupiedBins(const sim::Particles& p) {
  std::vector<int> count(256, 0);
  for (std::uint8_t b : p.bin) ++count[b];
  int occupied = 0;
  for (int c : count) occupied += c > 0;
  return occupied;
}

}  // namespace bhviz::test
