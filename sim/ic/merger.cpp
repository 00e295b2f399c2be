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

using detail::Vec3d;

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
  if (g.n < 3) {
    throw InvalidParameter(std::string("merger ") + which +
                           " galaxy needs at least 3 particles (got " + std::to_string(g.n) + ")");
  }
}

struct RelativeOrbit {
  Vec3d pos;  ///< secondary − primary [length]
  Vec3d vel;  ///< [length/time]
};

/// A conic r = p/(1 + e cos θ), p = r_peri(1 + e), in the x–y plane, run counter-clockwise; the
/// start is at true anomaly θ < 0, i.e. before pericentre, so the galaxies approach.
RelativeOrbit keplerOrbit(double totalMass, const OrbitParams& o) {
  const double e = o.eccentricity;
  const double p = o.pericentre * (1.0 + e);
  // A circle (e = 0) has no pericentre to approach: start anywhere (θ = 0).
  const double cosTheta =
      e > 0.0 ? std::fmax(-1.0, std::fmin(1.0, (p / o.separation - 1.0) / e)) : 1.0;
  const double theta = -std::acos(cosTheta);
  const double c = std::cos(theta), s = std::sin(theta);
  const double vScale = std::sqrt(totalMass / p);
  const double vR = vScale * e * s, vTheta = vScale * (1.0 + e * c);  // vis-viva
  RelativeOrbit orbit;
  orbit.pos = {o.separation * c, o.separation * s, 0.0};
  orbit.vel = {vR * c - vTheta * s, vR * s + vTheta * c, 0.0};
  return orbit;
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

  // Tilt each disk, then put the pair on its orbit about their common centre.
  detail::tilt(p, 0, split, primaryGalaxy.inclination, primaryGalaxy.node);
  detail::tilt(p, split, n, secondaryGalaxy.inclination, secondaryGalaxy.node);
  const double m1 = detail::centreOfMass(p, 0, split).mass;
  const double m2 = detail::centreOfMass(p, split, n).mass;
  const RelativeOrbit orbit = keplerOrbit(m1 + m2, orbitParams);
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
  return makeGalaxyPair({n1, m.galaxy, m.inclination1, 0.0},
                        {n - n1, scaledGalaxy(m.galaxy, q), m.inclination2, 0.0},
                        {m.pericentre, m.eccentricity, m.separation}, seed);
}

}  // namespace bhviz::sim
