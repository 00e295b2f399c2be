#pragma once
// The CUDA twins of the groups and walk stages (cpu::buildGroups, cpu::walkGroups). Plain C++:
// compiles under g++ and nvcc; the CUDA runtime stays inside groups.cu and walk.cu.
//
// A force evaluation is: launchGroups → launchWalk, on one stream, after launchBuild (or
// launchMoments when only θ or the MAC changed). Neither waits for the device: the number of
// groups and the interaction counters stay in device memory until the caller reads them.

#include <cstddef>
#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/mac.h"
#include "sim/common/timestep.h"
#include "sim/common/vec.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/profile.h"

namespace bhviz::sim::cuda {

/// Which particles get forces: particle i is a target when `all || isActive(min(bin[i], depth),
/// tick, depth)` (timestep.h), as in the CPU backend.
struct ActiveRule {
  std::uint64_t tick = 0;  ///< current tick of the integer clock
  int depth = 0;           ///< deepest time bin D
  bool all = true;         ///< every particle is a target (first force evaluation, shared steps)
};

/// Whether a particle in time bin `bin` gets a force under `r` (bins deeper than the clock's
/// depth, left from a deeper clock, count as the deepest bin).
BHVIZ_HD inline bool isTarget(const ActiveRule& r, std::uint8_t bin) {
  const int b = bin < r.depth ? int(bin) : r.depth;
  return r.all || isActive(b, r.tick, r.depth);
}

/// The walk's order of the groups: the fullest first (a stable sort, so key order within equal
/// sizes). The persistent grid then ends on small, short groups rather than on long ones while
/// most warps idle. Only the order of the work depends on it, never a result.
struct WalkSchedule {
  DeviceBuffer<std::uint8_t> key[2];     ///< sort keys: 254 − count (unused slots 255)
  DeviceBuffer<std::uint32_t> order[2];  ///< group indices, then in walk order
  DeviceBuffer<unsigned char> temp;      ///< CUB temporary storage
};

/// The groups on the device, in the layout of sim::Groups, plus their scratch.
struct DeviceGroups {
  DeviceBuffer<std::uint32_t> first;  ///< first particle of each group (key order)
  DeviceBuffer<std::uint32_t> count;  ///< particles in the run (active or not)
  DeviceBuffer<Box> box;              ///< box of the group's active particles
  DeviceBuffer<float> accMin;         ///< smallest |a_old| of its active particles
  DeviceBuffer<std::uint32_t> size;   ///< 1 element: the number of groups
  std::size_t capacity = 0;           ///< groups the buffers hold (an upper bound, n)
  int nGroup = 0;                     ///< N_group of the last launchGroups (host copy)

  // scratch
  DeviceBuffer<std::uint32_t>
      runLength;                     ///< per particle: length of the run starting there, else 0
  DeviceBuffer<unsigned char> temp;  ///< CUB temporary storage
  mutable DeviceBuffer<std::uint32_t> walkStack;  ///< the walk's per-warp cell stacks
  mutable WalkSchedule schedule;                  ///< the walk's order of the groups

  void reserve(std::size_t n);  ///< sizes everything but the CUB storage for n particles
  void poison();
};

/// What launchWalk needs to know of the physics.
struct WalkSettings {
  MacSetup mac;             ///< the caller passes BarnesHut where no old accelerations exist
  bool quadrupole = true;   ///< add the cells' quadrupole terms
  float softening = 0.05f;  ///< Plummer ε [length]
  /// Entries of each warp's cell stack kept in shared memory, the rest spilling to global
  /// memory: 0 for all the kernel has (kWalkSharedStack), else a power of two in
  /// [256, kWalkSharedStack]. Only tests set it, to exercise the spill.
  int sharedStack = 0;
};

/// Cell-stack entries per warp in shared memory (the stack's top; deeper entries spill).
inline constexpr int kWalkSharedStack = 512;

/// Device-side interaction counters of one walk, as InteractionCounts, plus the walk's own
/// bookkeeping. launchWalk resets the whole struct before it starts.
struct WalkCounters {
  unsigned long long cell;      ///< M2P interactions (per target: cells in its group's list)
  unsigned long long particle;  ///< P2P interactions (per target: leaf particles, self included)
  unsigned long long targets;   ///< particles that received a force
  unsigned int nextGroup;       ///< the persistent grid's work counter
  unsigned int overflow;        ///< nonzero if a warp's cell stack overflowed (a bug: see walk.cu)
  // diagnostics (bench_cuda_walk, tests)
  unsigned int warps;           ///< warps of the persistent grid
  unsigned int stackPeak;       ///< deepest cell stack of any warp [entries]
  unsigned long long spilled;   ///< stack entries moved from shared to global memory
  unsigned long long busyNs;    ///< sum over warps of (last group done − first group taken)
  unsigned long long startInv;  ///< ~(earliest warp start) [ns, %globaltimer]
  unsigned long long endMax;    ///< latest warp end [ns, %globaltimer]
  unsigned int groups;          ///< the groups walked (a copy of DeviceGroups::size), so that the
                                ///< counters' one read-back brings it to the host too
};

/// The largest N_group launchGroups and launchWalk support (a lane holds up to 4 targets).
inline constexpr int kMaxWalkGroup = 128;

/// Groups exactly as cpu::buildGroups makes them, with no host round trip: runs of particles in
/// key order; below each cell holding more than nGroup, its children holding ≤ nGroup merged
/// greedily while the run stays ≤ nGroup and its box overlaps no larger sibling (a larger leaf
/// cut into runs of nGroup), only those with an active particle; box and accMin over the
/// active particles. Reads the tree's tight boxes, p.accPot (old accelerations) and p.bin.
void launchGroups(const DeviceTree& tree, const DeviceParticles& p, const BuildWorkspace& ws,
                  ActiveRule rule, int nGroup, DeviceGroups& groups, Stream stream);

/// The tree walk: writes p.accPot of the active particles of every group (the others keep
/// theirs) and adds the interaction counts to *d_counters (device memory; reset first).
/// Reads accPot (old |a|) only through groups.accMin.
void launchWalk(const DeviceTree& tree, const DeviceGroups& groups, DeviceParticles& p,
                ActiveRule rule, const WalkSettings& s, WalkCounters* d_counters, Stream stream);

// Host copies (blocking), for tests and diagnostics.
Groups downloadGroups(const DeviceGroups& d);
/// Reads the counters (and, when `groups` is given, the number of groups walked); throws
/// std::runtime_error if the walk reported an overflow.
InteractionCounts downloadCounters(const WalkCounters* d_counters,
                                   std::uint32_t* groups = nullptr);

}  // namespace bhviz::sim::cuda
