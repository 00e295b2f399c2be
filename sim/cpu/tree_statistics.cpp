// The CPU backend's tree statistics: one pass over the cells of its tree and one over the
// particles' work of the last evaluation (sim/tree_statistics.h's bins, as the CUDA twin's
// kernels use them).
#include "sim/tree_statistics.h"

#include <algorithm>

#include "sim/cpu/cpu_backend.h"

namespace bhviz::sim {

TreeStatistics CpuBackend::treeStatistics() const {
  TreeStatistics s;
  const Tree& t = m_tree;
  if (t.cellCount() == 0) return s;
  s.particles = m_particles.size();
  s.cells = t.cellCount();
  s.groups = m_groups.size();
  s.levels = t.depth();
  s.leafSize = m_leafSize;
  for (int l = 0; l < s.levels; ++l) s.cellsPerLevel[l] = t.levelBegin[l + 1] - t.levelBegin[l];
  for (std::size_t c = 0; c < t.cellCount(); ++c) {
    if (!t.isLeaf(static_cast<std::uint32_t>(c))) continue;
    ++s.leaves;
    ++s.leavesPerLevel[t.level[c]];
    const int bin = occupancyBin(t.count[c], m_leafSize);
    ++s.leavesByOccupancy[bin];
    if (bin > m_leafSize) s.overfullParticles += t.count[c];
  }
  for (std::size_t i = 0; i < m_work.size() && i < m_active.size(); ++i) {
    if (!m_active[i]) continue;
    const std::uint32_t w = m_work[i];
    s.minInteractions = s.targets == 0 ? w : std::min(s.minInteractions, w);
    s.maxInteractions = std::max(s.maxInteractions, w);
    ++s.targets;
    ++s.interactionsLog2[interactionBin(w)];
    s.interactions += w;
  }
  return s;
}

}  // namespace bhviz::sim
