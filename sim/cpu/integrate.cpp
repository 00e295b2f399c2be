// The predict and integrate stages: time bins, kicks and the drift (sim/common/timestep.h).
#include <cmath>

#include "sim/common/timestep.h"
#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

int openKicks(Particles& s, const Clock& clock, const SimParams& p) {
  int deepest = 0;
#pragma omp parallel for reduction(max : deepest)
  for (std::size_t i = 0; i < s.size(); ++i) {
    // Bins from a deeper clock (before a change of maxBinDepth) are clamped to this one's.
    int bin = s.bin[i] < clock.depth ? s.bin[i] : clock.depth;
    if (isActive(bin, clock.tick, clock.depth)) {
      const int wanted = wantedBin(accMagnitude(s.accPot[i]), p.softening, p.eta,
                                   static_cast<float>(clock.dtMax), clock.depth);
      bin = nextBin(wanted, clock.tick, clock.depth);
      s.bin[i] = static_cast<std::uint8_t>(bin);
      kick(s.vel[i], s.accPot[i], 0.5f * clock.binDt(bin));
    }
    deepest = bin > deepest ? bin : deepest;
  }
  return deepest;
}

void drift(Particles& s, float dt) {
#pragma omp parallel for
  for (std::size_t i = 0; i < s.size(); ++i) sim::drift(s.posMass[i], s.vel[i], dt);
}

void closeKicks(Particles& s, const Clock& clock) {
#pragma omp parallel for
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int bin = s.bin[i];
    if (isActive(bin, clock.tick, clock.depth))
      kick(s.vel[i], s.accPot[i], 0.5f * clock.binDt(bin));
  }
}

}  // namespace bhviz::sim::cpu
