#include <algorithm>
#include <cmath>

#include "sim/common/group_runs.h"
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
    accMin = fminf(accMin, accMagnitude(accPot[i]));
  }
  if (!any) return;
  g.first.push_back(first);
  g.count.push_back(count);
  g.box.push_back(box);
  g.accMin.push_back(accMin);
}

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
void groupsUnder(const Tree& t, std::uint32_t c, std::uint32_t limit,
                 const std::vector<Vec4>& posMass, const std::vector<Vec4>& accPot,
                 const std::vector<std::uint8_t>& active, Groups& g) {
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

void cutIntoRuns(Groups& g, const std::vector<Vec4>& posMass,
                 const std::vector<std::uint8_t>& active) {
  const std::uint32_t perGroup = runsPerGroup(static_cast<std::uint32_t>(g.size()));
  if (perGroup <= 1) return;
  Groups runs;
  std::vector<std::uint32_t> targets;  // one group's active particles, in key order
  for (std::size_t k = 0; k < g.size(); ++k) {
    const std::uint32_t first = g.first[k], end = first + g.count[k];
    targets.clear();
    for (std::uint32_t i = first; i < end; ++i) {
      if (active[i]) targets.push_back(i);
    }
    const auto m = static_cast<std::uint32_t>(targets.size());
    const std::uint32_t q = runsOf(m, perGroup);
    for (std::uint32_t r = 0; r < q; ++r) {
      const std::uint32_t lo = runBegin(r, m, q), hi = runBegin(r + 1, m, q);
      const RunParticles span = runParticles(r, q, m, first, end, targets.data());
      Box box;
      for (std::uint32_t t = lo; t < hi; ++t) grow(box, xyz(posMass[targets[t]]));
      runs.first.push_back(span.first);
      runs.count.push_back(span.end - span.first);
      runs.box.push_back(box);
      runs.accMin.push_back(g.accMin[k]);
      runs.expandAs.push_back(g.expansionTargets(k, m));
    }
  }
  g = std::move(runs);
}

std::int64_t groupContaining(const Groups& groups, std::uint32_t index) {
  // Groups are in key order: the last one starting at or before the particle may hold it.
  const auto g = std::upper_bound(groups.first.begin(), groups.first.end(), index);
  if (g == groups.first.begin()) return -1;
  const auto k = static_cast<std::size_t>(g - groups.first.begin()) - 1;
  return index < groups.first[k] + groups.count[k] ? static_cast<std::int64_t>(k) : -1;
}

}  // namespace bhviz::sim::cpu
