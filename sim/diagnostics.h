#pragma once
// Conserved quantities and the time-bin census, computed on the host in double precision.

#include <array>
#include <cstdint>
#include <vector>

#include "sim/clock.h"
#include "sim/particles.h"

namespace bhviz::sim {

struct Diagnostics {
  double time = 0.0;       ///< [time]
  double mass = 0.0;       ///< total mass [mass]
  double kinetic = 0.0;    ///< Σ ½ m v² [energy]
  double potential = 0.0;  ///< ½ Σ m φ [energy]
  double total() const { return kinetic + potential; }
  std::array<double, 3> momentum{};         ///< Σ m v
  std::array<double, 3> angularMomentum{};  ///< Σ m x × v
  std::vector<std::uint64_t> binHistogram;  ///< particles per time bin, 0..depth
};

/// Uses each particle's stored potential and, for particles in the middle of their step, the
/// velocity predicted to the clock's time from the half-kicked one: v(t) = v_½ + a·(t − t_start −
/// dt/2) (sim/common/conserved.h). The potentials are current where every particle's step ends
/// (the backends compute them there only: evaluatesPotential, sim/backend.h; with the potentials
/// on demand only where asked, and Simulation::diagnostics says NaN elsewhere); in the middle of
/// a block step each is the one of its last such evaluation, so the potential energy there is
/// that of the last synchronised time.
Diagnostics computeDiagnostics(const Particles& p, const Clock& clock);

struct ConservedSums;
/// The Diagnostics of summed terms and a bin histogram (for backends that sum elsewhere).
Diagnostics diagnosticsFromSums(const ConservedSums& s, std::vector<std::uint64_t> histogram,
                                const Clock& clock);

}  // namespace bhviz::sim
