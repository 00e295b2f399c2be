// A uniform, (nearly) cold sphere: the classic cold-collapse test (e.g. Aarseth, Hénon & Wielen
// 1974; van Albada 1982). With no pressure it falls in on the free-fall time
// t_ff = (π/2) sqrt(R³/(2GM)) and bounces into a cored, radially anisotropic remnant.

#include <cmath>

#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

Particles makeColdCollapse(std::size_t n, std::uint64_t seed, double mass, double radius,
                           double virialRatio) {
  if (n == 0) throw InvalidParameter("makeColdCollapse: n must be at least 1");
  detail::requirePositive(mass, "makeColdCollapse: mass");
  detail::requirePositive(radius, "makeColdCollapse: radius");
  if (!(virialRatio >= 0.0) || !std::isfinite(virialRatio)) {
    throw InvalidParameter("makeColdCollapse: virial ratio must be finite and >= 0 (got " +
                           std::to_string(virialRatio) + ")");
  }
  // 2K/|W| = Q with K = (3/2) M σ² and |W| = 3GM²/(5R): σ² = Q GM/(5R) per dimension. The
  // speed of an isotropic Gaussian velocity is σ times the length of a standard normal vector.
  const double sigma = std::sqrt(virialRatio * mass / (5.0 * radius));
  return detail::isotropicSphere(
      n, seed, mass, [&](Rng& rng) { return radius * std::cbrt(rng.uniform()); },  // M(<r) ∝ r³
      [&](Rng& rng, double) {
        const detail::Vec3d g = detail::gaussianVector(rng);
        return sigma * std::sqrt(g.x * g.x + g.y * g.y + g.z * g.z);
      });
}

}  // namespace bhviz::sim
