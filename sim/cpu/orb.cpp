// The ORB's CPU twin (sim/orb.h): one rank's particles weighed and split on the host.

#include "sim/orb.h"

#include <stdexcept>
#include <utility>

namespace bhviz::sim {

namespace {

float component(const Vec4& p, int axis) { return axis == 0 ? p.x : axis == 1 ? p.y : p.z; }

}  // namespace

HostOrbParticles::HostOrbParticles(const std::vector<Vec4>& posMass,
                                   std::vector<std::uint64_t> weight)
    : m_posMass(posMass), m_weight(std::move(weight)), m_domain(posMass.size(), 0) {
  if (m_weight.size() != m_posMass.size()) {
    throw std::invalid_argument("ORB: one weight per particle is needed");
  }
}

void HostOrbParticles::weighBelow(const std::vector<OrbCut>& cuts,
                                  std::vector<std::uint64_t>& below) const {
  std::vector<std::uint64_t> sums(cuts.size(), 0);
  const std::size_t n = m_posMass.size();
  const int domains = static_cast<int>(cuts.size());
#pragma omp parallel
  {
    std::vector<std::uint64_t> mine(cuts.size(), 0);
#pragma omp for nowait
    for (std::size_t i = 0; i < n; ++i) {
      const int d = m_domain[i];
      if (d < domains && cuts[d].axis >= 0 &&
          component(m_posMass[i], cuts[d].axis) < cuts[d].position) {
        mine[d] += m_weight[i];
      }
    }
#pragma omp critical
    for (std::size_t d = 0; d < mine.size(); ++d) sums[d] += mine[d];
  }
  for (std::size_t d = 0; d < cuts.size(); ++d) {
    if (cuts[d].axis >= 0) below[d] = sums[d];
  }
}

void HostOrbParticles::histogram(const std::vector<OrbGrid>& grids,
                                 std::vector<std::uint64_t>& hist) const {
  const std::size_t n = m_posMass.size();
  const int domains = static_cast<int>(grids.size());
#pragma omp parallel
  {
    std::vector<std::uint64_t> mine(hist.size(), 0);
#pragma omp for nowait
    for (std::size_t i = 0; i < n; ++i) {
      const int d = m_domain[i];
      if (d >= domains || grids[d].axis < 0) continue;
      const OrbGrid& g = grids[d];
      mine[static_cast<std::size_t>(g.offset + orbBin(component(m_posMass[i], g.axis), g) + 1)] +=
          m_weight[i];
    }
#pragma omp critical
    for (std::size_t k = 0; k < mine.size(); ++k) hist[k] += mine[k];
  }
}

void HostOrbParticles::leavers(int rank, std::vector<std::uint32_t>& index,
                               std::vector<int>& domain) const {
  index.clear();
  domain.clear();
  for (std::size_t i = 0; i < m_domain.size(); ++i) {
    if (m_domain[i] == rank) continue;
    index.push_back(static_cast<std::uint32_t>(i));
    domain.push_back(m_domain[i]);
  }
}

void HostOrbParticles::split(const std::vector<OrbCut>& cuts) {
  const std::size_t n = m_posMass.size();
#pragma omp parallel for
  for (std::size_t i = 0; i < n; ++i) {
    const OrbCut& c = cuts[m_domain[i]];
    if (c.axis >= 0 && !(component(m_posMass[i], c.axis) < c.position)) m_domain[i] = c.high;
  }
}

}  // namespace bhviz::sim
