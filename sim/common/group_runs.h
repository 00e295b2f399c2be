#pragma once
// Few groups, each walked in runs (both backends, one rule). Under the acceleration MAC, a block
// substep whose active particles make fewer than kRunsBelow groups (the cusp's deepest bins: M31
// 10⁶'s 25 k targets in ~650 groups of ~39) cuts each group's active particles, in key order,
// into up to kMaxRuns runs of consecutive targets. Each run is a group of its own, with the box
// of its own targets but the whole group's smallest |a_old|: every target's bound stays what the
// MAC promises it (its run's box still holds it, the |a_old| is no larger), while the tighter box
// opens fewer cells. A run expands its far cells where its group would have (Groups::expandAs:
// the group's targets decide, not the run's few). The rule reads the groups alone, so the CPU
// and any GPU make the same runs and the same interaction lists. The runs take the place of the
// walk's own split of few groups over idle warps (walk.cu), which would walk each run's list
// again for a part of its few targets.
//
// What the cut trades (tests/test_tree.cpp's scene, CPU, 2026-11-29): under the acceleration MAC
// at α = 10⁻³, 29 % fewer interactions for a p99 force error 21 % higher, where raising α to the
// same interactions raises it ~2.2×; under the Bonsai MAC its interactions and errors lie on
// the curve of θ itself (as a larger θ would): not a better trade, so the geometric MACs keep
// their groups whole and θ means what it meant.

#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/mac.h"

namespace bhviz::sim {

inline constexpr std::uint32_t kRunsBelow = 8192;  ///< fewer groups than this are cut into runs
inline constexpr std::uint32_t kMaxRuns = 8;       ///< runs of one group at most

/// Whether a backend cuts a substep's groups into runs: under the acceleration MAC, where not
/// every particle is a target (the first evaluation, with no |a_old| yet, has all of them).
inline bool cutsGroupsIntoRuns(MacCode mac, bool everyParticleTarget) {
  return mac == MacCode::Acceleration && !everyParticleTarget;
}

/// The runs each group is cut into where `groups` groups were made: enough for kRunsBelow
/// groups in all, rounded up, within [1, kMaxRuns] (1: no group is cut).
BHVIZ_HD inline std::uint32_t runsPerGroup(std::uint32_t groups) {
  if (groups == 0 || groups >= kRunsBelow) return 1;
  const std::uint32_t runs = (kRunsBelow + groups - 1) / groups;
  return runs < kMaxRuns ? runs : kMaxRuns;
}

/// The runs of a group of `targets` active particles: `perGroup`, but none empty.
BHVIZ_HD inline std::uint32_t runsOf(std::uint32_t targets, std::uint32_t perGroup) {
  return targets < perGroup ? targets : perGroup;
}

/// The first of a group's `targets` (counted in key order) in run k of `runs`; run k holds
/// [runBegin(k), runBegin(k + 1)): ⌊targets / runs⌋ or one more.
BHVIZ_HD inline std::uint32_t runBegin(std::uint32_t k, std::uint32_t targets, std::uint32_t runs) {
  return static_cast<std::uint32_t>(std::uint64_t{k} * targets / runs);
}

/// The particles of run r of a group's q runs, [first, end): from its first target (run 0: the
/// group's first particle) to the next run's first target (the last run: the group's end), so the
/// runs partition the group and the inactive particles between two runs go with the earlier one.
/// `groupTargets`: the particle indices of the group's `targets` targets, in key order.
struct RunParticles {
  std::uint32_t first, end;
};
BHVIZ_HD inline RunParticles runParticles(std::uint32_t r, std::uint32_t q, std::uint32_t targets,
                                          std::uint32_t groupFirst, std::uint32_t groupEnd,
                                          const std::uint32_t* groupTargets) {
  return {r == 0 ? groupFirst : groupTargets[runBegin(r, targets, q)],
          r + 1 == q ? groupEnd : groupTargets[runBegin(r + 1, targets, q)]};
}

}  // namespace bhviz::sim
