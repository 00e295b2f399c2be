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

CellTest testCell(const Tree& t, std::uint32_t c, const Box& groupBox, float accMin,
                  const MacSetup& mac) {
  CellTest r;
  r.d2 = distSqPointBox(xyz(t.comMass[c]), groupBox);
  r.overlap = overlaps(t.box[c], groupBox);
  r.open = mustOpen(mac.code, t.opening[c], r.d2, accMin, r.overlap);
  return r;
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

std::int64_t groupContaining(const Groups& groups, std::uint32_t index) {
  // Groups are in key order: the last one starting at or before the particle may hold it.
  const auto g = std::upper_bound(groups.first.begin(), groups.first.end(), index);
  if (g == groups.first.begin()) return -1;
  const auto k = static_cast<std::size_t>(g - groups.first.begin()) - 1;
  return index < groups.first[k] + groups.count[k] ? static_cast<std::int64_t>(k) : -1;
}

namespace {

/// The active targets of one group in separate arrays. Each source is applied to every target
/// in turn (the CPU's counterpart of the GPU's lanes): the loops over targets vectorise, and each
/// target still sums its sources in list order, so the result does not depend on the width.
class TargetBlock {
 public:
  void load(const Groups& g, std::size_t group, const std::vector<Vec4>& posMass,
            const std::vector<std::uint8_t>& active) {
    m_index.clear();
    for (std::uint32_t i = g.first[group]; i < g.first[group] + g.count[group]; ++i) {
      if (active[i]) m_index.push_back(i);
    }
    const std::size_t n = m_index.size();
    for (auto* v : {&m_x, &m_y, &m_z}) v->resize(n);
    for (auto* v : {&m_ax, &m_ay, &m_az, &m_pot}) v->assign(n, 0.0f);
    for (std::size_t k = 0; k < n; ++k) {
      const Vec4 p = posMass[m_index[k]];
      m_x[k] = p.x, m_y[k] = p.y, m_z[k] = p.z;
    }
  }

  template <bool kQuadrupole>
  void addCell(const Vec4& comMass, const Quadrupole& q, float eps2) {
    if constexpr (kQuadrupole) {
      const QuadSource source = quadSource(q, eps2);  // once per cell, not per target
      apply([&](Vec3 xi, Vec4& a) { m2pQuadrupole(xi, comMass, source, eps2, a); });
    } else {
      apply([&](Vec3 xi, Vec4& a) { m2pMonopole(xi, comMass, eps2, a); });
    }
  }
  void addParticle(const Vec4& source, float eps2) {
    apply([&](Vec3 xi, Vec4& a) { p2p(xi, source, eps2, a); });
  }

  std::size_t size() const { return m_index.size(); }
  void store(std::vector<Vec4>& accPot) const {
    for (std::size_t k = 0; k < m_index.size(); ++k) {
      accPot[m_index[k]] = {m_ax[k], m_ay[k], m_az[k], m_pot[k]};
    }
  }

 private:
  template <typename Interaction>
  void apply(Interaction&& interact) {
    const std::size_t n = m_index.size();
    const float *x = m_x.data(), *y = m_y.data(), *z = m_z.data();
    float *ax = m_ax.data(), *ay = m_ay.data(), *az = m_az.data(), *pot = m_pot.data();
#pragma omp simd
    for (std::size_t k = 0; k < n; ++k) {
      Vec4 a{ax[k], ay[k], az[k], pot[k]};
      interact(Vec3{x[k], y[k], z[k]}, a);
      ax[k] = a.x, ay[k] = a.y, az[k] = a.z, pot[k] = a.w;
    }
  }

  std::vector<std::uint32_t> m_index;
  std::vector<float> m_x, m_y, m_z, m_ax, m_ay, m_az, m_pot;
};

}  // namespace

InteractionCounts walkGroups(const Tree& t, const Groups& groups, const std::vector<Vec4>& posMass,
                             const std::vector<std::uint8_t>& active, const WalkSettings& s,
                             std::vector<Vec4>& accPot) {
  const float eps2 = s.softening * s.softening;
  std::uint64_t cellCount = 0, particleCount = 0, targets = 0;
#pragma omp parallel reduction(+ : cellCount, particleCount, targets)
  {
    TargetBlock block;  // per thread, reused across groups
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t gi = 0; gi < static_cast<std::int64_t>(groups.size()); ++gi) {
      const auto g = static_cast<std::size_t>(gi);
      const InteractionList list = buildInteractionList(t, groups.box[g], groups.accMin[g], s.mac);
      block.load(groups, g, posMass, active);
      for (std::uint32_t c : list.cells) {
        if (s.quadrupole) {
          block.addCell<true>(t.comMass[c], t.quad[c], eps2);
        } else {
          block.addCell<false>(t.comMass[c], t.quad[c], eps2);
        }
      }
      std::uint64_t leafParticles = 0;
      for (std::uint32_t leaf : list.leaves) {
        leafParticles += t.count[leaf];
        for (std::uint32_t j = t.first[leaf]; j < t.first[leaf] + t.count[leaf]; ++j) {
          block.addParticle(posMass[j], eps2);
        }
      }
      block.store(accPot);
      cellCount += list.cells.size() * block.size();
      particleCount += leafParticles * block.size();
      targets += block.size();
    }
  }
  return {cellCount, particleCount, targets};
}

}  // namespace bhviz::sim::cpu
