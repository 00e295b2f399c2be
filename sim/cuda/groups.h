#pragma once
// The CUDA twin of the groups stage (cpu::buildGroups). Plain C++: compiles under g++ and nvcc;
// the CUDA runtime stays inside groups.cu.
//
// A force evaluation is: launchGroups → launchWalk (walk.h), on one stream, after launchBuild
// (or launchMoments when only θ or the MAC changed). Neither waits for the device: the number of
// groups and the interaction counters stay in device memory until the caller reads them.

#include <cstddef>
#include <cstdint>

#include "sim/common/group_runs.h"
#include "sim/common/hd.h"
#include "sim/common/timestep.h"
#include "sim/common/vec.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/device_properties.h"

namespace bhviz::sim::cuda {

/// Which particles get forces: particle i is a target when `all || isActive(min(bin[i], depth),
/// tick, depth)` (timestep.h), as in the CPU backend.
struct ActiveRule {
  std::uint64_t tick = 0;  ///< current tick of the integer clock
  int depth = 0;           ///< deepest time bin D
  bool all = true;         ///< every particle is a target (a first evaluation, a synchronized tick)
};

/// Whether a particle in time bin `bin` gets a force under `r` (bins deeper than the clock's
/// depth, left from a deeper clock, count as the deepest bin).
BHVIZ_HD inline bool isTarget(const ActiveRule& r, std::uint8_t bin) {
  const int b = bin < r.depth ? int(bin) : r.depth;
  return r.all || isActive(b, r.tick, r.depth);
}

/// 1 for a particle that gets a force under `rule`, 0 else (and past the last particle: an
/// exclusive scan's total): the groups' compaction of the targets, the cover of a rebuild around
/// them (local_rebuild.cu).
struct ActiveFlag {
  const std::uint8_t* bin;
  ActiveRule rule;
  std::uint32_t n;
  BHVIZ_HD std::uint32_t operator()(std::uint32_t i) const {
    return i < n && isTarget(rule, bin[i]) ? 1u : 0u;
  }
};

/// The walk's order of the groups: the most expected work first (DeviceGroups::expected, in
/// half octaves; a stable sort, so key order within one). The persistent grid then ends on short
/// groups rather than on one long group while most warps idle. Only the order of the work
/// depends on it, never a result.
struct WalkSchedule {
  DeviceBuffer<std::uint8_t> key[2];     ///< 63 − half-octave class (unused slots 255)
  DeviceBuffer<std::uint32_t> order[2];  ///< group indices, then in walk order
  DeviceBuffer<unsigned char> temp;      ///< CUB temporary storage
  DeviceBuffer<std::uint32_t> sampled;   ///< a sample's number of groups (sampleGroups)
};

/// The union of the groups' boxes and their smallest |a_old| (groupRegion).
struct GroupRegion {
  Box box;
  float accMin = INFINITY;  ///< as TargetRegion's: no group, no bound
};

/// The groups on the device, in the layout of sim::Groups, plus their scratch.
struct DeviceGroups {
  DeviceBuffer<std::uint32_t> first;     ///< first particle of each group (key order)
  DeviceBuffer<std::uint32_t> count;     ///< particles in the run (active or not)
  DeviceBuffer<Box> box;                 ///< box of the group's active particles
  DeviceBuffer<float> accMin;            ///< smallest |a_old| of its active particles
  DeviceBuffer<std::uint32_t> expandAs;  ///< Groups::expandAs (its targets where not a run)
  DeviceBuffer<std::uint32_t> size;      ///< 1 element: the number of groups
  // The targets the walk gives forces: a group's are targets[targetFirst, + targetCount), which
  // are its active particles (compact) or all of its particles (every particle a target).
  DeviceBuffer<std::uint32_t> targetFirst;  ///< first entry of each group's targets
  DeviceBuffer<std::uint32_t> targetCount;  ///< the group's active particles
  DeviceBuffer<std::uint32_t> targets;      ///< particle indices, active ones in key order
  /// Per group: the work its walk is expected to take, the sum over its targets of their last
  /// measured work (launchGroups' `lastWork`; a target never measured, or all of them without
  /// it, counts 1, so that the fullest groups come first).
  DeviceBuffer<std::uint32_t> expected;
  bool compact = false;      ///< `targets` is in use; else target k is particle k
  std::size_t capacity = 0;  ///< groups the buffers hold (an upper bound, n)
  /// Groups the last launchGroups can have made at most (host; its count stays on the device):
  /// cells + n / nGroup, the walk order's sort length (a quarter of n at 8 M particles).
  std::size_t bound = 0;
  int nGroup = 0;  ///< N_group of the last launchGroups (host copy)

  // scratch
  DeviceBuffer<std::uint32_t>
      runLength;  ///< per particle: length of the run starting there, else 0
  DeviceBuffer<std::uint32_t> activeBefore;  ///< per particle (and one past): active ones before
  DeviceBuffer<unsigned char> temp;          ///< CUB temporary storage
  mutable DeviceBuffer<std::uint32_t> walkStack;  ///< the walk's per-warp cell stacks
  mutable WalkSchedule schedule;                  ///< the walk's order of the groups
  mutable DeviceBuffer<GroupRegion> region;       ///< groupRegion's result
  /// The groups before they were cut into runs (group_runs.h), kRunsBelow entries each, and
  /// one more in `runStart` (its last: how many groups there were, 0 where none was cut; the
  /// walk reads it where `cutAsked`, and does not split runs again).
  struct Uncut {
    DeviceBuffer<std::uint32_t> first, count, targetFirst, targetCount, runStart;
    DeviceBuffer<float> accMin;
    void reserve();
    void poison();
  } uncut;
  bool cutAsked = false;  ///< host: the last launchGroups may have cut (its flag written)

  /// The walk's flag (device memory): nonzero where the last launchGroups cut groups into runs;
  /// written only where `cutAsked`.
  const std::uint32_t* cutFlag() const { return uncut.runStart.data() + kRunsBelow; }

  void reserve(std::size_t n);  ///< sizes everything but the CUB storage for n particles
  void poison();
};

/// Where the groups are, on the host: the union of their boxes and their smallest |a_old| (the
/// region other ranks cut their LETs for). One block reduces on the device; one small copy.
GroupRegion groupRegion(const DeviceGroups& g, Stream stream);

/// The groups' walk order (walk_schedule.cu): a stable radix sort of the expected work's half
/// octaves over the slots the last launchGroups can have filled (DeviceGroups::bound; the number
/// of groups stays on the device).
/// Returns the group indices in walk order, in `g.schedule`.
const std::uint32_t* scheduleGroups(const DeviceGroups& g, Stream stream);

/// A walk's groups on the device: their indices in walk order and their number.
struct GroupOrder {
  const std::uint32_t* order;
  const std::uint32_t* count;
};
/// Groups 0, every, 2·every, … of the last launchGroups, in that order (a sample whose walk's
/// counters tell the interactions a target: Backend::probeRefit), in `g.schedule`.
GroupOrder sampleGroups(const DeviceGroups& g, std::uint32_t every, Stream stream);

/// Each particle's last measured work, carried from walk to walk for the schedule
/// (walk_schedule.cu): `last[i] = work[i]` where the walks since the last build measured
/// particle i (work > 0: every target interacts at least with itself), else unchanged.
void rememberWork(const std::uint32_t* work, std::uint32_t* last, std::size_t n, Stream stream);
/// After the sort: `last` follows its particles (new position k takes old entry order[k]),
/// through `scratch` (n entries; the two are swapped).
void carryWork(const std::uint32_t* order, std::size_t n, DeviceBuffer<std::uint32_t>& last,
               DeviceBuffer<std::uint32_t>& scratch, Stream stream);

/// The largest N_group launchGroups and launchWalk support (a lane holds up to 4 targets).
inline constexpr int kMaxWalkGroup = 128;

/// Whether launchGroups cuts few groups into runs (sim/common/group_runs.h; the backend's choice,
/// cutsGroupsIntoRuns).
enum class GroupRuns : std::uint8_t { Whole, Cut };

/// Groups exactly as cpu::buildGroups makes them, with no host round trip: runs of particles in
/// key order; below each cell holding more than nGroup, its children holding ≤ nGroup merged
/// greedily while the run stays ≤ nGroup and its box overlaps no larger sibling (a larger leaf
/// cut into runs of nGroup), only those with an active particle; box and accMin over the active
/// particles, and the work expected of each from `lastWork` (per particle, in the current order;
/// null: none measured). With `runs` Cut, where not every particle is a target (`!rule.all`),
/// fewer than kRunsBelow groups are then cut into runs as cpu::cutIntoRuns cuts them
/// (group_runs.h). Reads the tree's tight boxes, p.accPot (old accelerations) and p.bin.
void launchGroups(const DeviceTree& tree, const DeviceParticles& p, const BuildWorkspace& ws,
                  ActiveRule rule, int nGroup, DeviceGroups& groups, const DeviceProperties& device,
                  Stream stream, const std::uint32_t* lastWork = nullptr,
                  GroupRuns runs = GroupRuns::Whole);

// Host copies (blocking), for tests and diagnostics (expandAs always filled).
Groups downloadGroups(const DeviceGroups& d);

}  // namespace bhviz::sim::cuda
