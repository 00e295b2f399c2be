#include <algorithm>
#include <cmath>

#include "sim/common/gravity.h"
#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

namespace {

void addGroup(Groups& g, std::uint32_t first, std::uint32_t count, const std::vector<Vec4>& posMass,
              const std::vector<Vec4>& accPot, const std::vector<std::uint8_t>& active) {
  Box box;
  float accMin = INFINITY;
  bool any = false;
  for (std::uint32_t i = first; i < first + count; ++i) {
    if (!active[i]) continue;
    any = true;
    grow(box, xyz(posMass[i]));
    const Vec4 a = accPot[i];
    accMin = fminf(accMin, sqrtf(a.x * a.x + a.y * a.y + a.z * a.z));
  }
  if (!any) return;
  g.first.push_back(first);
  g.count.push_back(count);
  g.box.push_back(box);
  g.accMin.push_back(accMin);
}

}  // namespace

Groups buildGroups(const Tree& t, const std::vector<Vec4>& posMass, const std::vector<Vec4>& accPot,
                   const std::vector<std::uint8_t>& active, int nGroup) {
  Groups g;
  const auto limit = static_cast<std::uint32_t>(nGroup);
  // Depth first with children in order, so the groups come out in key order: the first cell on
  // each path that holds ≤ nGroup particles is a group; a leaf holding more is cut in runs.
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t c = stack.back();
    stack.pop_back();
    if (t.count[c] <= limit) {
      addGroup(g, t.first[c], t.count[c], posMass, accPot, active);
    } else if (t.isLeaf(c)) {
      for (std::uint32_t f = t.first[c]; f < t.first[c] + t.count[c]; f += limit) {
        addGroup(g, f, std::min(limit, t.first[c] + t.count[c] - f), posMass, accPot, active);
      }
    } else {
      for (std::uint32_t k = t.child[c] + t.childCount[c]; k-- > t.child[c];) stack.push_back(k);
    }
  }
  return g;
}

InteractionList buildInteractionList(const Tree& t, const Box& groupBox, float accMin,
                                     const MacSetup& mac) {
  InteractionList list;
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t c = stack.back();
    stack.pop_back();
    const float d2 = distSqPointBox(xyz(t.comMass[c]), groupBox);
    const bool overlap = overlaps(t.box[c], groupBox);
    if (!mustOpen(mac.code, t.opening[c], d2, accMin, overlap)) {
      list.cells.push_back(c);
    } else if (t.isLeaf(c)) {
      list.leaves.push_back(c);
    } else {
      list.opened.push_back(c);
      for (std::uint32_t k = t.child[c] + t.childCount[c]; k-- > t.child[c];) stack.push_back(k);
    }
  }
  return list;
}

InteractionCounts walkGroups(const Tree& t, const Groups& groups, const std::vector<Vec4>& posMass,
                             const std::vector<std::uint8_t>& active, const WalkSettings& s,
                             std::vector<Vec4>& accPot) {
  const float eps2 = s.softening * s.softening;
  std::uint64_t cellCount = 0, particleCount = 0, targets = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : cellCount, particleCount, targets)
  for (std::int64_t gi = 0; gi < static_cast<std::int64_t>(groups.size()); ++gi) {
    const auto g = static_cast<std::size_t>(gi);
    const InteractionList list = buildInteractionList(t, groups.box[g], groups.accMin[g], s.mac);
    std::uint64_t leafParticles = 0;
    for (std::uint32_t leaf : list.leaves) leafParticles += t.count[leaf];
    for (std::uint32_t i = groups.first[g]; i < groups.first[g] + groups.count[g]; ++i) {
      if (!active[i]) continue;
      const Vec3 xi = xyz(posMass[i]);
      Vec4 acc{};
      for (std::uint32_t c : list.cells) m2p(xi, t.comMass[c], t.quad[c], s.quadrupole, eps2, acc);
      for (std::uint32_t leaf : list.leaves) {
        for (std::uint32_t j = t.first[leaf]; j < t.first[leaf] + t.count[leaf]; ++j) {
          p2p(xi, posMass[j], eps2, acc);
        }
      }
      accPot[i] = acc;
      cellCount += list.cells.size();
      particleCount += leafParticles;
      ++targets;
    }
  }
  return {cellCount, particleCount, targets};
}

}  // namespace bhviz::sim::cpu
