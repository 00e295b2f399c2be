// What the CPU backend exports for drawing and measuring: the tree census, the cell and group
// boxes of the last force evaluation (sim/common/draw.h's math, as the CUDA backend's
// sim/cuda/draw.cu applies it), and its scratch twin.
#include "sim/common/draw.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/cpu/cpu_backend.h"

namespace bhviz::sim {

TreeCensus CpuBackend::treeCensus() const {
  return {m_tree.cellCount(), std::max(m_tree.depth(), 0), m_groups.size()};
}

std::size_t CpuBackend::boxCount(const BoxQuery& q) const {
  std::size_t n = 0;
  const LevelSpan span = levelSpan(q.minLevel, q.maxLevel, std::max(m_tree.depth(), 0));
  if (q.cells && span.first <= span.last) {
    n += m_tree.levelBegin[span.last + 1] - m_tree.levelBegin[span.first];
  }
  if (q.groups) n += m_groups.size();
  return n;
}

std::vector<DrawBox> CpuBackend::boxes(const BoxQuery& q) const {
  std::vector<DrawBox> out;
  out.reserve(boxCount(q));
  const LevelSpan span = levelSpan(q.minLevel, q.maxLevel, std::max(m_tree.depth(), 0));
  if (q.cells && span.first <= span.last) {
    for (std::uint32_t c = m_tree.levelBegin[span.first]; c < m_tree.levelBegin[span.last + 1];
         ++c) {
      const Vec4& x = m_particles.posMass[m_tree.first[c]];
      const int level = m_tree.level[c];
      out.push_back(cellDrawBox({x.x, x.y, x.z}, level, m_tree.frame, q.cellColour[level]));
    }
  }
  if (q.groups) {
    for (std::size_t g = 0; g < m_groups.size(); ++g) {
      out.push_back(groupDrawBox(m_groups.box[g], q.groupColour));
    }
  }
  return out;
}

std::unique_ptr<Backend> CpuBackend::makeScratch(std::size_t /*n*/) const {
  return std::make_unique<CpuBackend>();
}

}  // namespace bhviz::sim
