#include "sim/diagnostics.h"

#include <algorithm>

namespace bhviz::sim {

Diagnostics computeDiagnostics(const Particles& p, const Clock& clock) {
  Diagnostics d;
  d.time = clock.time();
  d.binHistogram.assign(static_cast<std::size_t>(clock.depth) + 1, 0);
  const double tickDt = clock.tickDt();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int bin = std::min<int>(p.bin[i], clock.depth);
    ++d.binHistogram[static_cast<std::size_t>(bin)];
    const Vec4 x = p.posMass[i], a = p.accPot[i];
    double vx = p.vel[i].x, vy = p.vel[i].y, vz = p.vel[i].z;
    if (!isActive(bin, clock.tick, clock.depth)) {
      // Mid-step: v holds v(t_start) + a·dt/2; predict it to the clock's time.
      const std::uint64_t period = binPeriod(bin, clock.depth);
      const double sinceStart = static_cast<double>(clock.tick % period) * tickDt;
      const double shift = sinceStart - 0.5 * static_cast<double>(period) * tickDt;
      vx += a.x * shift;
      vy += a.y * shift;
      vz += a.z * shift;
    }
    const double m = x.w;
    d.mass += m;
    d.kinetic += 0.5 * m * (vx * vx + vy * vy + vz * vz);
    d.potential += 0.5 * m * a.w;
    d.momentum[0] += m * vx;
    d.momentum[1] += m * vy;
    d.momentum[2] += m * vz;
    d.angularMomentum[0] += m * (x.y * vz - x.z * vy);
    d.angularMomentum[1] += m * (x.z * vx - x.x * vz);
    d.angularMomentum[2] += m * (x.x * vy - x.y * vx);
  }
  return d;
}

}  // namespace bhviz::sim
