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

namespace {

Box unite(const Box& a, const Box& b) {
  return {{fminf(a.lo.x, b.lo.x), fminf(a.lo.y, b.lo.y), fminf(a.lo.z, b.lo.z)},
          {fmaxf(a.hi.x, b.hi.x), fmaxf(a.hi.y, b.hi.y), fmaxf(a.hi.z, b.hi.z)}};
}

/// Whether `box` overlaps the tight box of a child of c holding more than limit particles.
bool overlapsLargeChild(const Tree& t, std::uint32_t c, std::uint32_t limit, const Box& box) {
  for (std::uint32_t j = t.child[c]; j < t.child[c] + t.childCount[c]; ++j) {
    if (t.count[j] > limit && overlaps(box, t.box[j])) return true;
  }
  return false;
}

/// Emits the groups of the subtree under cell c in key order (see buildGroups).
void groupsUnder(const Tree& t, std::uint32_t c, std::uint32_t limit, const std::vector<Vec4>& posMass,
                 const std::vector<Vec4>& accPot, const std::vector<std::uint8_t>& active, Groups& g) {
  if (t.isLeaf(c)) {  // a leaf holding more than limit: runs of limit
    for (std::uint32_t f = t.first[c]; f < t.first[c] + t.count[c]; f += limit) {
      addGroup(g, f, std::min(limit, t.first[c] + t.count[c] - f), posMass, accPot, active);
    }
    return;
  }
  // Consecutive small children merge greedily while the run stays ≤ limit and its box (the
  // union of their tight boxes) overlaps no sibling holding more than limit (a group
  // overlapping a large cell would open it down to its leaves); a large child ends the run and
  // is split further. Children are contiguous in key order, so every run is too.
  std::uint32_t runFirst = 0, runCount = 0;
  Box runBox;
  for (std::uint32_t k = t.child[c]; k < t.child[c] + t.childCount[c]; ++k) {
    const std::uint32_t m = t.count[k];
    if (m <= limit && runCount > 0 && runCount + m <= limit) {
      const Box u = unite(runBox, t.box[k]);
      if (!overlapsLargeChild(t, c, limit, u)) {
        runCount += m;
        runBox = u;
        continue;
      }
    }
    if (runCount > 0) addGroup(g, runFirst, runCount, posMass, accPot, active);
    runCount = 0;
    if (m <= limit) {
      runFirst = t.first[k];
      runCount = m;
      runBox = t.box[k];
    } else {
      groupsUnder(t, k, limit, posMass, accPot, active, g);
    }
  }
  if (runCount > 0) addGroup(g, runFirst, runCount, posMass, accPot, active);
}

}  // namespace

Groups buildGroups(const Tree& t, const std::vector<Vec4>& posMass, const std::vector<Vec4>& accPot,
                   const std::vector<std::uint8_t>& active, int nGroup) {
  Groups g;
  if (t.cellCount() == 0) return g;
  const auto limit = static_cast<std::uint32_t>(nGroup);
  // Depth first with children in order, so the groups come out in key order (depth ≤ 22).
  if (t.count[0] <= limit) {
    addGroup(g, t.first[0], t.count[0], posMass, accPot, active);
  } else {
    groupsUnder(t, 0, limit, posMass, accPot, active, g);
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
