#pragma once
// The tree of the last force evaluation in histograms, for the Tree panel and `--stats`: cells
// per level, leaves by the particles they hold, and the interactions each target had. Each
// backend counts where its tree lives (a host loop, two small kernels on the device, a sum over
// ranks); the per-element binning is here once, for the host loops and the kernels alike.
// Fixed-size and trivially copyable, so that it travels between ranks as bytes.

#include <array>
#include <cstdint>
#include <type_traits>

#include "sim/common/hd.h"
#include "sim/common/keys.h"
#include "sim/params.h"

namespace bhviz::sim {

/// Bins of the interactions histogram: 32 cover every 32-bit count.
inline constexpr int kInteractionBins = 32;
/// Levels of an octree: the root (0) to kMaxLevel.
inline constexpr int kTreeLevels = kMaxLevel + 1;
/// Entries of the occupancy histogram: 0..kMaxLeafSize particles, and one for the leaves beyond.
inline constexpr int kOccupancyBins = kMaxLeafSize + 2;

/// The interactions histogram's bin of a target with `work` interactions: floor(log2(work)), so
/// bin b holds [2^b, 2^(b+1)); 0 also holds a target with none (a built tree gives each ≥ 1).
BHVIZ_HD inline int interactionBin(std::uint32_t work) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(static_cast<int>(work | 1u));
#else
  return 31 - __builtin_clz(work | 1u);
#endif
}

/// The occupancy histogram's bin of a leaf holding `count` particles, built with N_leaf =
/// `leafSize`: the count itself, or leafSize + 1 for "more than N_leaf" (a cell of the deepest
/// level, kMaxLevel, cannot be split however many particles share it).
BHVIZ_HD inline int occupancyBin(std::uint32_t count, int leafSize) {
  return count <= static_cast<std::uint32_t>(leafSize) ? static_cast<int>(count) : leafSize + 1;
}

/// The tree, groups and walk of the last force evaluation in numbers. All zero before the first
/// evaluation (or after an upload). Under mpirun, every rank's statistics summed: a cell near
/// the top that several ranks' trees hold counts once per rank.
struct TreeStatistics {
  // ---- the tree ----
  std::uint64_t particles = 0;  ///< particles in the tree [1]
  std::uint64_t cells = 0;      ///< cells [1]
  std::uint64_t leaves = 0;     ///< cells without children [1]
  std::uint64_t groups = 0;     ///< walk groups [1]
  int levels = 0;               ///< levels of the tree (the deepest + 1; 0: no tree) [1]
  int leafSize = 0;             ///< N_leaf of the build: a cell holding more was split [particles]
  std::array<std::uint64_t, kTreeLevels> cellsPerLevel{};   ///< [level], 0 the root [1]
  std::array<std::uint64_t, kTreeLevels> leavesPerLevel{};  ///< the leaves among them [1]
  /// [k]: leaves holding k particles, k = 0..leafSize; [leafSize + 1]: leaves holding more (only
  /// at level kMaxLevel). The rest stay 0.
  std::array<std::uint64_t, kOccupancyBins> leavesByOccupancy{};
  std::uint64_t overfullParticles = 0;  ///< particles in the leaves of bin leafSize + 1 [1]

  // ---- the walk (the work of ForceParts::work: cells + leaf particles, self included) ----
  std::uint64_t targets = 0;  ///< particles that got a force in the last evaluation [1]
  /// [b]: targets with interactionBin(interactions) = b, i.e. 2^b ≤ interactions < 2^(b+1).
  std::array<std::uint64_t, kInteractionBins> interactionsLog2{};
  std::uint64_t interactions = 0;     ///< the targets' interactions summed [1]
  std::uint32_t minInteractions = 0;  ///< fewest of any target (0 without targets) [1]
  std::uint32_t maxInteractions = 0;  ///< most of any target [1]

  double meanInteractions() const {
    return targets > 0 ? double(interactions) / double(targets) : 0.0;
  }
  /// Particles per leaf [particles].
  double meanOccupancy() const { return leaves > 0 ? double(particles) / double(leaves) : 0.0; }

  /// Adds another tree's statistics (another rank's): counts and histograms sum, the extremes
  /// are over both, levels and leafSize the larger.
  TreeStatistics& operator+=(const TreeStatistics& o);
};
static_assert(std::is_trivially_copyable_v<TreeStatistics>, "travels between ranks as bytes");

}  // namespace bhviz::sim
