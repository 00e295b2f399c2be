#pragma once
// The CPU walk's targets of one group (walk.cpp, walk_mutual.cpp): internal to sim/cpu.
#include <cstdint>
#include <vector>

#include "sim/common/gravity.h"
#include "sim/common/local_expansion.h"
#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

/// The active targets of one group in separate arrays. Each source is applied to every target
/// in turn (the CPU's counterpart of the GPU's lanes): the loops over targets vectorise, and each
/// target still sums its sources in list order, so the result does not depend on the width.
/// Cells far enough from the group (expansionCentre's rules) go into one expansion about its
/// centre instead, which store() evaluates at each target.
class TargetBlock {
 public:
  /// The group's active particles; `potential`: their potentials are summed too
  /// (WalkSettings::potential; else nothing computes them and store() leaves each one's own).
  /// `expansion`: which cells addCells expands (expansionCentre).
  void load(const Groups& g, std::size_t group, const std::vector<Vec4>& posMass,
            const std::vector<std::uint8_t>& active, bool potential,
            const ExpansionRule& expansion) {
    m_potential = potential;
    m_far = LocalExpansion{};
    m_expanded = 0;
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
    m_centre = expansionCentre(g.box[group], g.expansionTargets(group, static_cast<unsigned>(n)),
                               expansion, g.accMin[group]);
  }

  template <bool kQuadrupole>
  void addCell(const Vec4& comMass, const Quadrupole& q, float eps2) {
    if constexpr (kQuadrupole) {
      const QuadSource source = quadSource(q, eps2);  // once per cell, not per target
      if (m_potential) {
        apply([&](Vec3 xi, Vec4& a) { m2pQuadrupole<true>(xi, comMass, source, eps2, a); });
      } else {
        apply([&](Vec3 xi, Vec4& a) { m2pQuadrupole<false>(xi, comMass, source, eps2, a); });
      }
    } else if (m_potential) {
      apply([&](Vec3 xi, Vec4& a) { m2pMonopole<true>(xi, comMass, eps2, a); });
    } else {
      apply([&](Vec3 xi, Vec4& a) { m2pMonopole<false>(xi, comMass, eps2, a); });
    }
  }
  /// The multipoles of `cells` of tree t, in list order (the walk's M2P part): each applied to
  /// every target, or, if far enough, added to the group's expansion. Returns how many were.
  std::size_t addCells(const Tree& t, const std::vector<std::uint32_t>& cells, bool quadrupole,
                       float eps2) {
    const std::size_t before = m_expanded;
    for (std::uint32_t c : cells) {
      if (expands(m_centre, t.comMass[c])) {
        const QuadSource q = quadrupole ? quadSource(t.quad[c], eps2) : QuadSource{};
        if (m_potential) {
          m2l<true>(m_centre.centre, t.comMass[c], q, eps2, m_far);
        } else {
          m2l<false>(m_centre.centre, t.comMass[c], q, eps2, m_far);
        }
        ++m_expanded;
      } else if (quadrupole) {
        addCell<true>(t.comMass[c], t.quad[c], eps2);
      } else {
        addCell<false>(t.comMass[c], t.quad[c], eps2);
      }
    }
    return m_expanded - before;
  }
  void addParticle(const Vec4& source, float eps2) {
    if (m_potential) {
      apply([&](Vec3 xi, Vec4& a) { p2p<true>(xi, source, eps2, a); });
    } else {
      apply([&](Vec3 xi, Vec4& a) { p2p<false>(xi, source, eps2, a); });
    }
  }

  std::size_t size() const { return m_index.size(); }
  /// Writes (or adds) the sums, the expansion's field included, to accPot; without the
  /// potential each target keeps its own, with WalkMode::Potential its acceleration.
  void store(std::vector<Vec4>& accPot, WalkMode mode) const {
    for (std::size_t k = 0; k < m_index.size(); ++k) {
      Vec4 sum{m_ax[k], m_ay[k], m_az[k], m_pot[k]};
      if (m_expanded > 0) {
        const Vec3 y = Vec3{m_x[k], m_y[k], m_z[k]} - m_centre.centre;
        m_potential ? l2p<true>(m_far, y, sum) : l2p<false>(m_far, y, sum);
      }
      Vec4& out = accPot[m_index[k]];
      if (mode == WalkMode::Potential) {
        out.w = sum.w;
        continue;
      }
      const float w = !m_potential ? out.w : mode == WalkMode::Write ? sum.w : out.w + sum.w;
      out = mode == WalkMode::Write ? Vec4{sum.x, sum.y, sum.z, w}
                                    : Vec4{out.x + sum.x, out.y + sum.y, out.z + sum.z, w};
    }
  }
  /// Adds `work` to the work of each target.
  void addWork(std::vector<std::uint32_t>& work, std::uint64_t amount) const {
    for (std::uint32_t i : m_index) work[i] += static_cast<std::uint32_t>(amount);
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

  bool m_potential = true;
  ExpansionCentre m_centre;
  LocalExpansion m_far;  // the expanded cells' field about m_centre.centre
  std::size_t m_expanded = 0;
  std::vector<std::uint32_t> m_index;
  std::vector<float> m_x, m_y, m_z, m_ax, m_ay, m_az, m_pot;
};

}  // namespace bhviz::sim::cpu
