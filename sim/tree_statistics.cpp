#include "sim/tree_statistics.h"

#include <algorithm>

namespace bhviz::sim {

TreeStatistics& TreeStatistics::operator+=(const TreeStatistics& o) {
  if (o.targets > 0) {
    minInteractions =
        targets > 0 ? std::min(minInteractions, o.minInteractions) : o.minInteractions;
    maxInteractions = std::max(maxInteractions, o.maxInteractions);
  }
  particles += o.particles;
  cells += o.cells;
  leaves += o.leaves;
  groups += o.groups;
  levels = std::max(levels, o.levels);
  leafSize = std::max(leafSize, o.leafSize);
  for (int l = 0; l < kTreeLevels; ++l) {
    cellsPerLevel[l] += o.cellsPerLevel[l];
    leavesPerLevel[l] += o.leavesPerLevel[l];
  }
  for (int k = 0; k < kOccupancyBins; ++k) leavesByOccupancy[k] += o.leavesByOccupancy[k];
  overfullParticles += o.overfullParticles;
  targets += o.targets;
  for (int b = 0; b < kInteractionBins; ++b) interactionsLog2[b] += o.interactionsLog2[b];
  interactions += o.interactions;
  return *this;
}

}  // namespace bhviz::sim
