// NFW sphere (Navarro, Frenk & White 1997) with its cusp, tapered outside r_c, and isotropic
// velocities from its own distribution function (Eddington's formula, sim/ic/eddington.h).

#include <cmath>

#include "sim/ic/eddington.h"
#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

namespace {

/// The tables start this far inside r_s; a particle drawn inside (probability ~1e-9 at c = 10)
/// follows the cusp's M ∝ r² and the innermost node's velocities.
constexpr double kTableInner = 1e-4;

}  // namespace

Particles makeNfw(std::size_t n, std::uint64_t seed, double mass, double scale, double cutoff,
                  double taper) {
  if (n == 0) throw InvalidParameter("makeNfw: n must be at least 1");
  detail::requirePositive(mass, "makeNfw: mass");
  detail::requirePositive(scale, "makeNfw: scale");
  detail::requirePositive(cutoff, "makeNfw: cutoff");
  detail::requirePositive(taper, "makeNfw: taper");

  const detail::NfwShape shape{scale, cutoff * scale, taper * scale};
  const detail::NfwTable table(shape, mass, kTableInner * scale);
  const detail::EddingtonDf df([&](double r) { return table.densitySlope(r); },
                               [&](double r) { return table.enclosed(r); }, table.innerRadius(),
                               table.outerRadius());
  return detail::isotropicSphere(
      n, seed, mass, [&](Rng& rng) { return table.radius(detail::openUniform(rng)); },
      [&](Rng& rng, double r) { return df.speed(rng, r); });
}

}  // namespace bhviz::sim
