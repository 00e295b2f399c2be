#include "sim/diagnostics.h"

#include <algorithm>

#include "sim/common/conserved.h"

namespace bhviz::sim {

Diagnostics diagnosticsFromSums(const ConservedSums& s, std::vector<std::uint64_t> histogram,
                                const Clock& clock) {
  Diagnostics d;
  d.time = clock.time();
  d.mass = s.mass;
  d.kinetic = s.kinetic;
  d.potential = s.potential;
  d.momentum = {s.px, s.py, s.pz};
  d.angularMomentum = {s.lx, s.ly, s.lz};
  d.binHistogram = std::move(histogram);
  return d;
}

Diagnostics computeDiagnostics(const Particles& p, const Clock& clock) {
  std::vector<std::uint64_t> histogram(static_cast<std::size_t>(clock.depth) + 1, 0);
  ConservedSums sums;
  const double tickDt = clock.tickDt();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int bin = std::min<int>(p.bin[i], clock.depth);
    ++histogram[static_cast<std::size_t>(bin)];
    add(sums,
        conservedTerms(p.posMass[i], p.vel[i], p.accPot[i], bin, clock.tick, clock.depth, tickDt));
  }
  return diagnosticsFromSums(sums, std::move(histogram), clock);
}

}  // namespace bhviz::sim
