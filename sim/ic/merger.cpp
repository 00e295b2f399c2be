// Two disk galaxies on a Keplerian orbit of their total masses (parabolic by default).
//
// The secondary is the primary scaled in mass by q = massRatio and in every length by q^{1/3}:
// the same mean density, hence the same dynamical times, so one time step suits both, and
// velocities scale as q^{1/3}. Particles are split by mass share so that the particle masses
// of the two galaxies match.

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/ic/ic_detail.h"
#include "sim/ic/initial_conditions.h"

namespace bhviz::sim {

namespace {

void validateOrbit(const OrbitParams& o) {
  detail::requirePositive(o.pericentre, "merger pericentre");
  if (!(o.eccentricity >= 0.0) || !std::isfinite(o.eccentricity)) {
    throw InvalidParameter("merger eccentricity must be finite and >= 0 (got " +
                           std::to_string(o.eccentricity) + ")");
  }
  if (!(o.separation >= o.pericentre) || !std::isfinite(o.separation)) {
    throw InvalidParameter("merger separation must be finite and >= the pericentre");
  }
  if (o.eccentricity < 1.0) {
    const double apocentre = o.pericentre * (1.0 + o.eccentricity) / (1.0 - o.eccentricity);
    if (o.separation > apocentre * (1.0 + 1e-9)) {
      throw InvalidParameter("merger separation " + std::to_string(o.separation) +
                             " is beyond the apocentre " + std::to_string(apocentre) +
                             " of a bound orbit with this eccentricity");
    }
  }
}

void validateMember(const PairMember& g, const char* which) {
  if (!std::isfinite(g.inclination) || !std::isfinite(g.node)) {
    throw InvalidParameter(std::string("merger ") + which + " inclination and node must be finite");
  }
  if (g.spin != 1 && g.spin != -1) {
    throw InvalidParameter(std::string("merger ") + which + " spin must be 1 or -1 (got " +
                           std::to_string(g.spin) + ")");
  }
  if (g.n < 3) {
    throw InvalidParameter(std::string("merger ") + which +
                           " galaxy needs at least 3 particles (got " + std::to_string(g.n) + ")");
  }
}

}  // namespace

GalaxyParams scaledGalaxy(const GalaxyParams& g, double massRatio) {
  const double lengthScale = std::cbrt(massRatio);
  GalaxyParams s = g;
  s.diskMass *= massRatio;
  s.bulgeMass *= massRatio;
  s.haloMass *= massRatio;
  s.diskScaleLength *= lengthScale;
  s.diskScaleHeight *= lengthScale;
  s.bulgeScale *= lengthScale;
  s.haloScale *= lengthScale;
  s.haloCutoff *= lengthScale;
  s.haloTaper *= lengthScale;
  return s;
}

Particles makeGalaxyPair(const PairMember& primaryGalaxy, const PairMember& secondaryGalaxy,
                         const OrbitParams& orbitParams, std::uint64_t seed) {
  validateMember(primaryGalaxy, "primary");
  validateMember(secondaryGalaxy, "secondary");
  validateOrbit(orbitParams);
  const std::size_t n = primaryGalaxy.n + secondaryGalaxy.n;
  // The galaxy index picks disjoint random streams, so both may use the caller's seed.
  const Particles primary = makeGalaxy(primaryGalaxy.n, seed, primaryGalaxy.params, 0);
  const Particles secondary = makeGalaxy(secondaryGalaxy.n, seed, secondaryGalaxy.params, 1);

  Particles p;
  p.resize(n);
  const std::size_t split = primary.size();
  std::copy(primary.posMass.begin(), primary.posMass.end(), p.posMass.begin());
  std::copy(primary.vel.begin(), primary.vel.end(), p.vel.begin());
  std::copy(primary.tag.begin(), primary.tag.end(), p.tag.begin());
  std::copy(secondary.posMass.begin(), secondary.posMass.end(), p.posMass.begin() + split);
  std::copy(secondary.vel.begin(), secondary.vel.end(), p.vel.begin() + split);
  std::copy(secondary.tag.begin(), secondary.tag.end(), p.tag.begin() + split);

  // Turn a counter-rotating disk, tilt each disk, then put the pair on its orbit about their
  // common centre.
  if (primaryGalaxy.spin < 0) detail::reverseDisk(p, 0, split);
  if (secondaryGalaxy.spin < 0) detail::reverseDisk(p, split, n);
  detail::tilt(p, 0, split, primaryGalaxy.inclination, primaryGalaxy.node);
  detail::tilt(p, split, n, secondaryGalaxy.inclination, secondaryGalaxy.node);
  const double m1 = detail::centreOfMass(p, 0, split).mass;
  const double m2 = detail::centreOfMass(p, split, n).mass;
  const detail::RelativeOrbit orbit = detail::keplerAt(
      m1 + m2, orbitParams, detail::keplerStartAnomaly(orbitParams), orbitParams.separation);
  const double f1 = -m2 / (m1 + m2), f2 = m1 / (m1 + m2);
  detail::shift(p, 0, split, f1 * orbit.pos, f1 * orbit.vel);
  detail::shift(p, split, n, f2 * orbit.pos, f2 * orbit.vel);

  detail::recentre(p);
  detail::finalise(p);
  return p;
}

Particles makeMerger(std::size_t n, std::uint64_t seed, const MergerParams& m) {
  if (!(m.massRatio > 0.0 && m.massRatio <= 1.0)) {
    throw InvalidParameter("merger massRatio must be in (0, 1] (got " +
                           std::to_string(m.massRatio) + ")");
  }
  if (n < 6) {
    throw InvalidParameter("a merger needs at least 6 particles (got " + std::to_string(n) + ")");
  }
  const double q = m.massRatio;
  // Split by mass share, so that the particle masses of the two galaxies match.
  const auto share = static_cast<std::size_t>(std::llround(static_cast<double>(n) / (1.0 + q)));
  const std::size_t n1 = std::min(std::max<std::size_t>(share, 3), n - 3);
  return makeGalaxyPair({n1, m.galaxy, m.inclination1, 0.0, 1},
                        {n - n1, scaledGalaxy(m.galaxy, q), m.inclination2, 0.0, 1},
                        {m.pericentre, m.eccentricity, m.separation}, seed);
}

}  // namespace bhviz::sim
