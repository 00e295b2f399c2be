#include <cmath>
#include <stdexcept>

#include "sim/common/gravity.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/cpu/target_block.h"

namespace bhviz::sim::cpu {

CellTest testCell(const Tree& t, std::uint32_t c, const Box& groupBox, float accMin,
                  const MacSetup& mac) {
  CellTest r;
  r.d2 = distSqPointBox(xyz(t.comMass[c]), groupBox);
  r.overlap = overlaps(t.box[c], groupBox);
  r.open = mustOpen(mac.code, t.opening[c], r.d2, accMin, r.overlap);
  return r;
}

std::size_t countExpanded(const Tree& t, const std::vector<std::uint32_t>& cells,
                          const ExpansionCentre& e) {
  std::size_t n = 0;
  for (std::uint32_t c : cells) n += expands(e, t.comMass[c]) ? 1 : 0;
  return n;
}

InteractionList buildInteractionList(const Tree& t, const Box& groupBox, float accMin,
                                     const MacSetup& mac) {
  InteractionList list;
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t c = stack.back();
    stack.pop_back();
    switch (classifyCell(t, c, groupBox, accMin, mac)) {
      case CellVerdict::Accepted:
        list.cells.push_back(c);
        break;
      case CellVerdict::Leaf:
        list.leaves.push_back(c);
        break;
      case CellVerdict::Opened:
        list.opened.push_back(c);
        for (std::uint32_t k = t.child[c] + t.childCount[c]; k-- > t.child[c];) stack.push_back(k);
        break;
    }
  }
  return list;
}

InteractionCounts walkGroups(const Tree& t, const Groups& groups, const std::vector<Vec4>& posMass,
                             const std::vector<std::uint8_t>& active, const WalkSettings& s,
                             std::vector<Vec4>& accPot) {
  if (s.p2p == P2pMode::Mutual) {
    return walkGroupsMutual(t, groups, posMass, active, s, accPot, nullptr);
  }
  return walkSources(t, posMass, groups, posMass, active, s, WalkMode::Write, accPot, nullptr);
}

InteractionCounts walkSources(const Tree& t, const std::vector<Vec4>& sources, const Groups& groups,
                              const std::vector<Vec4>& posMass,
                              const std::vector<std::uint8_t>& active, const WalkSettings& s,
                              WalkMode mode, std::vector<Vec4>& accPot,
                              std::vector<std::uint32_t>* work) {
  if (mode == WalkMode::Potential && !s.potential) {
    throw std::invalid_argument("walkSources: the potential alone needs it computed");
  }
  const float eps2 = s.softening * s.softening;
  std::uint64_t cellCount = 0, particleCount = 0, targets = 0, expandedCount = 0;
  if (t.cellCount() == 0) return {};
#pragma omp parallel reduction(+ : cellCount, particleCount, targets, expandedCount)
  {
    TargetBlock block;  // per thread, reused across groups
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t gi = 0; gi < static_cast<std::int64_t>(groups.size()); ++gi) {
      const auto g = static_cast<std::size_t>(gi);
      const InteractionList list = buildInteractionList(t, groups.box[g], groups.accMin[g], s.mac);
      block.load(groups, g, posMass, active, s.potential, s.expansion);
      const std::size_t expanded = block.addCells(t, list.cells, s.quadrupole, eps2);
      std::uint64_t leafParticles = 0;
      for (std::uint32_t leaf : list.leaves) {
        leafParticles += t.count[leaf];
        for (std::uint32_t j = t.first[leaf]; j < t.first[leaf] + t.count[leaf]; ++j) {
          block.addParticle(sources[j], eps2);
        }
      }
      block.store(accPot, mode);
      // Each group's targets are its own: no two threads write one particle's work.
      if (work != nullptr) block.addWork(*work, list.cells.size() + leafParticles);
      cellCount += list.cells.size() * block.size();
      particleCount += leafParticles * block.size();
      expandedCount += expanded * block.size();
      targets += block.size();
    }
  }
  return {cellCount, particleCount, targets, 0, expandedCount};
}

}  // namespace bhviz::sim::cpu
