#pragma once
// The CUDA twin of the walk stage (cpu::walkGroups). Plain C++: compiles under g++ and nvcc;
// the CUDA runtime stays inside walk.cu. The groups it walks come from groups.h.

#include <array>
#include <cstddef>
#include <cstdint>

#include "sim/common/keys.h"
#include "sim/common/local_expansion.h"
#include "sim/common/mac.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/device_buffer.h"
#include "sim/cuda/device_properties.h"
#include "sim/cuda/groups.h"
#include "sim/profile.h"

namespace bhviz::sim::cuda {

/// What launchWalk needs to know of the physics.
struct WalkSettings {
  MacSetup mac;             ///< the caller passes BarnesHut where no old accelerations exist
  bool quadrupole = true;   ///< add the cells' quadrupole terms
  float softening = 0.05f;  ///< Plummer ε [length]
  /// Entries of each warp's cell stack kept in shared memory, the rest spilling to global
  /// memory: 0 for all the kernel has (kWalkSharedStack), else a power of two in
  /// [256, kWalkSharedStack]. Only tests set it, to exercise the spill.
  int sharedStack = 0;
  /// false: the opened leaves are skipped, so the walk has no P2P and its forces are wrong.
  /// Only bench_cuda_walk clears it, to time what the near field costs.
  bool nearField = true;
  /// The most warps one group's targets are split over when there are fewer groups than two per
  /// warp (walk.cu): 0 for kMaxParts, 1 for one warp per group. Only tests and benchmarks set it.
  int maxParts = 0;
  /// false: the targets' accelerations only; each keeps the potential it had (accPot.w). The
  /// backends clear it where no particle's step ends, and on demand where none was asked for
  /// (Backend::computesPotential, sim/backend.h).
  bool potential = true;
  /// Which accepted cells are expanded about the group's centre once per group (M2L, L2P)
  /// instead of applied to each target (M2P): those at least the group's radius (half its box's
  /// diagonal) / ρ from it, and nearer ones the mass rule takes (sim/common/local_expansion.h;
  /// the backends' from expansionRule(SimParams, …) in sim/params.h); {}: none.
  ExpansionRule expansion{};
};

/// The most warps a group's targets are split over (WalkSettings::maxParts).
inline constexpr unsigned kMaxParts = 8;

/// Cell-stack entries per warp in all (walk.cu has the bound: one push of ≤ 256 cells a level).
inline constexpr std::uint32_t kWalkStackCapacity = 256 * (kMaxLevel + 1);

/// Cell-stack entries per warp in shared memory (the stack's top; deeper entries spill).
inline constexpr int kWalkSharedStack = 512;

/// Device-side interaction counters of one walk, as InteractionCounts, plus the walk's own
/// bookkeeping. launchWalk resets the whole struct before it starts.
struct WalkCounters {
  unsigned long long cell;      ///< cell interactions (per target: cells in its group's list)
  unsigned long long particle;  ///< P2P interactions (per target: leaf particles, self included)
  unsigned long long targets;   ///< particles that received a force
  unsigned long long expanded;  ///< of `cell`, those evaluated by the group's expansion
  unsigned int nextGroup;       ///< the persistent grid's work counter (parts of groups)
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
  unsigned int parts;           ///< warps each group's targets were split over (walk.cu)
};

/// The tree walk: writes p.accPot of every group's targets (its active particles, as
/// launchGroups chose them; the others keep theirs), x, y, z and, where s.potential, w; and adds
/// the interaction counts to
/// *d_counters (device memory; reset first).
/// Reads accPot (old |a|) only through groups.accMin.
/// The persistent grid's size comes from `device` (its walkBlocks).
void launchWalk(const DeviceTree& tree, const DeviceGroups& groups, DeviceParticles& p,
                const WalkSettings& s, WalkCounters* d_counters, const DeviceProperties& device,
                Stream stream);

/// A tree the walk takes its sources from: the local tree (the overload above), or an imported
/// LET uploaded to the device (its walk records, tight boxes and particles).
struct WalkSources {
  const WalkCell* cells = nullptr;
  const Box* box = nullptr;
  std::size_t count = 0;          ///< cells
  const Vec4* posMass = nullptr;  ///< the particles the leaves' first/count index
};

/// Where a walk records its groups' opened leaves instead of evaluating them: the first pass of
/// the mutual near field (walk_mutual.h). Each opened leaf of group g adds the key
/// (g << leafBits) | leaf; the walk counts its leaves' particles as it would evaluate them.
struct NearLeaves {
  std::uint64_t* keys = nullptr;        ///< device memory, `capacity` entries
  unsigned long long* count = nullptr;  ///< device: the keys made (those past capacity lost)
  std::uint32_t capacity = 0;
  unsigned leafBits = 0;  ///< bits of a cell index
};

/// Where the sums go: written (the local tree) or added (another tree's share) to accPot of the
/// targets; with `work`, each target's entry grows by its group's interactions (cells + leaf
/// particles) — the weight of the domain decomposition.
struct WalkOutput {
  bool add = false;
  std::uint32_t* work = nullptr;  ///< device memory, one entry per particle, or null
  /// Writes the potential alone (WalkSettings::potential on, `add` off): the last evaluation's
  /// walk again for its potentials, its accelerations kept (Backend::recomputePotentials).
  bool potentialOnly = false;
  /// Records the opened leaves instead of their P2P (the far field alone is written); needs
  /// WalkSettings::maxParts 1, so that each group walks once.
  const NearLeaves* nearLeaves = nullptr;
  /// Where the forces go instead of the particles' accPot (n entries; Backend::probeRefit's
  /// scratch), or null.
  Vec4* accPot = nullptr;
  /// Walks only groups 0, k, 2k, … for k > 1 (by index, in that order: sampleGroups), a sample
  /// whose counters tell the interactions a target (Backend::probeRefit).
  std::uint32_t sampleEvery = 1;
};

/// launchWalk with the sources and the output spelled out.
void launchWalk(const WalkSources& sources, const DeviceGroups& groups, DeviceParticles& p,
                const WalkSettings& s, const WalkOutput& out, WalkCounters* d_counters,
                const DeviceProperties& device, Stream stream);

/// Fills device.walkBlocks (device.multiProcessors already set) for the current device: the
/// resident blocks of each walk kernel. Called by queryDeviceProperties.
void queryWalkBlocks(DeviceProperties& device);

// Host copies (blocking), for tests and diagnostics.
/// Reads the counters (and, when `groups` is given, the number of groups walked); throws
/// std::runtime_error if the walk reported an overflow.
InteractionCounts downloadCounters(const WalkCounters* d_counters, std::uint32_t* groups = nullptr);

/// The walks' counters on their way to the host without a wait: each walk's are copied into a
/// slot of pinned memory behind it on the stream, and read once the caller has waited for the
/// stream anyway (the backend's settle).
class CounterReadback {
 public:
  static constexpr std::size_t kSlots = 64;  ///< walks queued before a collect must come
  /// Queues the copy of *d_counters behind the work on `stream`; `add`: the walk of another
  /// tree for targets already counted. False when every slot is taken (collect first).
  bool queue(const WalkCounters* d_counters, bool add, Stream stream);
  bool pending() const { return m_used > 0; }
  /// Adds the queued walks' counts to `counts` and frees the slots; *groups (where not null): the
  /// groups of the last walk. The stream must have passed the copies. Throws std::runtime_error if
  /// a walk reported a stack overflow.
  void collect(InteractionCounts& counts, std::uint32_t* groups);

 private:
  PinnedBytes m_slots;
  std::array<bool, kSlots> m_add{};
  std::size_t m_used = 0;
};

}  // namespace bhviz::sim::cuda
