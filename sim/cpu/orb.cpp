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
  if (!m_weight.empty() && m_weight.size() != m_posMass.size()) {
    throw std::invalid_argument("ORB: one weight per particle, or none, is needed");
  }
}

namespace {

/// Adds each particle's weight (1 where there are none) to entry entry(i) of `sums` (none where
/// it is negative): per thread, then merged, so the integer sums are those of any order.
template <typename Entry>
void sumWeights(std::size_t n, const std::vector<std::uint64_t>& weight, Entry&& entry,
                std::vector<std::uint64_t>& sums) {
#pragma omp parallel
  {
    std::vector<std::uint64_t> mine(sums.size(), 0);
#pragma omp for nowait
    for (std::size_t i = 0; i < n; ++i) {
      const long long k = entry(i);
      if (k >= 0) mine[static_cast<std::size_t>(k)] += weight.empty() ? 1u : weight[i];
    }
#pragma omp critical
    for (std::size_t k = 0; k < mine.size(); ++k) sums[k] += mine[k];
  }
}

}  // namespace

void HostOrbParticles::weighBelow(const std::vector<OrbCut>& cuts,
                                  std::vector<std::uint64_t>& below) const {
  std::vector<std::uint64_t> sums(cuts.size(), 0);
  const int domains = static_cast<int>(cuts.size());
  sumWeights(
      m_posMass.size(), m_weight,
      [&](std::size_t i) -> long long {
        const int d = m_domain[i];
        if (d >= domains || cuts[d].axis < 0) return -1;
        return !orbHigh(cuts[d], xyz(m_posMass[i])) ? d : -1;
      },
      sums);
  for (std::size_t d = 0; d < cuts.size(); ++d) {
    if (cuts[d].axis >= 0) below[d] = sums[d];
  }
}

void HostOrbParticles::histogram(const std::vector<OrbGrid>& grids,
                                 std::vector<std::uint64_t>& hist) const {
  const int domains = static_cast<int>(grids.size());
  sumWeights(
      m_posMass.size(), m_weight,
      [&](std::size_t i) -> long long {
        const int d = m_domain[i];
        if (d >= domains || grids[d].axis < 0) return -1;
        const OrbGrid& g = grids[d];
        return g.offset + orbBin(component(m_posMass[i], g.axis), g) + 1;
      },
      hist);
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
    if (c.axis >= 0 && orbHigh(c, xyz(m_posMass[i]))) m_domain[i] = c.high;
  }
}

}  // namespace bhviz::sim
