#pragma once
// What the CUDA walk tests share: a device scene (particles uploaded, the tree built, groups and
// a walk on demand), the two active sets, and a bitwise comparison.

#include <cstdint>
#include <cstring>

#include "sim/cuda/walk.h"
#include "sim/ic/initial_conditions.h"
#include "sim/rng.h"

namespace bhviz::test::walk {

using namespace bhviz::sim;

/// The sparse active set: depth 4 at tick 4 makes bins 2, 3, 4 (and deeper, clamped) active;
/// most particles sit in bins 0 and 1, so about one in eight is a target.
constexpr cuda::ActiveRule kSparse{4, 4, false};
constexpr cuda::ActiveRule kAll{0, 0, true};

inline void setBins(Particles& p, bool sparse, std::uint64_t seed) {
  Rng rng(seed ^ 0x5bd1e995u);
  for (auto& b : p.bin) {
    const double u = rng.uniform();
    b = !sparse ? 0 : u < 0.87 ? std::uint8_t(rng.next() % 2) : std::uint8_t(2 + rng.next() % 6);
  }
}

inline bool sameBits(const void* a, const void* b, std::size_t bytes) {
  return std::memcmp(a, b, bytes) == 0;
}

/// A device scene: particles uploaded, tree built and moments for `mac`.
struct Scene {
  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  cuda::DeviceGroups groups;
  cuda::DeviceBuffer<cuda::WalkCounters> counters;
  cuda::DeviceProperties device = cuda::queryDeviceProperties();

  Scene() { counters.reserve(1); }
  void build(const Particles& h, int nLeaf, const MacSetup& mac) {
    cuda::uploadParticles(h, d);
    cuda::launchBuild(d, Curve::Hilbert, nLeaf, mac, ws, tree, nullptr);
  }
  /// A Plummer sphere of n particles, its bins setBins(sparse), built at N_leaf 16.
  void buildPlummer(std::size_t n, std::uint64_t seed, bool sparse, const MacSetup& mac) {
    Particles h = makePlummer(n, seed);
    setBins(h, sparse, seed);
    build(h, 16, mac);
  }
  InteractionCounts forces(cuda::ActiveRule rule, int nGroup, const cuda::WalkSettings& s,
                           cuda::GroupRuns runs = cuda::GroupRuns::Whole) {
    cuda::launchGroups(tree, d, ws, rule, nGroup, groups, device, nullptr, nullptr, runs);
    cuda::launchWalk(tree, groups, d, s, counters.data(), device, nullptr);
    return cuda::downloadCounters(counters.data());
  }
  /// forces() on poisoned accelerations: the walk's raw counters, and the particles in `out`.
  cuda::WalkCounters forcesRaw(cuda::ActiveRule rule, int nGroup, const cuda::WalkSettings& s,
                               Particles& out, cuda::GroupRuns runs = cuda::GroupRuns::Whole) {
    d.accPot.poison();
    forces(rule, nGroup, s, runs);
    cuda::WalkCounters raw{};
    cuda::copyToHost(&raw, counters.data(), sizeof raw);
    cuda::downloadParticles(d, out);
    return raw;
  }
};

}  // namespace bhviz::test::walk
