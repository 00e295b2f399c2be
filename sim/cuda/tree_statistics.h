#pragma once
// The CUDA twin of the CPU backend's tree statistics (sim/tree_statistics.h): two small kernels
// with shared-memory histograms, one over the cells, one over the particles' work, add into one
// device record that comes to the host in one copy; the tree itself never does. Plain C++:
// compiles under g++ and nvcc; the CUDA runtime stays inside tree_statistics.cu.

#include <cstdint>

#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/groups.h"
#include "sim/tree_statistics.h"

namespace bhviz::sim::cuda {

/// What the kernels add into; launchTreeStatistics zeroes it first.
struct TreeStatisticsSums {
  unsigned long long leavesPerLevel[kTreeLevels];
  unsigned long long leavesByOccupancy[kOccupancyBins];
  unsigned long long overfullParticles;
  unsigned long long interactionsLog2[kInteractionBins];
  unsigned long long interactions;
  unsigned long long targets;
  unsigned int minInteractionsInv;  ///< ~(fewest interactions), so that zero means "no target"
  unsigned int maxInteractions;
};

/// The last force evaluation as the statistics see it.
struct TreeStatisticsSource {
  const DeviceTree* tree = nullptr;     ///< its levelBegin, count, childCount and level
  const DeviceParticles* p = nullptr;   ///< its bins (which particles were targets) and n
  const std::uint32_t* work = nullptr;  ///< device, per particle (key order); null: no walk
  ActiveRule rule;                      ///< the targets of the evaluation
  int leafSize = 0;                     ///< N_leaf of the build
  std::uint64_t groups = 0;             ///< groups walked (host copy)
};

/// Counts on `stream`, then copies the record back (blocking); `d_sums` is the caller's scratch,
/// kept so that the call allocates nothing once sized. All zero when there is no tree.
TreeStatistics computeTreeStatistics(const TreeStatisticsSource& src,
                                     DeviceBuffer<TreeStatisticsSums>& d_sums, Stream stream);

}  // namespace bhviz::sim::cuda
