#pragma once
// One particle's share of the conserved quantities, written once for the host sum
// (computeDiagnostics) and the device reduction (the CUDA backend).

#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/timestep.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

/// Sums of the diagnostics, in double: the 9 values add component by component.
struct ConservedSums {
  double mass = 0.0, kinetic = 0.0, potential = 0.0;
  double px = 0.0, py = 0.0, pz = 0.0;
  double lx = 0.0, ly = 0.0, lz = 0.0;
};

BHVIZ_HD inline void add(ConservedSums& s, const ConservedSums& o) {
  s.mass += o.mass, s.kinetic += o.kinetic, s.potential += o.potential;
  s.px += o.px, s.py += o.py, s.pz += o.pz;
  s.lx += o.lx, s.ly += o.ly, s.lz += o.lz;
}

/// The particle's terms at the clock's time. A particle in the middle of its step holds
/// v(t_start) + a·dt/2; its velocity is predicted to the clock's time: v_½ + a·(t − t_start −
/// dt/2).
BHVIZ_HD inline ConservedSums conservedTerms(const Vec4& x, const Vec4& vel, const Vec4& a, int bin,
                                             std::uint64_t tick, int depth, double tickDt) {
  double vx = vel.x, vy = vel.y, vz = vel.z;
  if (!isActive(bin, tick, depth)) {
    const std::uint64_t period = binPeriod(bin, depth);
    const double sinceStart = static_cast<double>(tick % period) * tickDt;
    const double shift = sinceStart - 0.5 * static_cast<double>(period) * tickDt;
    vx += a.x * shift;
    vy += a.y * shift;
    vz += a.z * shift;
  }
  const double m = x.w;
  ConservedSums s;
  s.mass = m;
  s.kinetic = 0.5 * m * (vx * vx + vy * vy + vz * vz);
  s.potential = 0.5 * m * a.w;
  s.px = m * vx, s.py = m * vy, s.pz = m * vz;
  s.lx = m * (x.y * vz - x.z * vy);
  s.ly = m * (x.z * vx - x.x * vz);
  s.lz = m * (x.x * vy - x.y * vx);
  return s;
}

}  // namespace bhviz::sim
